#pragma once
// Prometheus metrics in the text exposition format (version 0.0.4), written by hand: Debian's
// prometheus-cpp-dev drags in civetweb (a second HTTP server we would not use) for what is a
// few counters, gauges and histograms rendered as text.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "protocol/session.hpp"

namespace mcpdb::observe {

class Metrics : public protocol::CallObserver {
 public:
  // Latency histogram upper bounds, seconds.
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.25,   0.5,   1.0,  2.5,   10.0};

  void onCall(const protocol::CallRecord& record) override;
  // A request refused at the HTTP layer (reason as in the audit log).
  void onRefused(std::string_view client, std::string_view reason);
  void onHttpResponse(int status);
  void callsStarted(std::int64_t n) { in_flight_ += n; }
  void callsFinished(std::int64_t n) { in_flight_ -= n; }
  void setSessions(std::int64_t n) { sessions_ = n; }
  // Extra gauges sampled at render time (e.g. worker pool size).
  using SourceValues = std::vector<std::pair<std::string, double>>;
  // `by_source`, when set, is rendered as its own family <name>_by_source{source="..."} (its
  // sum is the total, so the two never share a family a query would sum twice).
  void addGauge(std::string name, std::string help, std::function<double()> sample,
                std::function<SourceValues()> by_source = {});

  // A counter sampled at render time (its owner keeps the count, e.g. the shared limits'
  // fallbacks).
  void addCounter(std::string name, std::string help, std::function<double()> sample);

  // The exposition text (Content-Type: text/plain; version=0.0.4).
  std::string render() const;

  // Escapes a label value per the exposition format (\\, \", \n).
  static std::string escapeLabel(std::string_view v);

 private:
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> counts{};  // non-cumulative per bucket
    std::uint64_t count = 0;
    double sum = 0;
  };
  using ToolKey = std::pair<std::string, std::string>;                   // tool, engine
  using OutcomeKey = std::tuple<std::string, std::string, std::string>;  // tool, engine, outcome
  struct Gauge {
    std::string help;
    std::function<double()> sample;
    std::function<SourceValues()> by_source;
    bool counter = false;
  };

  mutable std::mutex mu_;
  std::map<OutcomeKey, std::uint64_t> calls_;
  std::map<ToolKey, Histogram> latency_;
  std::map<ToolKey, std::uint64_t> rows_;
  std::map<ToolKey, std::uint64_t> bytes_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> refusals_;  // client, reason
  std::map<int, std::uint64_t> http_responses_;
  std::map<std::string, Gauge> gauges_;
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<std::int64_t> sessions_{0};
};

}  // namespace mcpdb::observe
