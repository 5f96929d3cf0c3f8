#include "common/row_budget.hpp"

namespace mcpdb {

bool RowBudget::add(Json row) {
  if (truncated_) return false;
  if (rows_.size() >= max_rows_) {
    truncated_ = true;
    truncated_by_ = "max_rows";
    return false;
  }
  // Size as it will be serialised (compact), plus a separator.
  const std::uint64_t size = row.dump(-1, ' ', false, Json::error_handler_t::replace).size() + 1;
  if (bytes_ + size > max_bytes_) {
    truncated_ = true;
    truncated_by_ = "max_bytes";
    return false;
  }
  bytes_ += size;
  rows_.push_back(std::move(row));
  return true;
}

std::string RowBudget::note() const {
  if (!truncated_) return {};
  if (truncated_by_ == "max_bytes") {
    return "Result truncated at " + std::to_string(rows_.size()) +
           " rows: the next row would exceed the " + std::to_string(max_bytes_) +
           "-byte response cap (max_bytes). Narrow the request to see more.";
  }
  return "Result truncated at " + std::to_string(rows_.size()) +
         " rows (max_rows). Narrow the request or page with the cursor to see more.";
}

}  // namespace mcpdb
