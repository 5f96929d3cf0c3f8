#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>

namespace mcpdb {

// Bounds applied to every tool call; tools may lower (never raise) the server-wide defaults.
struct Limits {
  std::uint32_t max_rows = 100;
  std::uint64_t max_bytes = std::uint64_t{256} * 1024;
  std::chrono::milliseconds timeout{5000};
};

// The tighter of two sets of limits, field by field: what a call may use when a tool's (or the
// call's) and a target's limits both apply. The one place limits are combined.
inline Limits narrowed(const Limits& a, const Limits& b) {
  Limits out;
  out.max_rows = std::min(a.max_rows, b.max_rows);
  out.max_bytes = std::min(a.max_bytes, b.max_bytes);
  out.timeout = std::min(a.timeout, b.timeout);
  return out;
}

}  // namespace mcpdb
