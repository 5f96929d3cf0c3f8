#include "common/row_budget.hpp"

#include <algorithm>

#include "common/json_text.hpp"

namespace mcpdb {

std::size_t serializedSize(const Json& v) {
  return jsonTextSize(v);
}

bool RowBudget::admits(std::uint64_t lower_bound) {
  if (truncated_) return false;
  if (rows_.size() >= max_rows_) {
    truncated_ = true;
    truncated_by_ = "max_rows";
    return false;
  }
  if (lower_bound > max_bytes_ - std::min(bytes_, max_bytes_)) {
    truncated_ = true;
    truncated_by_ = "max_bytes";
    return false;
  }
  return true;
}

bool RowBudget::add(Json row) {
  if (truncated_) return false;
  if (rows_.size() >= max_rows_) {
    truncated_ = true;
    truncated_by_ = "max_rows";
    return false;
  }
  // Size as it will be serialised (compact), plus a separator.
  const std::uint64_t size = serializedSize(row) + 1;
  if (bytes_ + size > max_bytes_) {
    truncated_ = true;
    truncated_by_ = "max_bytes";
    return false;
  }
  bytes_ += size;
  rows_.push_back(std::move(row));
  return true;
}

std::string truncationNote(std::uint64_t rows, bool by_bytes, std::uint64_t max_bytes) {
  if (by_bytes) {
    return "Result truncated at " + std::to_string(rows) + " rows: the next row would exceed the " +
           std::to_string(max_bytes) +
           "-byte response cap (max_bytes). Narrow the request to see more.";
  }
  return "Result truncated at " + std::to_string(rows) +
         " rows (max_rows). Narrow the request or page with the cursor to see more.";
}

std::string RowBudget::note() const {
  if (!truncated_) return {};
  return truncationNote(rows_.size(), truncated_by_ == "max_bytes", max_bytes_);
}

}  // namespace mcpdb
