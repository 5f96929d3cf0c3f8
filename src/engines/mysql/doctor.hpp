#pragma once
// `doctor` for MySQL/MariaDB on a live server: reads what the agent's principal may do (SHOW
// GRANTS of the account, of every role it holds, transitively, and of the roles every account
// holds implicitly) and hands it to checkGrants (grants.hpp), which names each write path with
// the exact REVOKE. Whatever cannot be read is Inconclusive, never Ok. No row and no GRANT line
// is ever logged or echoed (a line may hold a password hash; the parser drops it).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engines/mysql/connection.hpp"
#include "engines/mysql/grants.hpp"
#include "engines/mysql/routines.hpp"

namespace mcpdb::mysql {

// How the grants of one role are read: its SHOW GRANTS lines, or nullopt when they cannot be.
using RoleReader = std::function<std::optional<std::vector<std::string>>(const Account& role)>;

struct PrivilegeCheckOptions {
  // True for a routine checked to only read (routineCheckHook); unset: every EXECUTE is a write
  // path.
  std::function<bool(const Level& routine)> routine_is_read_only;
  // Wraps the reader that asks the server (tests use it to make a role unreadable); unset: the
  // server's answer is used as it is.
  std::function<RoleReader(RoleReader server)> wrap_role_reader;
};

// The findings for the principal of `conn`. The connection's session role may change while the
// roles are read (MariaDB shows a role's grants only while it is the current role); it is set
// back afterwards.
std::vector<GrantFinding> checkPrivileges(Connection& conn,
                                          const PrivilegeCheckOptions& options = {});

// Why `definer` (as information_schema shows it: "user@host", or a role's bare name) is not
// proved read-only, or nullopt when it is: the same analysis as the principal's (checkGrants), on
// SHOW GRANTS FOR the definer, its roles and the implicit ones. EXECUTE on a stored function is
// not counted (whatever a definer-rights body calls is vetted where it is reached); everything
// else that writes, or a line or role that cannot be read, leaves it unproved. The message names
// the definer (operator-facing) and, when its grants could not be read, the privilege that would
// let the principal read them.
std::optional<std::string> definerRefusal(Connection& conn, std::string_view definer);

// The definer-rights (SQL SECURITY DEFINER) views and functions the principal can see whose
// definer is not proved read-only (definerRefusal): a Violation when the object's definition, or
// what it reaches, may write (then the principal writes through it, whatever its own grants),
// Inconclusive when what it runs cannot be read or found, a Warning when it only reads (a tool
// reaching it is refused all the same). Nothing when all are proved; Inconclusive when they
// cannot be listed.
std::vector<GrantFinding> definerFindings(Connection& conn, RoutineChecker& checker);

// The routine_is_read_only hook backed by `checker`: a stored function whose body (and everything
// it calls) passes the guard, or that is allowlisted. Procedures and packages are never exempt:
// no configured statement can call them, so EXECUTE on them is never needed.
std::function<bool(const Level& routine)> routineCheckHook(RoutineChecker& checker);

}  // namespace mcpdb::mysql
