// The reader of PostgreSQL's printed query trees (query_tree.hpp): real trees printed by a
// PostgreSQL 15 server (trees/*.txt, the DETAIL of debug_print_rewritten with
// debug_pretty_print off, line breaks included) give the object ids PostgreSQL resolved, and every
// text the reader does not know is refused whole.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engines/postgres/query_tree.hpp"

namespace mcpdb::postgres::proof {
namespace {

std::string tree(const std::string& name) {
  std::ifstream in(std::string(MCPDB_SOURCE_DIR) + "/tests/unit/postgres/trees/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Object ids from pg_proc.dat / pg_operator.dat / pg_type.dat / pg_class.dat (fixed in every
// PostgreSQL 15 installation).
constexpr std::int64_t kInt4Eq = 96, kInt4Lt = 97, kInt4EqFn = 65, kInt4 = 23, kText = 25,
                       kPgClass = 1259, kSystemTsm = 3314, kInt4InRange = 4128;

TEST(PostgresQueryTree, ImplicitOperatorsOfUsingInDistinctAndSorting) {
  // SELECT DISTINCT ... JOIN ... USING (x) WHERE a.x IN (SELECT 1) ORDER BY 1, with NULLIF,
  // IS DISTINCT FROM and CASE x WHEN: the text names no operator, the tree names int4's.
  auto r = readQueryTree(tree("using_in_sorted.txt"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->operators.contains(kInt4Eq));  // USING, IN, NULLIF, CASE, DISTINCT's eqop
  EXPECT_TRUE(r->operators.contains(kInt4Lt));  // ORDER BY's sortop
  EXPECT_TRUE(r->functions.contains(kInt4EqFn));
  EXPECT_TRUE(r->types.contains(kInt4));
  EXPECT_TRUE(r->types.contains(kText));
  EXPECT_GE(r->queries, 2);  // the statement and the IN subquery
}

TEST(PostgresQueryTree, CoercionsRelationsAndSampling) {
  auto r = readQueryTree(tree("coercions.txt"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->relations.contains(kPgClass));
  EXPECT_TRUE(r->functions.contains(kSystemTsm));  // TABLESAMPLE SYSTEM's handler
  EXPECT_TRUE(r->types.contains(1009));            // text[] of the array coercion
  EXPECT_FALSE(r->operators.empty());              // ROW() < ROW(), = ANY
}

TEST(PostgresQueryTree, WindowsCtesAndGrouping) {
  auto r = readQueryTree(tree("window_cte.txt"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->functions.contains(kInt4InRange));  // RANGE ... PRECEDING
  EXPECT_TRUE(r->operators.contains(kInt4Lt));
}

TEST(PostgresQueryTree, SeveralTreesAndAnyWhitespace) {
  const std::string one =
      "({QUERY :rtable <> :targetList ({TARGETENTRY :expr {FUNCEXPR :funcid "
      "12\n:funcresulttype 25 :args <> :location 7} :resno 1 :resname f})})";
  const std::string two =
      "({QUERY\t:sortClause ({SORTGROUPCLAUSE :tleSortGroupRef 1 :eqop 5 "
      ":sortop 6 :nulls_first false :hashable true})})";
  auto r = readQueryTree(one + "\n\n" + two);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->functions, (std::set<std::int64_t>{12}));
  EXPECT_EQ(r->operators, (std::set<std::int64_t>{5, 6}));
  EXPECT_EQ(r->types, (std::set<std::int64_t>{25}));
  EXPECT_EQ(r->queries, 2);
}

TEST(PostgresQueryTree, IdListsAndDatums) {
  auto r = readQueryTree(
      "({QUERY :rtable ({RANGETBLENTRY :rtekind 3 :functions ({RANGETBLFUNCTION :funcexpr <> "
      ":funccolcount 2 :funccolnames <> :funccoltypes (o 23 700) :funccoltypmods (i -1 -1) "
      ":funccolcollations (o 0 0) :funcparams (b)}) :selectedCols (b 1 2)}) :targetList "
      "({TARGETENTRY :expr {CONST :consttype 20 :constvalue 8 [ 1 0 0 0 0 0 0 0 ] :constisnull "
      "false} :resname \\:funcid}) :setOperations {SETOPERATIONSTMT :colTypes <> :groupClauses "
      "<>} :constraintDeps <>})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->types, (std::set<std::int64_t>{20, 23, 700}));
  EXPECT_TRUE(r->functions.empty());
}

// Catalog-controlled names are printed unquoted (an alias, a result column's name): one that
// looks like a field is at worst a refusal, never a field read past.
TEST(PostgresQueryTree, ANameThatLooksLikeAFieldIsRefusedNotSkipped) {
  auto r = readQueryTree("({QUERY :targetList ({TARGETENTRY :resname :funcid :resno 1})})");
  ASSERT_FALSE(r.ok());
}

TEST(PostgresQueryTree, RefusesWhatItDoesNotKnow) {
  const char* bad[] = {
      "",                                           // nothing
      "()",                                         // no query
      "({QUERY :utilityStmt ?})",                   // a node the server cannot show
      "({QUERY :rtable ({JSONTABLE :funcid 5})})",  // an unknown node kind
      "({QUERY :newfield 5})",                      // an unknown field
      "({QUERY :targetList ({TARGETENTRY :expr {FUNCEXPR :funcid x}})})",   // an id not a number
      "({QUERY :targetList ({TARGETENTRY :expr {FUNCEXPR :funcid -5}})})",  // nor signed
      "({QUERY :targetList ({TARGETENTRY :expr {FUNCEXPR :funcid}})})",     // no value
      "({QUERY :targetList ({TARGETENTRY :expr {FUNCEXPR :funcid {CONST}}})})",
      "({QUERY :targetList ({TARGETENTRY :expr {FUNCEXPR :funcid 1 2}})})",
      "({QUERY :rtable ({RANGETBLENTRY :coltypes (i 1 2)})})",  // ids not marked as ids
      "({QUERY :rtable ({RANGETBLENTRY :alias (o 1 2)})})",     // ids in a plain field
      "({QUERY :rtable ({RANGETBLENTRY :coltypes 5})})",
      "({QUERY :rtable ({RANGETBLENTRY :relid (o 5)})})",
      "({QUERY :rtable <>}",  // unbalanced
      "({QUERY :rtable <>}))",
      "({QUERY :rtable <>)})",
      "5 ({QUERY})",  // text outside any node
      "({QUERY 5})",  // a value without a field
      "({\\QUERY})",  // an escaped node name
      "({QUERY :targetList ({TARGETENTRY :expr {OPEXPR :opno 99999999999}})})",  // beyond an Oid
  };
  for (const char* text : bad) {
    auto r = readQueryTree(text);
    EXPECT_FALSE(r.ok()) << "read: " << text;
    if (!r.ok()) {
      EXPECT_EQ(r.error().code, Code::FailedPrecondition);
    }
  }
}

TEST(PostgresQueryTree, DeepNestingIsBounded) {
  std::string deep = "({QUERY :targetList ";
  for (int i = 0; i < 20000; ++i) deep += "(";
  auto r = readQueryTree(deep);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace mcpdb::postgres::proof
