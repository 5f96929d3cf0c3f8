#pragma once
// The statement guard: PostgreSQL's own grammar (libpg_query, the PostgreSQL 15 parser as a
// library) decides what an operator-written statement is. Nothing here is hand-written grammar: the
// parser gives the tree, and this file only judges its shape and collects what it names.
//
// A template is allowed when it is exactly one SELECT (every CTE a SELECT, no SELECT ... INTO, no
// locking clause), calls nothing on the denylist, and numbers its placeholders $1..$N. The tree
// walk also collects every name the statement reaches (functions, operators, relations, types):
// the catalog proof (catalog_proof.hpp) resolves them against the live database. The same walk
// judges view definitions and SQL function bodies read from the catalog (analyseBody).
//
// The session must parse as this parser does: standard_conforming_strings = on and UTF8, which
// every pooled connection sets and verifies (pool.cpp).
//
// Usage:
//   guard::Verdict v = guard::checkTemplate(sql);
//   if (!v.allowed) return guard::toStatus(v);   // PermissionDenied, message safe to show
//   // v.placeholders is {1..N}: compare N with the declared parameters.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace mcpdb::postgres::guard {

// Why a template is refused; ruleId() is the stable machine id (logs, golden tests, metrics).
enum class Rule {
  None,                // ""                     allowed
  ParseError,          // "parse_error"          PostgreSQL's grammar rejects the text
  TooLong,             // "too_long"             longer than kMaxTemplateBytes
  Empty,               // "empty"                no statement at all
  MultipleStatements,  // "multiple_statements"  more than one statement
  NotSelect,           // "not_select"           the statement is not a SELECT
  DataModifyingCte,    // "data_modifying_cte"   INSERT/UPDATE/DELETE/MERGE inside a SELECT
  SelectInto,          // "select_into"          SELECT ... INTO creates a table
  LockingClause,       // "locking_clause"       FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE
  DeniedFunction,      // "denied_function"      a call to a function on the denylist
  PlaceholderGap,      // "placeholder_gap"      placeholders are not exactly $1..$N
  PlaceholderRange,    // "placeholder_range"    $0, or a number above kMaxPlaceholder
};
inline constexpr Rule kLastRule = Rule::PlaceholderRange;

// The stable snake_case id of a rule ("" for Rule::None).
std::string_view ruleId(Rule rule);

// The extended protocol binds at most 65535 parameters.
inline constexpr std::uint32_t kMaxPlaceholder = 65535;
// A configured statement longer than this is refused before parsing. It bounds the parse tree's
// depth (about one level per two bytes in the worst case) and so the parser's stack use.
inline constexpr std::size_t kMaxTemplateBytes = 64 * 1024;
// Catalog text (view definitions, SQL function bodies) may be longer than a template.
inline constexpr std::size_t kMaxBodyBytes = 128 * 1024;

// A name as the statement wrote it, parts decoded by the parser (unquoted names folded to lower
// case, quoted and U&"..." names exact): {"f"}, {"schema", "f"}, {"db", "schema", "f"}.
using Name = std::vector<std::string>;

// Every name a statement reaches, each listed once, in first-seen order.
struct References {
  std::vector<Name> functions;  // function calls, aggregates, window and table functions
  // Names that may be a function called in attribute notation: `t.f` means `f(t)` when the row
  // type of t has no column f. Only one-argument functions can match.
  std::vector<Name> attribute_functions;
  std::vector<Name> operators;  // binary/unary operators, ANY/ALL, IN, LIKE, BETWEEN, CASE, ...
  std::vector<Name> relations;  // FROM items (a CTE's name too: resolving it finds nothing or more)
  std::vector<Name> types;      // explicit casts and typed literals
  std::vector<Name> tablesample;  // TABLESAMPLE methods (their handler functions)
};

struct Verdict {
  bool allowed = false;
  Rule rule = Rule::None;  // Rule::None exactly when allowed
  std::string message;     // safe to show: names at most a statement kind or a denylist entry
  std::string detail;      // for the operator only (may quote the text): the parser's own words
  int line = 0;            // where the parser stopped (1-based), 0 when not a parse error
  int column = 0;
  std::vector<std::uint32_t> placeholders;  // distinct $n used, ascending ({1..N} when allowed)
  References references;                    // filled when the text parses
};

// Checks one template. Never throws on any input; refuses text over kMaxTemplateBytes unparsed.
Verdict checkTemplate(std::string_view sql);

// What a catalog body is: a view's definition (one SELECT) or a SQL function's body (statements,
// each of which must be a SELECT for the function to be read-only). Placeholders are the
// function's arguments and need not be contiguous.
enum class BodyKind { View, SqlFunction, AtomicFunction, Expression };

// Judges catalog text with the same rules as a template, except placeholders (and, for
// SqlFunction, several statements, and an empty body). AtomicFunction is a whole CREATE FUNCTION
// ... BEGIN ATOMIC ... END (pg_get_functiondef): its body's statements are judged. Expression wraps
// an expression (an RLS policy's or a domain check's) as `SELECT <expr>`.
Verdict analyseBody(std::string_view text, BodyKind kind);

// Ok when allowed, else PermissionDenied naming the rule and the safe message (detail kept for the
// operator).
Status toStatus(const Verdict& verdict);

// "a.b.c" with each part quoted where PostgreSQL would need it: for messages and fixes.
std::string displayName(const Name& name);

}  // namespace mcpdb::postgres::guard
