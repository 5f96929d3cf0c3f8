// The byte cap at the source on the live MariaDB (source_cap.hpp): a value longer than the call's
// byte cap never leaves the server; it is null in its row and listed in `cut` (as PostgreSQL's),
// for every kind of unbounded column (LONGTEXT, LONGBLOB, JSON, GEOMETRY, a long VARCHAR), while
// rows within the cap, their columns (names and types) and their order are what the statement
// gives unwrapped, whatever its shape (trailing semicolon or comment, LIMIT, ORDER BY without
// LIMIT, WITH, UNION, a parenthesised statement, duplicate column names, placeholders).
// The schema and its table belong to this process (made by the server's administrator, readable
// by the reader role for the test's length, dropped at the end).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "integration/mysql/engine_fixture.hpp"
#include "integration/mysql/fixture.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::mysql::itest {
namespace {

using Engine = ConfiguredEngine;

const std::string S = "mytest_wide_" + std::to_string(::getpid());
constexpr const char* kReader = "'mcpdb_ro'@'127.0.0.1'";
// The values of row 1: each far over the cap (the server's max_allowed_packet, 16 MiB by default,
// bounds what one function can build).
constexpr int kWide = 15 * 1024 * 1024;
constexpr int kCap = 4096;

void dropAll(Connection& root) {
  (void)root.queryValue("REVOKE SELECT ON " + S + ".* FROM " + kReader);
  (void)root.queryValue("DROP DATABASE IF EXISTS " + S);
}

// wide, row 1: every column over the cap; row 2: every column within it; row 3: NULLs; row 4:
// text one byte over the cap, bytes one byte over what fits. edge: row 1 text exactly at the cap,
// bytes whose base64 is exactly the cap; row 2 one byte more of each.
std::vector<std::string> setUpSql() {
  const std::string t = S + ".wide";
  const std::string w = std::to_string(kWide);
  const std::string c = std::to_string(kCap);
  const std::string b = std::to_string(kCap / 4 * 3);
  return {
      "CREATE DATABASE " + S,
      "CREATE TABLE " + t +
          " (id INT PRIMARY KEY, label VARCHAR(20) NOT NULL, body LONGTEXT, data LONGBLOB, "
          "doc JSON, shape GEOMETRY, note VARCHAR(8000), kind ENUM('a','b'))",
      // A line of 600 points: about 10 KB of WKB, over the cap's 3,072 bytes.
      "INSERT INTO " + t + " SELECT 1, 'one', REPEAT('x', " + w + "), REPEAT(_binary'\\0', " + w +
          "), CONCAT('[\"', REPEAT('j', " + w +
          "), '\"]'), ST_GeomFromText(CONCAT('LINESTRING(', " +
          "(SELECT GROUP_CONCAT(CONCAT(seq, ' ', seq)) FROM seq_1_to_600), ')')), REPEAT('n', "
          "6000), 'a'",
      "INSERT INTO " + t +
          " VALUES (2, 'two', 'short', _binary'abc', '{\"k\": 2}', ST_GeomFromText('POINT(1 2)'), "
          "'short', 'b')",
      "INSERT INTO " + t + " VALUES (3, 'three', NULL, NULL, NULL, NULL, NULL, NULL)",
      "INSERT INTO " + t + " SELECT 4, 'four', REPEAT('z', " + c + " + 1), REPEAT(_binary'\\2', " +
          b + " + 1), NULL, NULL, NULL, NULL",
      "CREATE TABLE " + S + ".edge (id INT PRIMARY KEY, body LONGTEXT, data LONGBLOB)",
      "INSERT INTO " + S + ".edge SELECT 1, REPEAT('y', " + c + "), REPEAT(_binary'\\1', " + b +
          ")",
      "INSERT INTO " + S + ".edge SELECT 2, REPEAT('y', " + c + " + 1), REPEAT(_binary'\\1', " + b +
          " + 1)",
      std::string("GRANT SELECT ON ") + S + ".* TO " + kReader,
  };
}

class MysqlWideValue : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto root = openRoot();
    if (!root) return;
    dropAll(*root);
    for (const std::string& sql : setUpSql()) {
      if (!rootExec(*root, sql)) return;
    }
    ready_ = true;
  }
  static void TearDownTestSuite() {
    if (auto root = openRoot()) dropAll(*root);
  }
  void SetUp() override {
    requireEnv("MYSQL_DSN");
    ASSERT_TRUE(ready_) << "the test schema could not be made";
  }

  // A tool over `statement` with the test's byte cap.
  static std::string config(const std::string& statement, const std::string& parameters = "") {
    std::string yaml = "mysql:\n  tools:\n    wide:\n      description: d\n      statement: |\n";
    std::size_t start = 0;
    while (start <= statement.size()) {
      const auto nl = statement.find('\n', start);
      yaml +=
          "        " + statement.substr(start, nl == std::string::npos ? nl : nl - start) + "\n";
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    yaml += "      limits: {max_bytes: " + std::to_string(kCap) + ", max_rows: 50}\n" + parameters;
    return yaml;
  }

  static Json call(const std::string& statement, const Json& args = Json::object(),
                   const std::string& parameters = "") {
    Engine e(config(statement, parameters));
    EXPECT_TRUE(e.errors.empty()) << (e.errors.empty() ? "" : e.errors[0]);
    if (!e.errors.empty()) return Json();
    auto out = e.call("wide", args);
    EXPECT_TRUE(out) << statement << ": " << (out ? "" : out.error().message);
    if (out) {
      // A client validates structuredContent against the tool's output schema: `cut` included.
      const Status valid = protocol::validateJson(e.registry.find("wide")->output_schema,
                                                  out->structured, "structuredContent");
      EXPECT_TRUE(valid.ok()) << valid.error().message;
    }
    return out ? out->structured : Json();
  }

  // The statement run by the client layer itself, unwrapped and under a cap that cuts nothing
  // (only rows 2 and 3 are read): what the wrapper must not change.
  static QueryResult plain(const std::string& statement) {
    auto reader = openReader();
    if (!reader) return {};
    CallLimits limits;
    limits.max_bytes = 1 << 20;
    auto r = reader->run(statement, {}, limits);
    EXPECT_TRUE(r) << statement << ": " << (r ? "" : r.error().message);
    return r ? std::move(*r) : QueryResult{};
  }

  static inline bool ready_ = false;
};

std::vector<std::string> cutColumns(const Json& result, int row) {
  std::vector<std::string> out;
  for (const auto& c : result.value("cut", Json::array()))
    if (c["row"] == row) out.push_back(c["column"].get<std::string>());
  return out;
}

// The peak resident set of this process since the last reset (Linux: clear_refs 5 resets VmHWM).
long peakKiB() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
void resetPeak() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

TEST_F(MysqlWideValue, EveryUnboundedColumnIsCutAtTheSourceAndSaysSo) {
  const std::string sql =
      "SELECT id, label, body, data, doc, shape, note, kind FROM " + S + ".wide ORDER BY id";
  (void)call(sql);  // first connections, TLS, libraries: not what is measured
  resetPeak();
  const long before = peakKiB();
  const Json r = call(sql);
  const long growth_mib = (peakKiB() - before) / 1024;
  std::printf("[ wide ] peak RSS growth of the call: %ld MiB\n", growth_mib);
  // Three 15 MiB values, a 45 MiB row unwrapped, which the driver reads whole (measured: +123 MiB
  // unwrapped, +18 MiB wrapped in the ASan build, whose quarantine keeps freed memory resident).
  EXPECT_LT(growth_mib, 40) << "peak RSS grew by " << growth_mib << " MiB during the call";
  ASSERT_TRUE(r.is_object());
  ASSERT_EQ(r["row_count"], 4);
  EXPECT_TRUE(r["truncated"].get<bool>());
  EXPECT_NE(r["note"].get<std::string>().find("left in the database"), std::string::npos);
  // Row 1: every wide value cut, the bounded columns as stored.
  EXPECT_EQ(cutColumns(r, 0), (std::vector<std::string>{"body", "data", "doc", "shape", "note"}));
  for (const char* c : {"body", "data", "doc", "shape", "note"})
    EXPECT_TRUE(r["rows"][0][c].is_null()) << c;
  EXPECT_EQ(r["rows"][0]["label"], "one");
  EXPECT_EQ(r["rows"][0]["kind"], "a");
  // Row 2: within the cap, as stored; row 3: NULLs are not cuts; row 4: one byte over, cut.
  EXPECT_TRUE(cutColumns(r, 1).empty());
  EXPECT_EQ(r["rows"][1]["body"], "short");
  EXPECT_EQ(r["rows"][1]["data"], "YWJj");  // base64
  EXPECT_EQ(r["rows"][1]["doc"], "{\"k\": 2}");
  EXPECT_TRUE(r["rows"][1]["shape"].is_string());
  EXPECT_TRUE(cutColumns(r, 2).empty());
  EXPECT_TRUE(r["rows"][2]["body"].is_null());
  EXPECT_EQ(cutColumns(r, 3), (std::vector<std::string>{"body", "data"}));
  EXPECT_EQ(r["rows"][3]["label"], "four");
}

// A value exactly at the cap is not cut (the row is then over the result's byte cap, which ends
// the result as it always did); one byte more is.
TEST_F(MysqlWideValue, AValueAtTheCapIsNotCutOneByteMoreIs) {
  const Json at = call("SELECT body, data FROM " + S + ".edge WHERE id = 1");
  ASSERT_TRUE(at.is_object());
  EXPECT_FALSE(at.contains("cut"));
  EXPECT_EQ(at["row_count"], 0);
  EXPECT_TRUE(at["truncated"].get<bool>());
  const Json over = call("SELECT body, data FROM " + S + ".edge WHERE id = 2");
  ASSERT_TRUE(over.is_object());
  EXPECT_EQ(over["row_count"], 1);
  EXPECT_EQ(cutColumns(over, 0), (std::vector<std::string>{"body", "data"}));
}

TEST_F(MysqlWideValue, ColumnsRowsAndOrderAreThoseOfTheStatementUnwrapped) {
  const std::string sql = "SELECT id, label, body, data, doc, shape, note, kind FROM " + S +
                          ".wide WHERE id IN (2, 3) ORDER BY id DESC";
  const QueryResult unwrapped = plain(sql);
  const Json r = call(sql);
  ASSERT_TRUE(r.is_object());
  ASSERT_EQ(r["columns"].size(), unwrapped.columns.size());
  for (std::size_t i = 0; i < unwrapped.columns.size(); ++i) {
    EXPECT_EQ(r["columns"][i]["name"], unwrapped.columns[i].name);
    EXPECT_EQ(r["columns"][i]["type"], unwrapped.columns[i].type) << unwrapped.columns[i].name;
  }
  ASSERT_EQ(r["rows"].size(), unwrapped.rows.size());
  for (std::size_t row = 0; row < unwrapped.rows.size(); ++row)
    for (std::size_t i = 0; i < unwrapped.columns.size(); ++i)
      EXPECT_EQ(r["rows"][row][unwrapped.columns[i].name], unwrapped.rows[row][i]);
  EXPECT_FALSE(r["truncated"].get<bool>());
  EXPECT_FALSE(r.contains("cut"));
}

// Every statement shape the wrapper must hold: the rows and their order are the statement's own,
// and the wide value of row 1 is cut wherever it is read.
TEST_F(MysqlWideValue, EveryStatementShapeKeepsItsRowsAndItsOrder) {
  const std::string t = S + ".wide";
  struct Case {
    std::string sql;
    std::vector<int> ids;  // the expected ids, in order
  };
  const std::vector<Case> cases = {
      {"SELECT id, body FROM " + t + " ORDER BY id DESC", {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " ORDER BY id DESC;", {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " ORDER BY id DESC -- trailing", {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " ORDER BY 1 DESC", {4, 3, 2, 1}},
      {"SELECT w.id, w.body FROM " + t + " w ORDER BY w.id DESC", {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " ORDER BY id DESC # trailing", {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " ORDER BY id DESC /* trailing */ ;", {4, 3, 2, 1}},
      {"SELECT id, body -- a comment inside\nFROM " + t + " ORDER BY id DESC", {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " ORDER BY id DESC LIMIT 2", {4, 3}},
      {"SELECT id, body FROM " + t + " ORDER BY id DESC LIMIT 2 OFFSET 1", {3, 2}},
      {"SELECT id, body FROM " + t + " ORDER BY id DESC FETCH FIRST 3 ROWS ONLY", {4, 3, 2}},
      {"WITH w AS (SELECT id, body FROM " + t + ") SELECT id, body FROM w ORDER BY id DESC",
       {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " WHERE id < 3 UNION ALL SELECT id, body FROM " + t +
           " WHERE id >= 3 ORDER BY id DESC",
       {4, 3, 2, 1}},
      {"(SELECT id, body FROM " + t + " ORDER BY id DESC)", {4, 3, 2, 1}},
      {"SELECT id, body FROM (SELECT id, body FROM " + t + " ORDER BY id LIMIT 10) d ORDER BY " +
           "id DESC",
       {4, 3, 2, 1}},
      // Ordered by something else than its result columns: not wrapped, capped as values arrive
      // (the wide row then ends the result).
      {"SELECT id, body FROM " + t + " ORDER BY LENGTH(label), id", {}},
      // Two names alike, ordered by position: in place, and (DISTINCT) through a column list.
      {"SELECT id, body, label AS lbl, label AS LBL FROM " + t + " ORDER BY 1 DESC", {4, 3, 2, 1}},
      {"SELECT DISTINCT id, body, label AS lbl, label AS LBL FROM " + t + " ORDER BY 1 DESC",
       {4, 3, 2, 1}},
      {"SELECT DISTINCT id, body FROM " + t + " ORDER BY id DESC", {4, 3, 2, 1}},
      {"SELECT id, body FROM " + t + " ORDER BY body, id", {3, 2, 1, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql);
    const Json r = call(c.sql);
    ASSERT_TRUE(r.is_object());
    std::vector<int> ids;
    for (const auto& row : r["rows"]) ids.push_back(row["id"].get<int>());
    EXPECT_EQ(ids, c.ids) << r.dump().substr(0, 600);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] != 1) continue;
      EXPECT_TRUE(r["rows"][i]["body"].is_null());
      EXPECT_EQ(cutColumns(r, static_cast<int>(i)), std::vector<std::string>{"body"});
    }
  }
}

// Two columns of the same name: the wrapper reads the statement through a column list; both are
// guarded and reported under the statement's names.
TEST_F(MysqlWideValue, DuplicateNamesAndPlaceholdersAreKept) {
  const std::string sql = "SELECT w.id, w.body, v.body FROM " + S + ".wide w JOIN " + S +
                          ".wide v ON v.id = w.id WHERE w.id = ? OR w.id = ? ORDER BY w.id";
  const std::string parameters =
      "      parameters:\n        - {name: a, type: integer, description: d}\n"
      "        - {name: b, type: integer, description: d}\n";
  const Json r = call(sql, {{"a", 1}, {"b", 2}}, parameters);
  ASSERT_TRUE(r.is_object());
  ASSERT_EQ(r["row_count"], 2);
  ASSERT_EQ(r["columns"].size(), 3U);
  EXPECT_EQ(r["columns"][1]["name"], "body");
  EXPECT_EQ(r["columns"][2]["name"], "body");
  EXPECT_EQ(r["rows"][0]["id"], 1);
  EXPECT_EQ(r["rows"][1]["id"], 2);
  EXPECT_EQ(cutColumns(r, 0), (std::vector<std::string>{"body", "body"}));
  EXPECT_TRUE(cutColumns(r, 1).empty());
}

}  // namespace
}  // namespace mcpdb::mysql::itest
