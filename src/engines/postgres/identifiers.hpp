#pragma once
// SQL identifiers that come from the operator's config (never from tool arguments): validated
// strictly (lower-case unquoted-identifier syntax, so quoting does not change their meaning) and
// then always emitted quoted.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpdb::postgres {

// [a-z_][a-z0-9_]* and at most 63 bytes (NAMEDATALEN - 1).
bool isSafeIdentifier(std::string_view name);

// "name" with embedded double quotes doubled (only ever called on validated names).
std::string quoteIdentifier(std::string_view name);

// "table" or "schema.table", each part a safe identifier; nullopt otherwise.
std::optional<std::vector<std::string>> parseQualifiedName(std::string_view name);

// "schema"."table"
std::string quoteQualified(const std::vector<std::string>& parts);

}  // namespace mcpdb::postgres
