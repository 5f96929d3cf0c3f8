#pragma once
// Integers in agent arguments, read the way the schema check reads them. JSON has one number type:
// JSON Schema's "integer" is any number with no fractional part, so `1.0` is an integer and `1.5`
// is not. Every handler that takes an integer reads it through these two functions, so a value
// the schema accepted is never silently ignored or refused later (DynamoDB's scan read only
// JSON integers: `limit: 1.0` became the default).

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "common/json.hpp"

namespace mcpdb {

// Largest magnitude at which every integral double is exact (2^53): beyond it `1e300` would pass
// as an "integer" nobody typed.
inline constexpr double kMaxExactIntegralDouble = 9007199254740992.0;

// True when `v` is an integer as the schema check counts one: a JSON integer (any width), or a
// finite float with no fractional part and magnitude below 2^53.
inline bool isIntegral(const Json& v) {
  if (v.is_number_integer()) return true;  // signed and unsigned
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < kMaxExactIntegralDouble;
}

// The value of an integral argument as a signed 64-bit integer; nullopt when `v` is not integral
// (1.5, "1", true) or is an unsigned JSON integer above INT64_MAX.
inline std::optional<std::int64_t> integerValue(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (!isIntegral(v)) return std::nullopt;
  return static_cast<std::int64_t>(v.get<double>());
}

}  // namespace mcpdb
