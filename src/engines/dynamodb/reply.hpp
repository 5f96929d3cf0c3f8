#pragma once
// Non-throwing field access for DynamoDB replies: a reply is outside input, so a wrong type is a
// missing value, never an exception (tool handlers must not throw).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/json.hpp"

namespace mcpdb::dynamodb {

// The field when `obj` is an object holding `key`, else nullptr.
inline const Json* field(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

inline std::string stringField(const Json& obj, std::string_view key, std::string fallback = {}) {
  const Json* f = field(obj, key);
  return f != nullptr && f->is_string() ? f->get<std::string>() : std::move(fallback);
}

inline std::optional<std::uint64_t> uintField(const Json& obj, std::string_view key) {
  const Json* f = field(obj, key);
  if (f == nullptr) return std::nullopt;
  if (f->is_number_unsigned()) return f->get<std::uint64_t>();
  if (f->is_number_integer() && f->get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(f->get<std::int64_t>());
  return std::nullopt;
}

// The field if it is a non-empty object (LastEvaluatedKey, Item), else nullptr.
inline const Json* objectField(const Json& obj, std::string_view key) {
  const Json* f = field(obj, key);
  return f != nullptr && f->is_object() && !f->empty() ? f : nullptr;
}

inline const Json* arrayField(const Json& obj, std::string_view key) {
  const Json* f = field(obj, key);
  return f != nullptr && f->is_array() ? f : nullptr;
}

}  // namespace mcpdb::dynamodb
