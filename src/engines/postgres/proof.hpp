#pragma once
// The read-only proof: what each configured statement reaches, resolved against the live catalog
// and followed recursively, judged by what can write, lock or leave state behind. The statement
// guard (guard/guard.hpp) decides the statement's own shape; this decides everything it calls.
//
// Two nets, both required. The first judges what the statement names and the closure of its
// types before anything is prepared; the second, once the first has proved a statement, asks
// PostgreSQL what it resolved the statement to (its analyzed, rewritten query tree) and judges
// every object id in it by the same rules: preparing alone can run a type's input function or a
// domain's check, so the first net must hold on its own for those.
//
// What the first net follows (one catalog round trip per level of the graph, whatever the number
// of names):
//  - names in a statement (functions, attribute-notation functions, operators, relations, cast
//    types, TABLESAMPLE methods), resolved by name over the pinned search_path: every visible
//    overload, in every schema of the path, counts (the server picks one; the proof takes all);
//  - exact object ids where the catalog records them (pg_depend): a view's rewrite rule, an RLS
//    policy's expressions, a BEGIN ATOMIC function body, a domain's constraints, a function's
//    argument and result types; an operator's function (oprcode) and estimators; an aggregate's
//    support functions;
//  - the closure of the statement's types: the column and row types of every relation reached,
//    cast targets, every function's argument and result types, the types of literals and bound
//    parameters, closed through array element and array types, composite attributes, domain
//    bases, range subtypes and the other side of casts; for each type in it, its input/output
//    functions, its domain checks, casts from and to it, the operators taking it (the ones
//    PostgreSQL supplies for USING, NATURAL, IN, CASE, NULLIF, DISTINCT, sorting and grouping
//    among them) and operator-class support functions over it. A user-defined overload of an
//    operator name PostgreSQL ships (a user `=`) is reached through its operand types only;
//  - SQL function bodies given as text (prosrc), parsed with the same parser.
//
// The trust rule: built-in functions (pg_catalog, owned by the bootstrap superuser) and functions
// of extensions the operator lists are judged by their catalog properties: SECURITY DEFINER and
// VOLATILE are refused (except harmless volatile built-ins such as the size functions and the
// TABLESAMPLE methods PostgreSQL ships, kHarmlessVolatile), STABLE and
// IMMUTABLE accepted, and nothing below them is followed. Any function on the guard's denylist is
// refused wherever it is reached. Other functions: SECURITY DEFINER refused; SQL bodies inspected;
// any other language refused unless the operator allowlists the function with a reason. Foreign
// tables are refused. Built-in relations (pg_catalog, information_schema) are not followed.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/json.hpp"
#include "common/result.hpp"

namespace mcpdb::postgres::proof {

struct AllowedFunction {
  std::string function;  // "schema.name" (every overload) or "schema.name(type, type)"
  std::string reason;    // why the operator trusts it (required)
};

struct Settings {
  // The session's search_path, pinned on every connection (pg_temp is always appended last, so a
  // temporary object is never found before these).
  std::vector<std::string> search_path = {"pg_catalog", "public"};
  // Extensions whose functions are judged like built-ins.
  std::vector<std::string> trusted_extensions = {"vector"};
  std::vector<AllowedFunction> allow_functions;
  // How long a proof is trusted before it is made again.
  std::chrono::seconds interval{300};
};

// Why a statement is refused: the object that fails, the reason, and the chain that reaches it
// ("view demo.v -> function demo.f(integer)").
struct Refusal {
  std::string object;
  std::string reason;
  std::string via;  // empty when the statement names the object itself

  std::string message() const;
};

struct Report {
  // Every statement proved, by exact text: nullopt when proved read-only.
  std::unordered_map<std::string, std::optional<Refusal>> verdicts;
  int round_trips = 0;  // catalog queries
  int analyses = 0;     // statements PostgreSQL was asked to analyze (one round trip each)
  int analysed = 0;     // of those, trees read
  // Of those, statements that do not fit the catalog (SQLSTATE class 42: an undefined table,
  // column or function): they cannot run either, so they are left to fail at call time with the
  // server's own error (and `doctor` names it), not refused by the proof.
  int unfit = 0;
  std::size_t unexpected = 0;  // objects the analyses named that the first net had not reached
  std::size_t objects = 0;     // catalog objects judged
  std::chrono::microseconds took{0};
};

// Runs kCatalogSql with `request` as its $1 (jsonb) and returns its rows ({k, ref, info}).
using CatalogFn = std::function<Result<std::vector<Json>>(const Json& request)>;

// PostgreSQL's own analysis of one statement: prepared (never executed) with
// debug_print_rewritten inside a READ ONLY transaction that is rolled back.
struct Analysis {
  bool prepared = false;  // false: the server refused to prepare it (`failure` says why)
  std::string tree;       // the printed query tree(s) (the notices' DETAIL), when prepared
  std::string failure;
  std::string sqlstate;  // of the failure, when the server refused
};

// Asks PostgreSQL to analyze a statement. An error means it could not be asked (no connection):
// the proof fails then, as for a failed catalog query.
using AnalyzeFn = std::function<Result<Analysis>(const std::string& sql)>;

// Proves each statement. An error means the proof could not be made (the catalog query or an
// analysis failed): nothing is proved then. Without `analyze` every statement the first net
// proves is refused (both nets are required).
Result<Report> prove(const std::vector<std::string>& statements, const Settings& settings,
                     const CatalogFn& catalog, const AnalyzeFn& analyze);

// The one catalog query of a proof level (fixed text; its $1 is the request).
extern const char* const kCatalogSql;

}  // namespace mcpdb::postgres::proof
