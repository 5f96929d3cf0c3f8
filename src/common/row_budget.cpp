#include "common/row_budget.hpp"

#include <algorithm>
#include <charconv>

#include "common/json_escape.hpp"

namespace mcpdb {
namespace {

// Counts the bytes the serializer writes instead of storing them.
struct CountingOutput : nlohmann::detail::output_adapter_protocol<char> {
  std::size_t bytes = 0;
  void write_character(char /*c*/) override { ++bytes; }
  void write_characters(const char* /*s*/, std::size_t length) override { bytes += length; }
};

// The library's own count: exact for anything (number formatting, UTF-8 replacement).
std::size_t librarySize(const Json& v) {
  thread_local const auto out = std::make_shared<CountingOutput>();
  thread_local nlohmann::detail::serializer<Json> serializer(out, ' ',
                                                             Json::error_handler_t::replace);
  out->bytes = 0;
  serializer.dump(v, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
  return out->bytes;
}

// A string literal's size: counted here when ASCII (what the library writes for it is fixed: the
// escapes of json_escape.hpp), by the library otherwise (invalid UTF-8 is replaced).
std::size_t stringSize(std::string_view s, const Json* node) {
  if (isAscii(s)) return s.size() + jsonEscapeGrowth(s) + 2;
  return librarySize(node != nullptr ? *node : Json(std::string(s)));
}

}  // namespace

// A walk of the value that counts strings, containers and integers itself (a row is mostly
// strings: this is several times faster than running the serializer) and leaves floating-point
// numbers, non-ASCII strings and binary values to the library, so the count stays exact.
std::size_t serializedSize(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return 4;
    case Json::value_t::boolean: return v.get<bool>() ? 4 : 5;
    case Json::value_t::string: return stringSize(v.get_ref<const std::string&>(), &v);
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      char digits[24];
      const auto r = v.is_number_unsigned()
                         ? std::to_chars(digits, digits + sizeof digits, v.get<std::uint64_t>())
                         : std::to_chars(digits, digits + sizeof digits, v.get<std::int64_t>());
      return static_cast<std::size_t>(r.ptr - digits);
    }
    case Json::value_t::array: {
      std::size_t n = 2 + (v.empty() ? 0 : v.size() - 1);
      for (const auto& e : v) n += serializedSize(e);
      return n;
    }
    case Json::value_t::object: {
      std::size_t n = 2 + (v.empty() ? 0 : v.size() - 1);
      for (auto it = v.begin(); it != v.end(); ++it)
        n += stringSize(it.key(), nullptr) + 1 + serializedSize(it.value());
      return n;
    }
    default: return librarySize(v);  // floating point, binary, discarded
  }
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
