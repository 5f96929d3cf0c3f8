#pragma once
// The MySQL / MariaDB statement guard. No Debian library parses MySQL's grammar, so this one is
// hand-written and deliberately strict: it tokenises the text exactly (lexer.hpp), then judges
// the token stream by shape. It accepts plain reads and refuses whatever it cannot judge.
//
// Templates run as server-side prepared statements inside START TRANSACTION READ ONLY, which does
// not stop a SELECT from writing a file (INTO OUTFILE), setting a session variable (@x := 1,
// SET_VAR hints), taking a lock (FOR UPDATE, GET_LOCK), stalling the connection (SLEEP) or calling
// a stored function that writes (MySQL does not enforce READS SQL DATA). So a template is allowed
// only when it is exactly one SELECT (or WITH ... SELECT, or a parenthesised SELECT) with no INTO,
// no locking clause, no user or system variable, no executable comment or optimizer hint, no
// text whose meaning depends on sql_mode, and no call to a denylisted function. Calls to functions
// that are not known built-ins are allowed here but listed in Verdict::called_functions: the
// engine refuses them unless allowlisted by name or their body passes checkRoutineBody.
// Relations are listed best effort; a view can call a stored function too, so the engine should
// judge the definitions of the views a template reads (checkTemplate on VIEW_DEFINITION).
//
// Usage:
//   guard::Verdict v = guard::checkTemplate(sql, guard::Dialect::Mariadb);
//   if (!v.allowed) return guard::toStatus(v);  // PermissionDenied, message safe to show
//   // v.placeholders: how many ? to bind; v.called_functions: stored functions to vet.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace mcpdb::mysql::guard {

// Why a template is refused; ruleId() is the stable machine id (logs, golden tests, metrics).
enum class Rule {
  None,                // ""                     allowed
  ParseError,          // "parse_error"          unterminated literal/comment, stray byte, bad ()
  TooLong,             // "too_long"             longer than kMaxTemplateBytes
  TooDeep,             // "too_deep"             parentheses nested deeper than kMaxDepth
  Empty,               // "empty"                no statement at all
  MultipleStatements,  // "multiple_statements"  anything after a ';'
  NotSelect,           // "not_select"           not a SELECT (UPDATE, SHOW, TABLE, VALUES, ...)
  SelectInto,          // "select_into"          INTO OUTFILE / DUMPFILE / @var / var
  LockingClause,       // "locking_clause"       FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE
  DeniedFunction,      // "denied_function"      a call to a function on the denylist
  Variable,            // "variable"             @x, @@x or := (state kept between calls)
  ExecutableComment,   // "executable_comment"   /*! ... */ or /*M! ... */ (the server runs it)
  OptimizerHint,       // "optimizer_hint"       /*+ ... */ (SET_VAR changes the session)
  AmbiguousQuoting,    // "ambiguous_quoting"    "..." or a backslash escape: depends on sql_mode
  AmbiguousComment,    // "ambiguous_comment"    /* nested in a comment, \r in a line comment
  RoutineStatement,    // "routine_statement"    a function body statement that cannot be judged
};
inline constexpr Rule kLastRule = Rule::RoutineStatement;

// The stable snake_case id of a rule ("" for Rule::None).
std::string_view ruleId(Rule rule);

// A configured statement longer than this is refused before it is read.
inline constexpr std::size_t kMaxTemplateBytes = std::size_t{64} * 1024;
// A stored function's body (information_schema.ROUTINES.ROUTINE_DEFINITION) may be longer.
inline constexpr std::size_t kMaxBodyBytes = std::size_t{128} * 1024;
// Parentheses nested deeper than this are refused (no read needs it; it bounds the server's
// parser stack as well as ours).
inline constexpr int kMaxDepth = 64;

// A name as the statement wrote it, backquotes removed: {"f"}, {"db", "f"}. In called_functions
// the function's own part is folded to lower case (routine names are case-insensitive).
using Name = std::vector<std::string>;

struct Verdict {
  bool allowed = false;
  Rule rule = Rule::None;  // Rule::None exactly when allowed
  std::string message;     // safe to show: a fixed text, a denylist entry, a line and column
  std::string detail;      // for the operator only: a short excerpt of the template
  int line = 0;            // where the refused construct starts (1-based), 0 when not known
  int column = 0;          // 1-based, in bytes
  std::uint32_t placeholders = 0;      // how many ? the statement binds
  std::vector<Name> called_functions;  // calls that are not known built-ins, first-seen order
  std::vector<Name> relations;         // best effort: names after FROM / JOIN / ',' in FROM
};

// Which server the statement will run on. Functions built into only one of MySQL 8 and
// MariaDB 10.11 count as built-in only for that one; Either trusts only names both have.
enum class Dialect { Either, Mysql, Mariadb };

// Judges one template. Never throws on any input.
Verdict checkTemplate(std::string_view sql, Dialect dialect = Dialect::Either);

// Judges a stored function's body (ROUTINE_DEFINITION): allowed only when it is `RETURN <expr>`
// or `BEGIN ... END` holding nothing but DECLARE of plain local variables, SET of those locals,
// RETURN and SELECT (without INTO). Expressions are judged as in a template; called_functions
// lists the functions the body calls in turn.
Verdict checkRoutineBody(std::string_view body, Dialect dialect = Dialect::Either);

// Ok when allowed, else PermissionDenied naming the rule and the safe message (detail kept for
// the operator).
Status toStatus(const Verdict& verdict);

// The denylist: a lower-case name (or prefix) and the short reason shown when it is refused.
struct DeniedFunction {
  std::string_view name;
  bool prefix;  // every name starting with `name`
  std::string_view reason;
};

// The entry that denies a function name (any case), or nullptr.
const DeniedFunction* findDeniedFunction(std::string_view name);

// Whether an unqualified, unquoted name is a known built-in read function of the dialect's
// server (any case).
bool isBuiltinFunction(std::string_view name, Dialect dialect = Dialect::Either);

// "a.b" with backquotes where needed, for messages and fixes.
std::string displayName(const Name& name);

}  // namespace mcpdb::mysql::guard
