// One statement per call: typed parameters both ways, the type mapping of result cells, caps
// applied while fetching, and no session state surviving a call.
#include <gtest/gtest.h>

#include <limits>

#include "engines/mysql/row_reader.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

CallLimits roomy() {
  CallLimits l;
  l.max_rows = 10000;
  l.max_bytes = std::uint64_t{64} << 20;
  return l;
}

TEST(MysqlStatement, ParametersOfEveryTypeRoundTrip) {
  auto c = openReader();
  ASSERT_TRUE(c);
  const std::string text = std::string("nul\0inside", 10) + " ünï 🙂";
  const std::string bytes("\x00\xff\xc3\x28 raw", 8);
  std::vector<Param> params = {nullptr,
                               std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::max(),
                               0.1,
                               text,
                               Bytes{bytes}};
  auto r = c->run("SELECT ?, ?, ?, ?, ?, ?", params, roomy());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rows.size(), 1u);
  const auto& row = r->rows[0];
  EXPECT_TRUE(row[0].is_null());
  EXPECT_EQ(row[1].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(row[2].get<std::int64_t>(), std::numeric_limits<std::int64_t>::max());
  EXPECT_DOUBLE_EQ(row[3].get<double>(), 0.1);
  EXPECT_EQ(row[4].get<std::string>(), text);
  EXPECT_EQ(r->columns[4].type, "string");
  EXPECT_EQ(row[5].get<std::string>(), base64Encode(bytes));
  EXPECT_EQ(r->columns[5].type, "bytes");
  // And the server saw the exact bytes (not a converted copy).
  auto hex = c->run("SELECT HEX(?), HEX(?), LENGTH(?)",
                    std::vector<Param>{text, Bytes{bytes}, text}, roomy());
  ASSERT_TRUE(hex.ok()) << hex.error().message;
  EXPECT_EQ(hex->rows[0][1], "00FFC32820726177");
  EXPECT_EQ(hex->rows[0][2].get<std::int64_t>(), static_cast<std::int64_t>(text.size()));
}

TEST(MysqlStatement, InvalidUtf8TextIsRefusedBeforeSending) {
  auto c = openReader();
  ASSERT_TRUE(c);
  auto r = c->run("SELECT ?", std::vector<Param>{std::string("bad \xc3\x28 SECRETVAL")}, roomy());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  EXPECT_EQ(r.error().message.find("SECRETVAL"), std::string::npos);
  EXPECT_TRUE(c->usable());
}

TEST(MysqlStatement, WrongParameterCountIsInvalidArgument) {
  auto c = openReader();
  ASSERT_TRUE(c);
  auto r = c->run("SELECT ?, ?", std::vector<Param>{std::int64_t{1}}, roomy());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  EXPECT_TRUE(c->run("SELECT 1", {}, roomy()).ok());
}

TEST(MysqlStatement, HugeStringsRoundTrip) {
  auto c = openReader();
  ASSERT_TRUE(c);
  std::string big(4u << 20, 'a');
  big[12345] = '\0';
  big.back() = 'z';
  auto r = c->run("SELECT LENGTH(?), ?", std::vector<Param>{big, big}, roomy());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows[0][0].get<std::int64_t>(), static_cast<std::int64_t>(big.size()));
  EXPECT_EQ(r->rows[0][1].get<std::string>(), big);
}

TEST(MysqlStatement, ResultTypesMapToJson) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  auto r = c->run(
      "SELECT i, u, d, f, fl, dt, ts, tz, tm, y, s, b, bl, bt, e, j FROM demo.mytest_types ORDER "
      "BY id",
      {}, roomy());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rows.size(), 2u);
  const auto& v = r->rows[0];
  std::vector<std::string> types;
  for (const auto& col : r->columns) types.push_back(col.type);
  EXPECT_EQ(types, (std::vector<std::string>{"int", "int", "decimal", "double", "double", "date",
                                             "datetime", "timestamp", "time", "year", "string",
                                             "bytes", "bytes", "bit", "enum", "string"}));
  EXPECT_EQ(v[0].get<std::int64_t>(), -7);
  EXPECT_EQ(v[1].get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(v[2], "12345678901234567890.0000000001");
  EXPECT_DOUBLE_EQ(v[3].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(v[4].get<double>(), 1.5);
  EXPECT_EQ(v[5], "2024-02-29");
  EXPECT_EQ(v[6], "2024-01-15T10:20:30.123456");
  EXPECT_EQ(v[7], "2024-01-15T10:20:30.500Z");
  EXPECT_EQ(v[8], "-838:59:59");
  EXPECT_EQ(v[9].get<std::int64_t>(), 2024);
  EXPECT_EQ(v[10], "héllo \"q\"");
  EXPECT_EQ(v[11], base64Encode(std::string("\x00\xff\x48\x69", 4)));
  EXPECT_EQ(v[12], base64Encode("\xde\xad\xbe\xef"));
  EXPECT_EQ(v[13].get<std::uint64_t>(), 5u);
  EXPECT_EQ(v[14], "b");
  EXPECT_EQ(v[15], "{\"a\": [1, 2]}");
  EXPECT_EQ(r->columns[0].name, "i");
  // Expressions have no fixed scale: microseconds are kept when present.
  auto expr = c->run(
      "SELECT CAST('2024-01-15 10:20:30.25' AS DATETIME(6)) + INTERVAL 0 SECOND, "
      "TIMESTAMP'2024-01-15 10:20:30'",
      {}, roomy());
  ASSERT_TRUE(expr.ok()) << expr.error().message;
  EXPECT_EQ(expr->rows[0][0], "2024-01-15T10:20:30.250000");
  EXPECT_EQ(expr->rows[0][1], "2024-01-15T10:20:30");
  for (std::size_t i = 0; i < r->rows[1].size(); ++i) EXPECT_TRUE(r->rows[1][i].is_null()) << i;
}

TEST(MysqlStatement, RowCapTruncatesWhileFetching) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  CallLimits l = roomy();
  l.max_rows = 10;
  auto r = c->run("SELECT n FROM demo.mytest_numbers ORDER BY n", {}, l);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows.size(), 10u);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->rows.back()[0].get<std::int64_t>(), 10);
  l.max_rows = 1000;  // exactly all rows: not truncated
  auto all = c->run("SELECT n FROM demo.mytest_numbers", {}, l);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->rows.size(), 1000u);
  EXPECT_FALSE(all->truncated);
}

// The server itself stops one row past the row cap (sql_select_limit in the statement's text),
// so a capped call never makes it send the rest of a large result; a LIMIT in the statement
// still applies. Rows_sent counts the rows the session sent; queryValue reads it on the same
// session (the probe's own row is counted once it is sent: hence the - 1).
TEST(MysqlStatement, TheServerSendsAtMostOneRowPastTheRowCap) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  auto rowsSent = [&c] {
    auto v = c->queryValue(
        "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS "
        "WHERE VARIABLE_NAME = 'ROWS_SENT'");
    return v.ok() ? std::stoll(*v) : -1000000LL;
  };
  CallLimits l = roomy();
  l.max_rows = 5;
  long long before = rowsSent();
  auto r = c->run("SELECT n FROM demo.mytest_numbers ORDER BY n", {}, l);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows.size(), 5u);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(rowsSent() - before - 1, 6);

  ASSERT_TRUE(c->resetSession().ok());  // now, not inside the next run() (it may zero the count)
  before = rowsSent();
  auto limited = c->run("SELECT n FROM demo.mytest_numbers ORDER BY n LIMIT 2", {}, l);
  ASSERT_TRUE(limited.ok()) << limited.error().message;
  EXPECT_EQ(limited->rows.size(), 2u);
  EXPECT_FALSE(limited->truncated);
  EXPECT_EQ(rowsSent() - before - 1, 2);
  // A subquery is not cut by the limit: the count is over all 1000 rows.
  auto counted =
      c->run("SELECT (SELECT COUNT(*) FROM (SELECT n FROM demo.mytest_numbers) x) AS c", {}, l);
  ASSERT_TRUE(counted.ok()) << counted.error().message;
  EXPECT_EQ(counted->rows.at(0).at(0).get<std::int64_t>(), 1000);
}

TEST(MysqlStatement, ByteCapTruncatesWhileFetching) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  CallLimits l = roomy();
  // Rows are counted as the result carries them: {"n":1,"pad":"<100 characters>"} plus a
  // separator, 114-117 bytes each, so 8 fit in 1000.
  l.max_bytes = 1000;
  auto r = c->run("SELECT n, pad FROM demo.mytest_numbers ORDER BY n", {}, l);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows.size(), 8u);
  EXPECT_TRUE(r->truncated);
  EXPECT_LE(r->bytes, 1000u);
  // Escaping counts: 200 control characters are 200 bytes on the wire but 1,200 in JSON
  // (\u0001 each), so the row does not fit in 1,024 bytes.
  l.max_bytes = 1024;
  auto escaped = c->run("SELECT CONVERT(REPEAT(CHAR(1), 200) USING utf8mb4) AS s", {}, l);
  ASSERT_TRUE(escaped.ok()) << escaped.error().message;
  EXPECT_TRUE(escaped->rows.empty());
  EXPECT_TRUE(escaped->truncated);
  // One cell larger than the whole budget: nothing, truncated, no allocation of the cell.
  l.max_bytes = 1024;
  auto big = c->run("SELECT REPEAT('x', 1000000)", {}, l);
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_TRUE(big->rows.empty());
  EXPECT_TRUE(big->truncated);
}

// The connection's own guarantee, without a pool: a call never starts on a session a previous
// call used (run() resets it first); the pool resets earlier, off the caller's time (pool_test).
TEST(MysqlStatement, NoSessionStateSurvivesACall) {
  auto c = openReader();
  auto other = openReader();
  ASSERT_TRUE(c && other);
  EXPECT_FALSE(c->needsReset());
  auto lock = c->run("SELECT GET_LOCK('mcpdb_itest_lock', 0), @v := 42", {}, roomy());
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_EQ(lock->rows[0][0].get<std::int64_t>(), 1);
  EXPECT_TRUE(c->needsReset());
  auto after = c->run("SELECT IS_USED_LOCK('mcpdb_itest_lock'), @v", {}, roomy());
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(after->rows[0][0].is_null());
  EXPECT_TRUE(after->rows[0][1].is_null());
  // Released by the reset: another session can take it.
  EXPECT_EQ(*other->queryValue("SELECT IS_FREE_LOCK('mcpdb_itest_lock')"), "1");
  // And the session is still read-only with our sql_mode once reset, in the READ ONLY
  // transaction the reset began for the next call (none of the used one's state in it).
  ASSERT_TRUE(c->resetSession().ok());
  EXPECT_FALSE(c->needsReset());
  EXPECT_EQ(*c->queryValue("SELECT @@SESSION.tx_read_only"), "1");
  EXPECT_EQ(*c->queryValue("SELECT @@SESSION.sql_mode"), kSessionSqlMode);
  EXPECT_EQ(*c->queryValue("SELECT @@in_transaction"), "1");
}

TEST(MysqlStatement, TimeLimitStopsASlowStatement) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  CallLimits l = roomy();
  l.timeout = std::chrono::milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = c->run(kSlowSql, {}, l);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::TimedOut) << r.error().message;
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_TRUE(c->usable());
  auto next = c->run("SELECT 7", {}, roomy());
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->rows[0][0].get<std::int64_t>(), 7);
}

}  // namespace
}  // namespace mcpdb::mysql::itest

namespace mcpdb::mysql::itest {
namespace {

// Larger than the server's max_allowed_packet (16 MiB by default): refused before sending, and
// the connection stays usable (the server would have dropped it).
TEST(MysqlStatement, OversizeRequestIsRefusedAndTheConnectionKept) {
  auto c = openReader();
  ASSERT_TRUE(c);
  ASSERT_GT(c->server().max_packet, 0u);
  const std::string huge(c->server().max_packet + 1, 'h');
  auto r = c->run("SELECT LENGTH(?)", std::vector<Param>{huge}, CallLimits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted) << r.error().message;
  EXPECT_EQ(r.error().message.find("hhhh"), std::string::npos);
  ASSERT_TRUE(c->usable());
  auto next = c->run("SELECT 5", {}, CallLimits{});
  ASSERT_TRUE(next.ok()) << next.error().message;
}

}  // namespace
}  // namespace mcpdb::mysql::itest
