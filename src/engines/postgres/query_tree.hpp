#pragma once
// A reader of PostgreSQL's analyzed query tree as the server prints it (`debug_print_rewritten`,
// the node-string format of outfuncs.c: `({QUERY :commandType 1 ... :rtable ({RANGETBLENTRY ...`).
// The read-only proof's second net: what PostgreSQL itself resolved the statement to (views
// expanded, row security applied, the operators it supplied for USING, IN, sorting and grouping,
// every coercion), by object id.
//
// No library reads this format (libpg_query parses SQL text, not node strings), so it is read here
// by hand, from untrusted text (names in it are catalog-controlled), and fails closed: a node kind
// or field it does not know, an object id that is not a number, a node the server could not print
// (`?`), unbalanced brackets, or no query at all make the whole text unreadable, never a partial
// answer. Fuzzed by tests/fuzz/proof/query_tree_fuzzer.cpp.

#include <cstdint>
#include <set>
#include <string_view>

#include "common/result.hpp"

namespace mcpdb::postgres::proof {

// Every object id the tree names, by catalog. Collations, roles, operator families and
// constraint ids are read and not returned: none of them runs code.
struct TreeObjects {
  std::set<std::int64_t> functions;  // pg_proc
  std::set<std::int64_t> operators;  // pg_operator
  std::set<std::int64_t> types;      // pg_type
  std::set<std::int64_t> relations;  // pg_class
  int queries = 0;                   // QUERY nodes (one per statement, one per subquery or CTE)
};

// Reads one or more printed trees (the DETAIL of each "rewritten parse tree:" notice, in any
// order, whitespace and line breaks anywhere between tokens). An error (FailedPrecondition) says
// why the text could not be read.
Result<TreeObjects> readQueryTree(std::string_view text);

}  // namespace mcpdb::postgres::proof
