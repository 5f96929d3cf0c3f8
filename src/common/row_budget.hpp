#pragma once
// Shared by every engine: accumulates result rows until the row or byte cap is reached, so that
// truncation is decided in one place and always reported (never silent).
#include <cstdint>
#include <string>

#include "common/json.hpp"
#include "common/limits.hpp"

namespace mcpdb {

class RowBudget {
 public:
  explicit RowBudget(const Limits& limits)
      : max_rows_(limits.max_rows), max_bytes_(limits.max_bytes) {}

  // Adds a row if it fits; returns false (and marks truncation) when a cap is reached.
  // Callers stop fetching as soon as this returns false.
  bool add(Json row);
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
