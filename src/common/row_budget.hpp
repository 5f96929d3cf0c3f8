#pragma once
// Shared by every engine: accumulates result rows until the row or byte cap is reached, so that
// truncation is decided in one place and always reported (never silent).
#include <cstdint>
#include <string>

#include "common/json.hpp"
#include "common/limits.hpp"

namespace mcpdb {

// The exact size of v.dump(-1, ' ', false, replace), found with the library's own serializer
// (same escaping, number formatting and UTF-8 replacement) but without building the string.
std::size_t serializedSize(const Json& v);

// The standard result note of a truncated result, e.g. "Result truncated at 100 rows (max_rows)."
std::string truncationNote(std::uint64_t rows, bool by_bytes, std::uint64_t max_bytes);

class RowBudget {
 public:
  explicit RowBudget(const Limits& limits)
      : max_rows_(limits.max_rows), max_bytes_(limits.max_bytes) {}

  // Adds a row if it fits; returns false (and marks truncation) when a cap is reached.
  // Callers stop fetching as soon as this returns false.
  bool add(Json row);
  // Before a row is converted: false (and truncation marked, as add() would) when a row whose
  // serialised size is at least `lower_bound` bytes cannot fit. Engines call it with a bound they
  // can read off the driver's raw row (its length over a small factor), so that a row far over
  // the cap is never converted: one call's memory stays within the raw row plus a constant
  // multiple of the cap, however large the row.
  bool admits(std::uint64_t lower_bound);
  // Marks truncation because the source had more rows than were fetched.
  void markMore() {
    truncated_ = true;
    truncated_by_ = truncated_by_.empty() ? "max_rows" : truncated_by_;
  }

  bool truncated() const { return truncated_; }
  std::uint64_t rows() const { return rows_.size(); }
  std::uint64_t bytes() const { return bytes_; }
  Json takeRows() { return std::move(rows_); }
  // The standard result note, e.g. "Result truncated at 100 rows (max_rows)."; empty when complete.
  std::string note() const;

 private:
  std::uint32_t max_rows_;
  std::uint64_t max_bytes_;
  std::uint64_t bytes_ = 0;
  bool truncated_ = false;
  std::string truncated_by_;
  Json rows_ = Json::array();
};

}  // namespace mcpdb
