#pragma once
// The SQL guardrail: re-validates an operator-written PostgreSQL query template before every
// execution. Defence in depth only: the READ ONLY transaction and, above all, the database role are
// the real boundary. The engine must also run with standard_conforming_strings = on and
// client_encoding = UTF8, which is what the lexer assumes (the other setting is checked too,
// below).
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

namespace mcpdb::guard {

// Why a template is refused; ruleId() is the stable machine id (logs, golden tests, metrics).
enum class Rule {
  None,      // ""                     allowed
  LexError,  // "lex_error"            unterminated literal/comment, bad escape, invalid UTF-8,
             // stray byte
  Empty,     // "empty"                no statement at all
  MultipleStatements,  // "multiple_statements"  anything but comments after the first `;`
  NotSelect,           // "not_select"           the statement does not start with SELECT or WITH
  DataModifyingCte,    // "data_modifying_cte"   INSERT/UPDATE/DELETE/MERGE in a WITH statement
  ForbiddenKeyword,    // "forbidden_keyword"    a write, DDL or utility keyword anywhere (unquoted)
  SelectInto,          // "select_into"          SELECT ... INTO creates a table
  LockingClause,       // "locking_clause"       FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE
  DeniedFunction,      // "denied_function"      a call to a function on the denylist
  PlaceholderGap,      // "placeholder_gap"      placeholders are not exactly $1..$N
  PlaceholderRange,    // "placeholder_range"    $0, or a number above kMaxPlaceholder
  AmbiguousString,  // "ambiguous_string"     tokens would differ with standard_conforming_strings
                    // off
};

// The stable snake_case id of a rule ("" for Rule::None).
std::string_view ruleId(Rule rule);

// The extended protocol binds at most 65535 parameters.
inline constexpr std::uint32_t kMaxPlaceholder = 65535;

struct Verdict {
  bool allowed = false;
  Rule rule = Rule::None;  // Rule::None exactly when allowed
  std::string message;     // safe to show: names at most a keyword or denylist entry
  std::vector<std::uint32_t> placeholders;  // distinct $n used, ascending ({1..N} when allowed)
};

// Checks one template. Never throws on any input; linear in the template's length.
Verdict checkTemplate(std::string_view sql);

// Ok when allowed, else PermissionDenied naming the rule and the safe message.
Status toStatus(const Verdict& verdict);

}  // namespace mcpdb::guard
