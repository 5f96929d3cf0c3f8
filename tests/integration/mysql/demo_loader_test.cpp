// The MySQL/MariaDB demo loader against the local MariaDB (scripts/servers.sh). Each test that
// tampers with data uses its own scratch table demo.mytest_demo_<name> (made and dropped here; the
// canary ignores that prefix), so the shared demo.documents is never half-loaded while other
// tests read it; the tests of the public loader leave demo.documents loaded with the file's 30
// documents. Without MYSQL_ADMIN_DSN and MYSQL_DSN every test fails and says so.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/json.hpp"
#include "engines/mysql/demo_loader.hpp"
#include "engines/mysql/errors.hpp"
#include "engines/mysql/raw_client.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql {
namespace {

using engines::DemoDocument;
using itest::adminExec;
using itest::openReader;
using itest::requireEnv;

constexpr const char* kNoVector = "no vector search: MariaDB 10.11 has no VECTOR type";

std::vector<DemoDocument> readDemo() {
  auto docs =
      engines::readDemoDocuments(std::string(MCPDB_SOURCE_DIR) + "/data/demo_documents.jsonl");
  EXPECT_TRUE(docs.ok()) << docs.error().message;
  return docs.ok() ? *docs : std::vector<DemoDocument>{};
}

Env loaderEnv() {
  return Env::fromMap(
      {{"MYSQL_ADMIN_DSN", requireEnv("MYSQL_ADMIN_DSN")}, {"MYSQL_DSN", requireEnv("MYSQL_DSN")}});
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The rows of demo.<table> as the read-only user sees them, by id.
std::map<std::string, std::vector<Json>> readRows(const std::string& table) {
  std::map<std::string, std::vector<Json>> out;
  auto reader = openReader();
  if (!reader) return out;
  CallLimits limits;
  limits.max_rows = 1000;
  auto r = reader->run(
      "SELECT id, title, body, category, tags, published FROM demo." + table + " ORDER BY id", {},
      limits);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return out;
  EXPECT_FALSE(r->truncated);
  for (const auto& row : r->rows) out[row[0].get<std::string>()] = row;
  return out;
}

// Every document of the file reads back exactly, and nothing else is in the table.
void expectTableHoldsExactly(const std::string& table, const std::vector<DemoDocument>& docs) {
  const auto rows = readRows(table);
  ASSERT_EQ(rows.size(), docs.size());
  for (const auto& d : docs) {
    const auto it = rows.find(d.id);
    ASSERT_NE(it, rows.end()) << d.id;
    const auto& row = it->second;
    EXPECT_EQ(row[1], Json(d.title)) << d.id;
    EXPECT_EQ(row[2], Json(d.body)) << d.id;
    EXPECT_EQ(row[3], Json(d.category)) << d.id;
    // MariaDB's JSON is text: the tags come back as the JSON array the loader wrote.
    ASSERT_TRUE(row[4].is_string()) << d.id;
    EXPECT_EQ(Json::parse(row[4].get<std::string>()), Json(d.tags)) << d.id;
    EXPECT_EQ(row[5], Json(d.published)) << d.id;
  }
}

std::string scalar(const std::string& sql) {
  auto reader = openReader();
  if (!reader) return "<no reader>";
  auto v = reader->queryValue(sql);
  EXPECT_TRUE(v.ok()) << v.error().message;
  return v.ok() ? *v : "<error>";
}

TEST(MysqlDemoLoader, IsEnabledByTheAdminDsnAlone) {
  const auto l = demoLoader();
  EXPECT_EQ(l.engine, "mysql");
  EXPECT_EQ(l.admin_env, "MYSQL_ADMIN_DSN");
  EXPECT_FALSE(l.configured(Env::fromMap({})));
  EXPECT_FALSE(l.configured(Env::fromMap({{"MYSQL_DSN", "mysql://u@127.0.0.1/demo"}})));
  EXPECT_TRUE(l.configured(Env::fromMap({{"MYSQL_ADMIN_DSN", "mysql://u@127.0.0.1/demo"}})));

  const auto docs = readDemo();
  const Env empty = Env::fromMap({});
  engines::DemoLoadContext ctx;
  ctx.env = &empty;
  auto r = l.load(docs, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_TRUE(contains(r.error().message, "MYSQL_ADMIN_DSN")) << r.error().message;

  // The table name is spliced into SQL: anything but [a-z0-9_] is refused before connecting.
  for (const char* bad : {"", "documents; DROP TABLE x", "Documents", "a`b", "doc-uments"}) {
    auto b = demo_detail::loadInto(docs, loaderEnv(), bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.error().code, Code::InvalidArgument) << bad;
  }
  auto none = demo_detail::loadInto({}, loaderEnv(), "mytest_demo_unused");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Code::InvalidArgument);
}

TEST(MysqlDemoLoader, LoadsIdempotentlyRestoresChangedRowsAndRemovesStaleOnes) {
  const std::string table = "mytest_demo_idem";
  adminExec("DROP TABLE IF EXISTS demo." + table);
  const auto docs = readDemo();
  ASSERT_EQ(docs.size(), 30u);
  const Env env = loaderEnv();

  auto first = demo_detail::loadInto(docs, env, table);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(contains(
      *first, "demo." + table + ": 30 rows (30 new, 0 updated, 0 unchanged, 0 stale removed)"))
      << *first;
  EXPECT_TRUE(contains(*first, kNoVector)) << *first;
  EXPECT_TRUE(contains(*first, "SELECT already held by mcpdb_ro (checked, not granted)")) << *first;
  EXPECT_TRUE(contains(*first,
                       "verified as the serving user mcpdb_ro (MYSQL_DSN): count 30, "
                       "doc-01 reads back"))
      << *first;
  expectTableHoldsExactly(table, docs);

  auto second = demo_detail::loadInto(docs, env, table);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(contains(*second, ": 30 rows (0 new, 0 updated, 30 unchanged, 0 stale removed)"))
      << *second;
  expectTableHoldsExactly(table, docs);

  // Drift: one document edited by hand, one row the file no longer has.
  adminExec("UPDATE demo." + table + " SET title = 'edited', tags = '[]' WHERE id = 'doc-05'");
  adminExec("INSERT INTO demo." + table +
            " (id, title, body, category, tags, published) VALUES ('doc-stale', 't', 'b', 'c', "
            "'[\"x\"]', '2020-01-01')");
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM demo." + table), "31");
  auto third = demo_detail::loadInto(docs, env, table);
  ASSERT_TRUE(third.ok()) << third.error().message;
  EXPECT_TRUE(contains(*third, ": 30 rows (0 new, 1 updated, 29 unchanged, 1 stale removed)"))
      << *third;
  expectTableHoldsExactly(table, docs);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM demo." + table + " WHERE id = 'doc-stale'"), "0");

  // A document added to the file is inserted; one taken out of it is removed.
  auto changed = docs;
  changed.pop_back();
  DemoDocument extra = docs.front();
  extra.id = "doc-new";
  extra.published = "";  // optional in the file: stored as NULL
  changed.push_back(extra);
  auto fourth = demo_detail::loadInto(changed, env, table);
  ASSERT_TRUE(fourth.ok()) << fourth.error().message;
  EXPECT_TRUE(contains(*fourth, ": 30 rows (1 new, 0 updated, 29 unchanged, 1 stale removed)"))
      << *fourth;
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM demo." + table +
                   " WHERE id = 'doc-new' AND published IS "
                   "NULL"),
            "1");
  adminExec("DROP TABLE demo." + table);
}

TEST(MysqlDemoLoader, AFailedLoadRollsBackAndItsErrorNamesTheStepNeverAValue) {
  const std::string table = "mytest_demo_err";
  adminExec("DROP TABLE IF EXISTS demo." + table);
  const auto docs = readDemo();
  ASSERT_EQ(docs.size(), 30u);
  const Env env = loaderEnv();
  ASSERT_TRUE(demo_detail::loadInto(docs, env, table).ok());

  // Document 3 changes (and would be written first), document 4 carries an impossible date: the
  // whole load must roll back, and the error must quote neither.
  auto bad = docs;
  bad[2].title = "TITLE-THAT-MUST-NOT-LEAK";
  bad[3].published = "2024-13-45";
  auto r = demo_detail::loadInto(bad, env, table);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "upsert document 4")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "(error 1292")) << r.error().message;
  EXPECT_FALSE(contains(r.error().message, "2024-13-45")) << r.error().message;
  EXPECT_FALSE(contains(r.error().message, "TITLE-THAT-MUST-NOT-LEAK")) << r.error().message;
  EXPECT_FALSE(contains(r.error().detail, "2024-13-45")) << r.error().detail;
  expectTableHoldsExactly(table, docs);

  // A title longer than the column: refused by strict mode (not cut), the value not quoted.
  bad = docs;
  bad[0].title = std::string(600, 'Q');
  auto longer = demo_detail::loadInto(bad, env, table);
  ASSERT_FALSE(longer.ok());
  EXPECT_TRUE(contains(longer.error().message, "upsert document 1")) << longer.error().message;
  EXPECT_FALSE(contains(longer.error().message, "QQQQ")) << longer.error().message;
  expectTableHoldsExactly(table, docs);

  // An id that the server's collation would take for another one (trailing spaces are padding).
  bad = docs;
  bad[4].id = docs[4].id + " ";
  auto padded = demo_detail::loadInto(bad, env, table);
  ASSERT_FALSE(padded.ok());
  EXPECT_EQ(padded.error().code, Code::InvalidArgument);
  EXPECT_TRUE(contains(padded.error().message, "document 5")) << padded.error().message;
  expectTableHoldsExactly(table, docs);

  // A wrong admin password: refused, and the password is in neither the message nor the detail.
  const Dsn admin = itest::dsnFrom("MYSQL_ADMIN_DSN");
  const std::string wrong = "wrong-pass-7f3e91";
  const Env wrong_env = Env::fromMap(
      {{"MYSQL_ADMIN_DSN", "mysql://" + admin.user + ":" + wrong + "@" + admin.host + ":" +
                               std::to_string(admin.port) + "/" + admin.database},
       {"MYSQL_DSN", requireEnv("MYSQL_DSN")}});
  auto denied = demo_detail::loadInto(docs, wrong_env, table);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, Code::PermissionDenied) << denied.error().message;
  EXPECT_TRUE(contains(denied.error().message, "admin connection (MYSQL_ADMIN_DSN)"))
      << denied.error().message;
  EXPECT_TRUE(contains(denied.error().message, "error 1045")) << denied.error().message;
  EXPECT_FALSE(contains(operatorText(denied.error()), wrong));
  adminExec("DROP TABLE demo." + table);
}

TEST(MysqlDemoLoader, WithoutTheServingDsnItVerifiesAsTheAdminAndSaysSo) {
  const std::string table = "mytest_demo_admin_only";
  adminExec("DROP TABLE IF EXISTS demo." + table);
  const auto docs = readDemo();
  const Env env = Env::fromMap({{"MYSQL_ADMIN_DSN", requireEnv("MYSQL_ADMIN_DSN")}});
  auto r = demo_detail::loadInto(docs, env, table);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(*r, "grants not checked (MYSQL_DSN not set)")) << *r;
  EXPECT_TRUE(contains(*r, "verified as the admin (MYSQL_ADMIN_DSN; MYSQL_DSN not set)")) << *r;
  EXPECT_FALSE(contains(*r, "SELECT already held")) << *r;
  expectTableHoldsExactly(table, docs);
  adminExec("DROP TABLE demo." + table);
}

// Two loaders at once into a table that does not exist yet both succeed and leave it whole.
// Measured: this passes even without the loader's named lock (the second CREATE TABLE IF NOT
// EXISTS waits for the first load's open transaction), so it guards the outcome, not the lock.
TEST(MysqlDemoLoader, ConcurrentLoadsOfANewTableBothSucceed) {
  const std::string table = "mytest_demo_race";
  const auto docs = readDemo();
  const Env env = loaderEnv();
  for (int round = 0; round < 3; ++round) {
    adminExec("DROP TABLE IF EXISTS demo." + table);
    std::vector<Result<std::string>> results(2, makeError(Code::Internal, "not run"));
    {
      std::vector<std::jthread> loaders;
      for (std::size_t i = 0; i < results.size(); ++i) {
        loaders.emplace_back([&, i] { results[i] = demo_detail::loadInto(docs, env, table); });
      }
    }
    for (const auto& r : results)
      ASSERT_TRUE(r.ok()) << "round " << round << ": " << r.error().message;
    expectTableHoldsExactly(table, docs);
  }
  adminExec("DROP TABLE demo." + table);
}

// The public loader on the shared table: it ends loaded with the file, whatever it held before
// (the loader is idempotent, so other tests reading it meanwhile see either state in full).
void loadDemoDocuments(std::string& summary) {
  const auto docs = readDemo();
  ASSERT_EQ(docs.size(), 30u);
  const Env env = loaderEnv();
  engines::DemoLoadContext ctx;
  ctx.env = &env;
  auto r = demoLoader().load(docs, ctx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  summary = *r;
}

TEST(MysqlDemoLoader, PublicLoaderFillsDemoDocumentsAndReRunsAsANoOp) {
  std::string first;
  ASSERT_NO_FATAL_FAILURE(loadDemoDocuments(first));
  EXPECT_TRUE(contains(first, "demo.documents: 30 rows (")) << first;
  EXPECT_TRUE(contains(first, kNoVector)) << first;
  std::string second;
  ASSERT_NO_FATAL_FAILURE(loadDemoDocuments(second));
  RecordProperty("summary", second);  // the loader's line, in --gtest_output=xml reports
  EXPECT_TRUE(
      contains(second, "demo.documents: 30 rows (0 new, 0 updated, 30 unchanged, 0 stale removed)"))
      << second;
  expectTableHoldsExactly("documents", readDemo());
}

TEST(MysqlDemoLoader, TheReadOnlyUserReadsTheDemoTableButCannotWriteIt) {
  std::string summary;
  ASSERT_NO_FATAL_FAILURE(loadDemoDocuments(summary));
  EXPECT_EQ(scalar("SELECT title FROM demo.documents WHERE id = 'doc-01'"),
            "Reading a query plan before adding indexes");

  // Outside the serving path's READ ONLY transaction, so that only the grants decide.
  auto raw = connectRaw(itest::dsnFrom("MYSQL_DSN"), std::chrono::seconds(10));
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  for (const char* sql :
       {"INSERT INTO demo.documents (id, title, body, category, tags, published) VALUES "
        "('doc-ro', 't', 'b', 'c', '[]', '2020-01-01')",
        "UPDATE demo.documents SET title = 'x' WHERE id = 'doc-01'",
        "DELETE FROM demo.documents WHERE id = 'doc-01'", "DROP TABLE demo.documents",
        "CREATE TABLE demo.mytest_demo_ro (n INT)"}) {
    auto w = queryFirstValue(raw->get(), sql, "write as the read-only user");
    ASSERT_FALSE(w.ok()) << "the read-only user could run: " << sql;
    EXPECT_EQ(w.error().code, Code::PermissionDenied) << sql << ": " << w.error().message;
  }
  // And through the serving path itself.
  auto reader = openReader();
  ASSERT_TRUE(reader.has_value());
  auto w = reader->run(
      "INSERT INTO demo.documents (id, title, body, category, tags) VALUES "
      "('doc-ro', 't', 'b', 'c', '[]')",
      {}, CallLimits{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, Code::PermissionDenied) << w.error().message;
  expectTableHoldsExactly("documents", readDemo());
}

}  // namespace
}  // namespace mcpdb::mysql
