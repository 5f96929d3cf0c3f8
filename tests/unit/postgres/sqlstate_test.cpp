// SQLSTATE -> Code mapping and the safety of every message shown to clients.
#include <gtest/gtest.h>

#include "engines/postgres/sqlstate.hpp"

namespace mcpdb::postgres {
namespace {

TEST(PostgresSqlstate, Codes) {
  EXPECT_EQ(codeForSqlstate("25006"), Code::PermissionDenied);
  EXPECT_EQ(codeForSqlstate("42501"), Code::PermissionDenied);
  EXPECT_EQ(codeForSqlstate("57014"), Code::TimedOut);
  EXPECT_EQ(codeForSqlstate("08006"), Code::Unavailable);
  EXPECT_EQ(codeForSqlstate("08001"), Code::Unavailable);
  EXPECT_EQ(codeForSqlstate("57P01"), Code::Unavailable);
  EXPECT_EQ(codeForSqlstate("22P02"), Code::InvalidArgument);
  EXPECT_EQ(codeForSqlstate("22999"), Code::InvalidArgument);
  EXPECT_EQ(codeForSqlstate("42804"), Code::InvalidArgument);
  EXPECT_EQ(codeForSqlstate("42P99"), Code::InvalidArgument);
  EXPECT_EQ(codeForSqlstate("42P01"), Code::FailedPrecondition);
  EXPECT_EQ(codeForSqlstate("42703"), Code::FailedPrecondition);
  EXPECT_EQ(codeForSqlstate("53200"), Code::ResourceExhausted);
  EXPECT_EQ(codeForSqlstate("40001"), Code::Unavailable);
  EXPECT_EQ(codeForSqlstate("XX000"), Code::Internal);
  EXPECT_EQ(codeForSqlstate(""), Code::Internal);
}

TEST(PostgresSqlstate, Messages) {
  EXPECT_EQ(errorFromSqlstate("25006").message,
            "the database refused the query: the transaction is read-only, writes are refused "
            "(SQLSTATE 25006 "
            "read_only_sql_transaction)");
  EXPECT_EQ(errorFromSqlstate("22023").message,
            "the database refused the query: a value is not valid for this query (SQLSTATE 22023)");
  EXPECT_EQ(errorFromSqlstate("XX001").message,
            "the database reported an unexpected error (SQLSTATE XX001)");
  // Garbage in the SQLSTATE field is never echoed.
  EXPECT_EQ(errorFromSqlstate("a'b\"c").message,
            "the database reported an unexpected error (SQLSTATE -----)");
}

TEST(PostgresSqlstate, ConnectErrorsNeverRepeatLibpqText) {
  const std::string libpq =
      "connection to server at \"db.internal.example\" (10.0.0.5), port 5432 failed: FATAL:  "
      "password "
      "authentication failed for user \"mcp_reader\"";
  const Error e = connectError(libpq);
  EXPECT_EQ(e.code, Code::FailedPrecondition);
  EXPECT_EQ(e.message.find("db.internal"), std::string::npos);
  EXPECT_EQ(e.message.find("mcp_reader"), std::string::npos);
  EXPECT_EQ(e.message.find("10.0.0.5"), std::string::npos);
  EXPECT_EQ(connectError("could not connect to server: Connection refused").code,
            Code::Unavailable);
  EXPECT_EQ(connectError("timeout expired").message,
            "cannot connect to PostgreSQL: connecting timed out");
  EXPECT_EQ(connectError("server certificate for \"x\" does not match host name \"y\"").code,
            Code::FailedPrecondition);
}

TEST(PostgresSqlstate, ConnectErrorsTellTheOperatorWhereAndWhy) {
  // The client-safe message says which mistake; the operator-only detail says where and the
  // server's own reason (no password is ever in libpq's text).
  const Error db = connectError(
      "connection to server at \"127.0.0.1\", port 25432 failed: FATAL:  database \"nope\" does "
      "not exist\n",
      "127.0.0.1:25432");
  EXPECT_EQ(db.message,
            "cannot connect to PostgreSQL: the configured database does not exist (check the "
            "database name in POSTGRES_DSN)");
  EXPECT_EQ(db.detail, "at 127.0.0.1:25432: database \"nope\" does not exist");
  const Error role = connectError(
      "connection to server at \"h\" (10.0.0.5), port 5432 failed: FATAL:  role \"nobody\" does "
      "not exist",
      "h:5432");
  EXPECT_EQ(role.message,
            "cannot connect to PostgreSQL: the configured role does not exist (check the user "
            "name in POSTGRES_DSN)");
  const Error refused = connectError(
      "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server "
      "running on that host and accepting TCP/IP connections?\n",
      "127.0.0.1:1");
  EXPECT_EQ(refused.message, "cannot connect to PostgreSQL: the server is unreachable");
  EXPECT_EQ(refused.detail, "at 127.0.0.1:1: Connection refused");
  EXPECT_EQ(operatorText(refused),
            "cannot connect to PostgreSQL: the server is unreachable (at 127.0.0.1:1: "
            "Connection refused)");
}

TEST(PostgresSqlstate, RedactsForLogs) {
  const std::string r = redactLibpqMessage(
      "connection to server at \"db.internal.example\" (10.0.0.5), port 5432 failed: FATAL:  "
      "password "
      "authentication failed for user \"mcp_reader\"");
  EXPECT_EQ(r.find("db.internal"), std::string::npos);
  EXPECT_EQ(r.find("mcp_reader"), std::string::npos);
  EXPECT_EQ(r.find("5432"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::postgres
