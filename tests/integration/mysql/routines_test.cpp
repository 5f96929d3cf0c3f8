// RoutineChecker against the demo.mcpdb_doc_* functions and views of the local MariaDB
// (scripts/lib/mariadb.sh), read as mcpdb_doc_routines, which holds EXECUTE on them and is the
// definer of all but mcpdb_doc_hidden (whose body it therefore cannot see).
#include <gtest/gtest.h>

#include "engines/mysql/routines.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

struct Checked {
  std::optional<Connection> conn;
  std::optional<RoutineChecker> checker;
};

// A checker for the routines account (unqualified names in demo), with `allowlist`.
std::unique_ptr<Checked> checkerFor(const char* variable, std::vector<std::string> allowlist = {}) {
  auto out = std::make_unique<Checked>();
  auto c = Connection::open(dsnFrom(variable));
  if (!c.ok()) {
    ADD_FAILURE() << "cannot connect with " << variable << ": " << c.error().message;
    return out;
  }
  out->conn.emplace(std::move(*c));
  out->checker.emplace(*out->conn,
                       RoutineCheckOptions{std::move(allowlist), "demo", guard::Dialect::Mariadb});
  return out;
}

RoutineVerdict one(RoutineChecker& checker, guard::Name name) {
  auto v = checker.checkFunctions({std::move(name)});
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? RoutineVerdict{} : v[0];
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MysqlRoutines, PureFunctionPasses) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  for (guard::Name name : {guard::Name{"mcpdb_doc_pure"}, guard::Name{"demo", "mcpdb_doc_pure"}}) {
    const auto v = one(*t->checker, name);
    EXPECT_TRUE(v.allowed) << v.reason;
    EXPECT_EQ(v.name, (guard::Name{"demo", "mcpdb_doc_pure"}));
    EXPECT_TRUE(contains(v.reason, "only reads")) << v.reason;
  }
}

// A body calling another function is judged with its callee; an unqualified callee is looked up
// in the routine's own schema.
TEST(MysqlRoutines, CalleesAreJudgedToo) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  const auto pure = one(*t->checker, {"mcpdb_doc_calls_pure"});
  EXPECT_TRUE(pure.allowed) << pure.reason;
  const auto writer = one(*t->checker, {"demo", "mcpdb_doc_calls_writer"});
  EXPECT_FALSE(writer.allowed);
  EXPECT_TRUE(contains(writer.reason, "calls demo.mcpdb_doc_writer, which is refused"))
      << writer.reason;
}

TEST(MysqlRoutines, WritingFunctionIsRefused) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  const auto v = one(*t->checker, {"mcpdb_doc_writer"});
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(contains(
      v.reason, "function demo.mcpdb_doc_writer may write: its body is refused (routine_statement"))
      << v.reason;
}

TEST(MysqlRoutines, CycleIsRefusedAndEnds) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  const auto verdicts = t->checker->checkFunctions({{"mcpdb_doc_cycle_a"}, {"mcpdb_doc_cycle_b"}});
  ASSERT_EQ(verdicts.size(), 2u);
  for (const auto& v : verdicts) {
    EXPECT_FALSE(v.allowed);
    EXPECT_TRUE(contains(v.reason, "is recursive")) << v.reason;
  }
}

TEST(MysqlRoutines, HiddenDefinitionIsRefusedSayingWhatWouldShowIt) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  const auto v = one(*t->checker, {"mcpdb_doc_hidden"});
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(contains(v.reason, "its definition is hidden from this account")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "SELECT on mysql.proc")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "allowlist")) << v.reason;
}

TEST(MysqlRoutines, UnknownOrInvisibleFunctionIsRefused) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  const auto unknown = one(*t->checker, {"mcpdb_doc_no_such_function"});
  EXPECT_FALSE(unknown.allowed);
  EXPECT_TRUE(contains(unknown.reason, "unknown function or not visible")) << unknown.reason;
  // The clean account holds no EXECUTE: the functions exist but it cannot see them.
  auto safe = checkerFor("MYSQL_DOCTOR_DSN_SAFE");
  ASSERT_TRUE(safe->checker);
  const auto invisible = one(*safe->checker, {"mcpdb_doc_pure"});
  EXPECT_FALSE(invisible.allowed);
  EXPECT_TRUE(contains(invisible.reason, "unknown function or not visible")) << invisible.reason;
}

// The operator's allowlist wins over a hidden or writing body, by exact schema and any-case name,
// but not over the definer a function runs as: mcpdb_doc_writer's definer (the routines account)
// is proved read-only, so its INSERT would fail; mcpdb_doc_hidden runs as root, whose grants this
// account cannot even read. A function calling an allowlisted one passes.
TEST(MysqlRoutines, AllowlistedByName) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES", {"demo.MCPDB_DOC_HIDDEN", "mcpdb_doc_writer"});
  ASSERT_TRUE(t->checker);
  const auto writer = one(*t->checker, {"MCPDB_DOC_WRITER"});
  EXPECT_TRUE(writer.allowed) << writer.reason;
  EXPECT_TRUE(contains(writer.reason, "allowlisted")) << writer.reason;
  EXPECT_TRUE(one(*t->checker, {"mcpdb_doc_calls_writer"}).allowed);
  const auto hidden = one(*t->checker, {"mcpdb_doc_hidden"});
  EXPECT_FALSE(hidden.allowed);
  EXPECT_TRUE(contains(hidden.reason, "is allowlisted by name, but it runs with its definer's"))
      << hidden.reason;
  EXPECT_TRUE(contains(hidden.reason, "SELECT on the mysql schema")) << hidden.reason;
  // Another schema's function of the same name is not covered.
  EXPECT_FALSE(one(*t->checker, {"other", "mcpdb_doc_hidden"}).allowed);
}

TEST(MysqlRoutines, ViewsCallingWritersAreRefused) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  const auto v = t->checker->checkViews({{"mcpdb_doc_v_pure"},
                                         {"demo", "mcpdb_doc_v_writer"},
                                         {"mcpdb_doc_v_nested"},
                                         {"mcpdb_doc_log"}});
  ASSERT_EQ(v.size(), 3u);  // the table gives no verdict
  EXPECT_TRUE(v[0].allowed) << v[0].reason;
  EXPECT_FALSE(v[1].allowed);
  EXPECT_TRUE(contains(v[1].reason, "view demo.mcpdb_doc_v_writer calls demo.mcpdb_doc_writer"))
      << v[1].reason;
  EXPECT_FALSE(v[2].allowed);
  EXPECT_TRUE(contains(v[2].reason, "reads demo.mcpdb_doc_v_writer, which is refused"))
      << v[2].reason;
}

// From a configured statement to verdicts: the guard lists the calls and relations, the checker
// judges them.
TEST(MysqlRoutines, GuardListsWhatTheCheckerJudges) {
  auto t = checkerFor("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(t->checker);
  const auto g = guard::checkTemplate(
      "SELECT x FROM mcpdb_doc_v_nested WHERE demo.mcpdb_doc_pure(x) > ?", guard::Dialect::Mariadb);
  ASSERT_TRUE(g.allowed) << g.message;
  const auto functions = t->checker->checkFunctions(g.called_functions);
  ASSERT_EQ(functions.size(), 1u);
  EXPECT_TRUE(functions[0].allowed) << functions[0].reason;
  const auto views = t->checker->checkViews(g.relations);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_FALSE(views[0].allowed);
}

// Functions nested deeper than kMaxRoutineDepth are refused, not followed for ever (made by the
// admin account, which is their definer and so can read them; SQL SECURITY INVOKER, since the
// admin account writes).
TEST(MysqlRoutines, DeepNestingIsRefused) {
  const int n = kMaxRoutineDepth + 2;
  for (int i = n; i >= 0; --i) {
    const std::string body =
        i == n ? "RETURN 1" : "RETURN demo.mytest_doc_chain_" + std::to_string(i + 1) + "() + 1";
    adminExec("CREATE OR REPLACE FUNCTION demo.mytest_doc_chain_" + std::to_string(i) +
              "() RETURNS INT SQL SECURITY INVOKER " + body);
  }
  auto t = checkerFor("MYSQL_ADMIN_DSN");
  ASSERT_TRUE(t->checker);
  const auto top = one(*t->checker, {"mytest_doc_chain_0"});
  EXPECT_FALSE(top.allowed);
  EXPECT_TRUE(contains(top.reason, "nested functions and views: not checked")) << top.reason;
  // Near the bottom the chain is short enough to be proved.
  const auto low = one(*t->checker, {"mytest_doc_chain_" + std::to_string(n - 2)});
  EXPECT_TRUE(low.allowed) << low.reason;
}

}  // namespace
}  // namespace mcpdb::mysql::itest
