#pragma once
// Shared setup of the MySQL client integration tests: the environment written by
// scripts/servers.sh (MYSQL_DSN: the read-only principal; MYSQL_ADMIN_DSN: the fixture owner),
// and tables demo.mytest_* created once per process by the admin user.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "engines/mysql/connection.hpp"

namespace mcpdb::mysql::itest {

// The variable's value; fails the current test (never skips) when it is missing.
std::string requireEnv(const char* name);

// The parsed DSN of `variable` (MYSQL_DSN or MYSQL_ADMIN_DSN); fails the test when unusable.
Dsn dsnFrom(const char* variable);

// A connection of the read-only principal / of the admin user (through the same client layer).
std::optional<Connection> openReader();
std::optional<Connection> openAdmin();

// Creates the test tables (idempotent, safe under parallel test processes):
//   demo.mytest_numbers(n INT, pad VARCHAR(100)) with n = 1..1000 and pad = 100 'x';
//   demo.mytest_types with one row of every mapped type and one row of NULLs.
void ensureTestTables();

// Runs `sql` as admin text (setup only); fails the test on error.
void adminExec(const std::string& sql);

// The server administrator's connection (MYSQL_DOCTOR_ROOT_DSN), read-write: for tests that
// create accounts, grants, definer objects or wide rows. Fails the test when it cannot connect.
std::optional<Connection> openRoot();
// Runs `sql` on that connection; fails the test (naming the statement's start) on error.
bool rootExec(Connection& root, const std::string& sql);

// A statement that runs for minutes unless stopped: a three-way cross join of mytest_numbers.
inline constexpr const char* kSlowSql =
    "SELECT COUNT(*) FROM demo.mytest_numbers a, demo.mytest_numbers b, demo.mytest_numbers c "
    "WHERE a.n + b.n + c.n > 0";

}  // namespace mcpdb::mysql::itest
