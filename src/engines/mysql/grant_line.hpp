#pragma once
// One line of SHOW GRANTS (MySQL 8.0/8.4, MariaDB 10.6-11.x) read into a value: which privileges,
// at which level, to whom, with which options. The line is untrusted text from the server.
//
// Secrets: MariaDB prints `IDENTIFIED BY PASSWORD '*hash'` / `IDENTIFIED VIA ... USING '...'`.
// Nothing from the first bare IDENTIFIED word onwards is ever stored: that tail is only scanned
// for the REQUIRE/WITH clauses that follow it. Errors are fixed texts, never a piece of the line.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "engines/mysql/lexer.hpp"

namespace mcpdb::mysql {

// An account or role as SHOW GRANTS prints it: `user`@`host`, a MariaDB role `name` (no host),
// or MariaDB's PUBLIC.
struct Account {
  std::string user;
  std::string host;
  bool has_host = false;
  bool is_public = false;
  bool operator==(const Account&) const = default;
};

// Where a privilege applies.
enum class ObjectKind { Global, Database, Table, Procedure, Function, Package, PackageBody };

struct Level {
  ObjectKind kind = ObjectKind::Global;
  std::string db;    // database name or pattern (`db\_1`, `db%`) as stored; empty for Global
  std::string name;  // table or routine; empty for Global and Database
  bool operator==(const Level&) const = default;
};

// One privilege of a GRANT list, upper-cased with single spaces ("CREATE TEMPORARY TABLES"),
// with its column list when it is column-level.
struct Privilege {
  std::string name;
  std::vector<std::string> columns;
};

enum class LineKind {
  Privileges,     // GRANT <privileges> ON <level> TO <grantee>
  Proxy,          // GRANT PROXY ON <account> TO <grantee>
  Roles,          // GRANT <role>[, <role>] TO <grantee>
  PartialRevoke,  // REVOKE <privileges> ON <level> FROM <grantee> (MySQL partial_revokes)
  DefaultRole,    // SET DEFAULT ROLE <roles> FOR <grantee> (MariaDB)
};

struct GrantLine {
  LineKind kind = LineKind::Privileges;
  std::vector<Privilege> privileges;  // Privileges, PartialRevoke
  Level level;                        // Privileges, PartialRevoke
  Account proxied;                    // Proxy
  std::vector<Account> roles;         // Roles, DefaultRole
  Account grantee;
  bool grant_option = false;  // WITH GRANT OPTION
  bool admin_option = false;  // WITH ADMIN OPTION (role grants)
};

// Reads one SHOW GRANTS line. An error's message says what was wrong in fixed words.
Result<GrantLine> parseGrantLine(std::string_view line);

using guard::quoteName;  // `name` as a backtick-quoted identifier (lexer.hpp)
// `user`@`host`, `role` or PUBLIC; empty parts as '' (an empty quoted identifier is refused by
// some versions).
std::string accountSql(const Account& account);
// *.*, `db`.*, `db`.`t`, PROCEDURE `db`.`p`, FUNCTION ..., PACKAGE [BODY] ...
std::string levelSql(const Level& level);
// INSERT, or UPDATE (`a`, `b`) for a column-level privilege.
std::string privilegeSql(const Privilege& privilege);

}  // namespace mcpdb::mysql
