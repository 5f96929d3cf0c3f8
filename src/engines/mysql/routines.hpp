#pragma once
// Vets the stored functions and views a configured statement reaches, on the live server, as the
// agent's principal. A view or a stored function runs wherever its name appears in a statement,
// so the statement's names are not read from where a table is usually written: every identifier
// and every `a.b` is a candidate (names.hpp), and all the candidates are looked up together
// among the views and routines the principal can see (catalog.hpp). Each view or function found
// is allowed only when
// - its definition, read from information_schema, passes the guard (checkRoutineBody for a
//   function, checkTemplate for a view), and so does every function and view its own names reach
//   in turn (depth-limited; a cycle is refused: MariaDB and MySQL refuse recursive functions), or
//   it is a function on the operator's allowlist; and
// - when it runs with its definer's rights (SQL SECURITY DEFINER, the default), that definer is
//   itself proved read-only (definerRefusal, doctor.hpp): a vetted body is only as safe as the
//   account it runs as, and START TRANSACTION READ ONLY does not stop a definer-rights routine
//   from writing a file or setting a global variable. An allowlisted function too.
// A function the text calls must be found; a definition the principal cannot see is refused,
// saying which privilege would let us read it. Reasons name the objects: they are for the
// operator (doctor, the error's detail), never for the agent.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engines/mysql/catalog.hpp"
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

// Why a view or function was refused (doctor's severity follows it).
enum class RefusalKind {
  None,       // allowed
  MayWrite,   // a definition it reaches is refused by the guard: it may write
  Unchecked,  // something it reaches could not be read or found (hidden, invisible, too deep)
  Definer,    // what it runs only reads, but it runs as a definer not proved read-only
};

struct RoutineVerdict {
  guard::Name name;  // {schema, name} as resolved
  bool allowed = false;
  std::string reason;  // why it was refused, or how it was allowed; names objects (operator)
  RefusalKind kind = RefusalKind::None;
};

// Judges stored functions and views against one connection, remembering what it has judged.
class RoutineChecker {
 public:
  RoutineChecker(Connection& conn, RoutineCheckOptions options);

  // Every view and stored function `sql` may reach: one verdict per view or function found among
  // its names, and a refusal per name in `calls` (the guard's called_functions) that is not a
  // function the principal can see. `sql` is a statement the guard allowed.
  std::vector<RoutineVerdict> checkStatement(std::string_view sql,
                                             const std::vector<guard::Name>& calls);
  // One verdict per function (schema-qualified or not).
  std::vector<RoutineVerdict> checkFunctions(const std::vector<guard::Name>& functions);
  // One verdict per relation that is a view; tables give none.
  std::vector<RoutineVerdict> checkViews(const std::vector<guard::Name>& relations);
  // The verdict of one function in `schema` (the doctor's EXECUTE question).
  RoutineVerdict checkFunction(const std::string& schema, const std::string& name);

  // Every candidate name looked up so far, and the fingerprints of every object found: what a
  // later call compares (fingerprintObjects) to learn whether a verdict still holds.
  std::vector<guard::Name> lookedUp() const;
  const std::set<std::string>& fingerprints() const { return fingerprints_; }

 private:
  Result<std::vector<CatalogObject>> fetch(const std::vector<guard::Name>& candidates);
  RoutineVerdict judgeObject(const CatalogObject& object, std::vector<std::string>& stack);
  RoutineVerdict judgeFunction(const guard::Name& resolved, std::vector<std::string>& stack);
  std::optional<RoutineVerdict> judgeView(const guard::Name& resolved,
                                          std::vector<std::string>& stack);
  // The first refusal among what `text` (in `schema`) reaches, nullopt when all pass.
  std::optional<RoutineVerdict> judgeReach(std::string_view text,
                                           const std::vector<guard::Name>& calls,
                                           const std::string& schema,
                                           std::vector<std::string>& stack,
                                           std::vector<RoutineVerdict>* all = nullptr);
  std::optional<std::string> definerProblem(const CatalogObject& object);
  bool allowlisted(const guard::Name& resolved) const;
  guard::Name resolve(const guard::Name& name, const std::string& schema) const;

  Connection& conn_;
  RoutineCheckOptions options_;
  std::map<std::string, RoutineVerdict> done_;                  // by kind, schema and name
  std::map<std::string, std::optional<std::string>> definers_;  // definer -> problem
  std::set<guard::Name> looked_up_;
  std::set<std::string> fingerprints_;
  int cutoffs_ = 0;  // depth-limit refusals so far
};

}  // namespace mcpdb::mysql
