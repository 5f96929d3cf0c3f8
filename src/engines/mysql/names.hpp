#pragma once
// Every name through which a MySQL / MariaDB statement may reach a view or a stored routine,
// whatever its position. The server runs a view or a function wherever its name appears: after
// FROM, but also inside parentheses, after a comma that follows JOIN ... ON or USING (...), after
// an index hint, inside an ODBC {OJ ...} escape, in a derived table or a subquery. A scanner that
// expects a table name only where a table is usually written misses some of those, so this one
// does not parse at all: it lists every identifier of the token stream (lexer.hpp) as a name in
// the statement's default schema, and every `a.b` as schema a, object b. That over-approximates
// (columns and aliases are listed too, and are simply not found among the views and routines);
// it cannot miss a name the server would resolve, since the server resolves only identifiers.
//
// Unquoted words reserved in both MySQL 8 and MariaDB (SELECT, FROM, JOIN...) are left out: they
// cannot name an object unless backquoted, and a backquoted one is kept.

#include <string>
#include <string_view>
#include <vector>

#include "engines/mysql/guard.hpp"

namespace mcpdb::mysql::guard {

struct NameCandidates {
  std::vector<Name> names;  // {schema, object}, each once, in first-seen order
  bool complete = true;     // false when the text did not lex to the end (then refuse it)
};

// The candidates of `sql`; an unqualified identifier is taken in `default_schema`.
NameCandidates collectNames(std::string_view sql, std::string_view default_schema);

// Whether an unquoted word is reserved in both servers (any case), so it never names an object.
bool isReservedEverywhere(std::string_view word);

}  // namespace mcpdb::mysql::guard
