#pragma once
// The functions a query template may never call, kept as data in one place (denylist.cpp).
// Matching is on the normalised name: unquoted names are case-folded by the lexer, quoted and
// U&-escaped names are decoded, schema qualification is ignored, and the lookup folds ASCII case
// again so that a quoted "PG_SLEEP" is refused too. The server truncates names to 63 bytes; no
// entry is that long, so a truncated name matches an entry exactly when the full name does.

#include <span>
#include <string_view>

namespace mcpdb::postgres::guard {

enum class NameMatch { Exact, Prefix };

struct DeniedFunction {
  std::string_view name;  // lower case; for Prefix, every name starting with it
  NameMatch match;
  std::string_view reason;  // short and safe to show, e.g. "server file access"
};

// The whole denylist, in declaration order.
std::span<const DeniedFunction> deniedFunctions();

// The entry that denies a function name, or nullptr; name may be in any case.
const DeniedFunction* findDeniedFunction(std::string_view name);

}  // namespace mcpdb::postgres::guard
