#pragma once
// Readiness (/readyz): whether every source the served tools read answered a cheap probe recently
// and the start-up self-check found no write path. Asking never waits for a database: an answer
// is read from the last probes, and asking only wakes a source's prober when its last probe is
// older than the interval. So a flood of /readyz costs each source at most one probe per
// interval, and a source that stops answering makes the answer "not ready" once its probe has
// been out for longer than the timeout, whatever the driver does meanwhile.

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.hpp"

namespace mcpdb::observe {

using ProbeFn =
    std::function<Status(std::chrono::steady_clock::time_point deadline, const std::stop_token&)>;

// One source to probe: an engine's source and its round trip (engines::SourceProbe).
struct ReadinessTarget {
  std::string engine;
  std::string source;
  ProbeFn probe;
};

// The start-up self-check as readiness sees it: not run yet (not ready), ran and found no write
// path (a check it could not make included: that is a warning in the log, not a write path), ran
// and found one (not ready), or off (server.self_check: off: reachability alone decides).
enum class SelfCheckState { Pending, Passed, Failed, Off };
std::string_view selfCheckName(SelfCheckState state);

// Fixed, documented timings (SECURITY.md, "The operations listener").
struct ReadinessTimes {
  std::chrono::milliseconds interval{2000};  // a source is probed at most this often
  std::chrono::milliseconds timeout{2000};   // a probe's deadline; one out longer: not ready
  std::chrono::milliseconds fresh{30000};    // a success counts this long without a new probe
};

struct SourceReadiness {
  std::string engine;
  std::string source;
  bool ready = false;
};

struct ReadinessReport {
  bool ready = false;
  std::size_t sources_ready = 0;
  std::size_t sources_total = 0;
  SelfCheckState self_check = SelfCheckState::Pending;
  std::vector<SourceReadiness> sources;  // in the order of the targets
};

class Readiness {
 public:
  using Clock = std::chrono::steady_clock;

  Readiness(std::vector<ReadinessTarget> targets, SelfCheckState self_check,
            ReadinessTimes times = {});
  // Stops the probers (a probe in flight is asked to stop through its stop token) and joins them.
  ~Readiness();
  Readiness(const Readiness&) = delete;
  Readiness& operator=(const Readiness&) = delete;

  // Published once by the self-check's thread (app/readiness.hpp).
  void setSelfCheck(SelfCheckState state);
  // The state now, from the last probes; never waits for one. Wakes the prober of each source
  // whose last probe started at least `interval` ago and is not still out.
  ReadinessReport report();
  // Probes started so far, over every source (tests, the metrics).
  std::uint64_t probesStarted() const;

 private:
  struct Source {
    ReadinessTarget target;
    std::mutex mu;
    std::condition_variable_any wake;
    bool wanted = false;
    bool in_flight = false;
    bool ok = false;  // the last probe that ended succeeded
    bool probed = false;
    Clock::time_point started{};  // of the last probe
    Clock::time_point ended{};    // of the last probe that ended
    std::jthread thread;          // last: stops and joins first
  };
  void probeLoop(Source& s, const std::stop_token& stop);
  // Whether `s` counts as ready at `now`, and asks for its next probe when due; under s.mu.
  bool judge(Source& s, Clock::time_point now);

  ReadinessTimes times_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::atomic<SelfCheckState> self_check_;
  std::atomic<std::uint64_t> probes_{0};
};

}  // namespace mcpdb::observe
