#pragma once
// Vets the stored functions and views a configured statement reaches, on the live server, as the
// agent's principal. The guard (guard.hpp) lets a template call functions that are not known
// built-ins and read views, but lists them: a stored function may write (MySQL does not enforce
// READS SQL DATA) and a view may call one. Each is allowed only when
// - its name is on the operator's allowlist, or
// - its definition, read from information_schema, passes the guard (checkRoutineBody for a
//   function, checkTemplate for a view), and so does every function and view it reaches in turn
//   (depth-limited; a cycle is refused: MariaDB and MySQL refuse recursive functions anyway).
// A definition the principal cannot see is refused, saying which privilege would let us read it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engines/mysql/connection.hpp"
#include "engines/mysql/guard.hpp"

namespace mcpdb::mysql {

// Functions and views nested deeper than this are refused.
inline constexpr int kMaxRoutineDepth = 8;

struct RoutineCheckOptions {
  // Functions the operator vouches for, "schema.name" or "name" (then in default_schema); the
  // function part is case-insensitive, the schema part is not (Linux servers).
  std::vector<std::string> allowlist;
  // The schema of unqualified names in the configured statements (the DSN's database).
  std::string default_schema;
  guard::Dialect dialect = guard::Dialect::Either;
};

struct RoutineVerdict {
  guard::Name name;  // {schema, name} as resolved
  bool allowed = false;
  std::string reason;  // why it was refused, or how it was allowed; safe to show
};

// Judges stored functions and views against one connection, remembering what it has judged.
class RoutineChecker {
 public:
  RoutineChecker(Connection& conn, RoutineCheckOptions options);

  // One verdict per function (the guard's called_functions, schema-qualified or not).
  std::vector<RoutineVerdict> checkFunctions(const std::vector<guard::Name>& functions);
  // One verdict per relation that is a view (the guard's relations); tables give none.
  std::vector<RoutineVerdict> checkViews(const std::vector<guard::Name>& relations);
  // The verdict of one function in `schema` (the doctor's EXECUTE question).
  RoutineVerdict checkFunction(const std::string& schema, const std::string& name);

 private:
  RoutineVerdict judgeFunction(const guard::Name& resolved, std::vector<std::string>& stack);
  std::optional<RoutineVerdict> judgeView(const guard::Name& resolved,
                                          std::vector<std::string>& stack);
  std::optional<RoutineVerdict> judgeCalls(const guard::Verdict& verdict, const guard::Name& owner,
                                           const std::string& what,
                                           std::vector<std::string>& stack);
  bool allowlisted(const guard::Name& resolved) const;
  guard::Name resolve(const guard::Name& name, const std::string& schema) const;

  Connection& conn_;
  RoutineCheckOptions options_;
  std::map<std::string, RoutineVerdict> done_;  // by kind, schema and name
  int cutoffs_ = 0;                             // depth-limit refusals so far
};

}  // namespace mcpdb::mysql
