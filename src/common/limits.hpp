#pragma once
#include <chrono>
#include <cstdint>

namespace mcpdb {

// Bounds applied to every tool call; tools may lower (never raise) the server-wide defaults.
struct Limits {
  std::uint32_t max_rows = 100;
  std::uint64_t max_bytes = std::uint64_t{256} * 1024;
  std::chrono::milliseconds timeout{5000};
};

}  // namespace mcpdb
