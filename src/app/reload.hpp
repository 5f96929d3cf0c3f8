#pragma once
// Config reload without dropping calls (SIGHUP, or server.watch_config). The whole file is read
// once and assembled as at start-up (app/app.hpp assemble(): every section, the guard, scope
// checks), refused by the same rules `serve` refuses to start with, checked by the same start-up
// checks, then published to the core in one atomic swap (ServerCore::replaceTools). Calls in
// flight finish on the surface they started on, which holds the assembly they came from. An
// engine whose inputs are unchanged keeps its runtime (pools, proofs); a changed engine gets a new
// one and its old pools close when their last call ends. A refused config changes nothing.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "app/app.hpp"
#include "observe/metrics.hpp"
#include "protocol/server_core.hpp"

namespace mcpdb::app {

// The settings a reload leaves as they are (they need a restart), by config name, among those
// whose value differs between the two documents: server.workers, ..., http.<key> except the
// client keys, audit. Documented in the README ("Reloading the configuration").
std::vector<std::string> restartOnlyChanges(const YAML::Node& before, const YAML::Node& after);

// Whether engine `engine`'s tools may be kept as they run: its section, `limits` and `embedding`
// are the same (the inputs its tools and runtimes are made from; the environment never changes).
bool engineUnchanged(const YAML::Node& before, const YAML::Node& after, std::string_view engine);

// What changed between two registries, as clients see it (tools/list, resources/list).
struct ListChanges {
  bool tools = false;
  bool resources = false;
};
ListChanges listChanges(const protocol::ToolRegistry& before, const protocol::ToolRegistry& after);

// A file's size, modification time and SHA-256 of its bytes, as read at once; ok false when it
// cannot be read.
struct FileStamp {
  bool ok = false;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string digest;  // 32 raw bytes
  bool operator==(const FileStamp&) const = default;
};
// Reads `path` (at most kMaxConfigBytes) into `text` when given.
FileStamp stampOf(const std::string& path, std::string* text = nullptr);
inline constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{16} << 20;

class Reloader {
 public:
  struct Hooks {
    // The start-up checks on the new assembly (serve.cpp's): false refuses it. Work they leave
    // running (the warn-mode self-check) goes to `background`, ended before the next swap.
    std::function<bool(Assembly& next, std::shared_ptr<void>& background)> check;
    // Applies what the core does not hold (HTTP: clients, their sessions, readiness, gauges),
    // after the core's swap.
    std::function<void(Assembly& next, const Assembly& previous)> apply;
    // Tells clients what changed (notifications/*/list_changed).
    std::function<void(ListChanges)> notify;
  };
  struct Settings {
    bool watch = false;                            // server.watch_config
    std::chrono::milliseconds poll{1000};          // how often the file is looked at
    std::chrono::milliseconds min_interval{1000};  // between two reloads (a storm coalesces)
  };
  enum class Outcome { Applied, Refused, Skipped };

  // `current` is the assembly the server started with (and `background` its check's work).
  Reloader(AppOptions options, const Env& env, protocol::ServerCore& core,
           std::shared_ptr<Assembly> current, std::shared_ptr<void> background, Hooks hooks,
           Settings settings);
  ~Reloader();
  Reloader(const Reloader&) = delete;
  Reloader& operator=(const Reloader&) = delete;

  // Asks for a reload (SIGHUP): returns at once. Requests made while one runs or waits make one
  // more reload after it, never more (a storm of signals costs at most two).
  void request();
  // Reloads now, on the calling thread (tests, and the reload thread).
  Outcome reloadNow(std::string_view why);
  // Sets the apply hook (the HTTP server exists only once it listens; null before it stops).
  void setApply(std::function<void(Assembly& next, const Assembly& previous)> apply);
  // The counters and the generation, as metrics (mcpdb_config_reloads_total, ...).
  void addMetrics(observe::Metrics& metrics);

  std::shared_ptr<Assembly> current() const;
  std::uint64_t appliedCount() const { return applied_.load(); }
  std::uint64_t refusedCount() const { return refused_.load(); }
  // What the last refused reload logged (its problems, then the reason); empty before one.
  std::string lastRefusal() const;

 private:
  void run();
  // Whether the watched file has changed and settled since the last look.
  bool fileSettledAndChanged();

  AppOptions options_;
  const Env& env_;
  protocol::ServerCore& core_;
  Hooks hooks_;
  Settings settings_;

  std::mutex reload_mu_;  // one reload at a time; the generation below
  std::shared_ptr<Assembly> current_;
  std::shared_ptr<void> background_;
  FileStamp last_seen_;     // the watch's last look
  FileStamp last_applied_;  // the file as the running config was read from it

  mutable std::mutex mu_;  // the request flag, the thread's wake-up, current_ for readers
  std::condition_variable cv_;
  bool pending_ = false;
  bool stopping_ = false;
  std::string last_refusal_;
  std::atomic<std::uint64_t> applied_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> generation_{1};
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace mcpdb::app
