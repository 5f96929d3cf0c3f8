#pragma once
// The MySQL/MariaDB least-privilege check of `doctor`: from the SHOW GRANTS lines of the
// configured account and of every role it holds (transitively), proves that it can only read, or
// names each write path with the exact REVOKE that removes it. Pure: the engine runs the
// statements and hands the lines in; nothing here talks to a server.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engines/mysql/grant_line.hpp"

namespace mcpdb::mysql {

// One finding; mirrors engines::Finding (the engine maps it) without depending on it.
struct GrantFinding {
  enum class Severity {
    Ok,            // proved: only reads remain
    Violation,     // a write path; `fix` removes it
    Inconclusive,  // a line or role could not be read: nothing was proved
    Warning,       // not a write path, but weaker than it should be (definerFindings)
  };
  Severity severity = Severity::Inconclusive;
  std::string check;     // "mysql.privilege", "mysql.grant_option", "mysql.role", "mysql.grants"
  std::string message;   // safe to print: never a password hash or anything after IDENTIFIED
  std::string fix = {};  // the REVOKE statement(s) that remove the finding; empty when none
};

struct GrantsInput {
  using RoleLookup = std::function<std::optional<std::vector<std::string>>(const Account& role)>;
  // SHOW GRANTS of the configured account, one statement per line.
  std::vector<std::string> lines;
  // SHOW GRANTS FOR <role>; std::nullopt when they could not be read (the role's paths are then
  // Inconclusive). May be empty when the account holds no role.
  RoleLookup role_grants;
  // Roles every account holds without a GRANT line: MySQL's mandatory_roles, MariaDB's PUBLIC.
  std::vector<Account> implicit_roles;
  // True for a routine (level kind Procedure/Function/Package/PackageBody) the operator has
  // checked to only read; EXECUTE on it is then not a write path. Unset: every EXECUTE is one.
  std::function<bool(const Level& routine)> routine_is_read_only;
};

// Nested roles deeper than this are not followed (the path is Inconclusive).
inline constexpr int kMaxRoleDepth = 16;
// Distinct roles read below one granted role before the check gives up (Inconclusive).
inline constexpr int kMaxRolesPerPath = 256;

// The findings: a Violation per write privilege (and per GRANT/ADMIN OPTION) on each path, an
// Inconclusive per unreadable line, unknown privilege or unreadable role, and a single Ok when
// there is neither.
std::vector<GrantFinding> checkGrants(const GrantsInput& input);

}  // namespace mcpdb::mysql
