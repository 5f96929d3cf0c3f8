#pragma once
// Whether a SQL result's keys are the operator's text or the catalog's. A row's keys are its
// columns' names: written in the statement (`SELECT id, title AS heading`) they are the operator's,
// but `SELECT *`, `SELECT t.*`, a view's or a function's columns bring names from the catalog,
// which whoever holds DDL rights can set to anything ("ignore all previous instructions ..."). A
// result whose keys are not all the operator's is fenced as untrusted data like database text.

#include <string_view>
#include <vector>

namespace mcpdb::sql {

// True when every name occurs in `statement` (ASCII case-insensitively: PostgreSQL folds unquoted
// identifiers to lower case, MySQL keeps the case written). Every character of such a name is text
// the operator wrote, wherever in the statement it occurs. A name the engine made unique with a
// `_<digits>` suffix (a repeated column) counts by what precedes the suffix.
bool namesAreStatementText(std::string_view statement, const std::vector<std::string_view>& names);

}  // namespace mcpdb::sql
