#pragma once
// Latency summary shared by the bench tools (mcpdb-loadgen, mcpdb-pgfloor): nanosecond samples in,
// microseconds out, nearest-rank percentiles.
#include <algorithm>
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace mcpdb::bench {

// Sorts `ns` in place; {} when empty, else min/p50/p90/p99/max/mean in µs and the count n.
inline nlohmann::json summarize(std::vector<long long>& ns) {
  if (ns.empty()) return nlohmann::json::object();
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    const auto idx = static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1) + 0.5);
    return static_cast<double>(ns[std::min(idx, ns.size() - 1)]) / 1000.0;
  };
  long double sum = 0;
  for (auto v : ns) sum += static_cast<long double>(v);
  return {{"min", at(0)},
          {"p50", at(0.5)},
          {"p90", at(0.9)},
          {"p99", at(0.99)},
          {"max", at(1.0)},
          {"mean", static_cast<double>(sum / static_cast<long double>(ns.size())) / 1000.0},
          {"n", ns.size()}};
}

}  // namespace mcpdb::bench
