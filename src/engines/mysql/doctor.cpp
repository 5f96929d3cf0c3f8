// Reading the grants from the server. Decisions:
// - SHOW GRANTS FOR CURRENT_USER(): the account the server actually matched (host patterns
//   included), not the user name the DSN asked for.
// - A role's grants: SHOW GRANTS FOR <role> first (MySQL allows it for a granted role only with
//   SELECT on mysql, MariaDB for the current role only); on MariaDB, when refused, SET ROLE
//   <role> and ask again. MariaDB's answer for a role lists the grants of every role nested below
//   it too (each line names its grantee), so a nested role, which cannot be SET directly, is
//   answered from its parent's listing.
// - Implicit roles: MariaDB 10.11+ PUBLIC, MySQL's @@mandatory_roles.

#include "engines/mysql/doctor.hpp"

#include <map>
#include <utility>

namespace mcpdb::mysql {
namespace {

using Sev = GrantFinding::Severity;

std::optional<std::vector<std::string>> readLines(Connection& conn, const std::string& sql) {
  auto rows = conn.queryColumn(sql);
  if (!rows) return std::nullopt;
  std::vector<std::string> lines;
  for (auto& row : *rows) {
    if (row) lines.push_back(std::move(*row));
  }
  return lines;
}

// Reads role grants from the server, remembering nested roles' lines found in a parent's listing.
class ServerRoleReader {
 public:
  explicit ServerRoleReader(Connection& conn) : conn_(conn) {}

  std::optional<std::vector<std::string>> read(const Account& role) {
    const std::string name = accountSql(role);
    if (auto it = listed_.find(name); it != listed_.end()) return it->second;
    const std::string show = "SHOW GRANTS FOR " + name;
    auto lines = readLines(conn_, show);
    if (!lines && conn_.server().flavour == Flavour::MariaDB && !role.is_public && !role.has_host &&
        conn_.usable()) {
      if (!switched_) {
        auto current = conn_.queryValue("SELECT COALESCE(CURRENT_ROLE(), '')");
        if (!current) return std::nullopt;
        original_ = *current;
      }
      if (conn_.queryValue("SET ROLE " + name).ok()) {
        switched_ = true;
        lines = readLines(conn_, show);
      }
    }
    if (lines) remember(role, *lines);
    return lines;
  }

  // Back to the session's role from before, when one was set here.
  void restore() {
    if (!switched_ || !conn_.usable()) return;
    (void)conn_.queryValue(original_.empty() ? "SET ROLE NONE"
                                             : "SET ROLE " + quoteName(original_));
  }

 private:
  // Files the lines of roles below `role` under their grantee.
  void remember(const Account& role, const std::vector<std::string>& lines) {
    std::map<std::string, std::vector<std::string>> nested;
    for (const std::string& line : lines) {
      auto parsed = parseGrantLine(line);
      if (!parsed || parsed->kind == LineKind::DefaultRole) continue;
      if (parsed->grantee == role || parsed->grantee.has_host) continue;
      nested[accountSql(parsed->grantee)].push_back(line);
    }
    for (auto& [name, own] : nested) listed_.emplace(name, std::move(own));
  }

  Connection& conn_;
  std::map<std::string, std::vector<std::string>> listed_;
  bool switched_ = false;
  std::string original_;  // CURRENT_ROLE() before the first SET ROLE; empty: none
};

// MySQL's @@mandatory_roles: "`r1`@`%`,r2@localhost,r3" (quotes optional). Parsed leniently: an
// entry that does not read as a name is skipped and reported by the caller as Inconclusive.
std::optional<std::vector<Account>> parseRoleList(const std::string& text) {
  std::vector<Account> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string entry = text.substr(start, comma - start);
    start = comma + 1;
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t");
      const auto e = s.find_last_not_of(" \t");
      s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
      if (s.size() >= 2 && (s.front() == '`' || s.front() == '\'' || s.front() == '"') &&
          s.back() == s.front()) {
        s = s.substr(1, s.size() - 2);
      }
      return s;
    };
    if (trim(entry).empty()) continue;
    const auto at = entry.rfind('@');
    Account a;
    a.user = trim(at == std::string::npos ? entry : entry.substr(0, at));
    a.host = at == std::string::npos ? "%" : trim(entry.substr(at + 1));
    a.has_host = true;
    if (a.user.empty() || a.user.find_first_of("`'\"") != std::string::npos ||
        a.host.find_first_of("`'\"") != std::string::npos) {
      return std::nullopt;
    }
    out.push_back(std::move(a));
  }
  return out;
}

// MariaDB 10.11+ PUBLIC, MySQL's @@mandatory_roles; nullopt when they cannot be read.
std::optional<std::vector<Account>> implicitRoles(Connection& conn) {
  if (conn.server().flavour == Flavour::MariaDB) {
    if (conn.server().version_number >= 101100) {
      return std::vector<Account>{Account{"PUBLIC", "", false, true}};
    }
    return std::vector<Account>{};
  }
  auto mandatory = conn.queryValue("SELECT @@GLOBAL.mandatory_roles");
  return mandatory ? parseRoleList(*mandatory) : std::nullopt;
}

// "user@host" (the host after the last '@') or a role's name.
Account definerAccount(std::string_view definer) {
  const auto at = definer.rfind('@');
  if (at == std::string_view::npos) return Account{std::string(definer), "", false, false};
  return Account{std::string(definer.substr(0, at)), std::string(definer.substr(at + 1)), true,
                 false};
}

}  // namespace

std::optional<std::string> definerRefusal(Connection& conn, std::string_view definer) {
  const Account account = definerAccount(definer);
  const std::string shown = accountSql(account);
  if (account.user.empty()) return "its definer is not named: nothing can be proved about it";
  auto lines = readLines(conn, "SHOW GRANTS FOR " + shown);
  if (!lines) {
    return "the grants of its definer " + shown +
           " cannot be read by this account (SHOW GRANTS for another account needs SELECT on "
           "the mysql schema): grant that, make it SQL SECURITY INVOKER, or give it a "
           "read-only definer";
  }
  auto implicit = implicitRoles(conn);
  if (!implicit) return "the roles every account holds could not be read (@@mandatory_roles)";
  GrantsInput input;
  input.lines = std::move(*lines);
  input.implicit_roles = std::move(*implicit);
  input.role_grants = [&conn](const Account& role) {
    return readLines(conn, "SHOW GRANTS FOR " + accountSql(role));
  };
  input.routine_is_read_only = [](const Level& routine) {
    return routine.kind == ObjectKind::Function;
  };
  for (const GrantFinding& f : checkGrants(input)) {
    if (f.severity == Sev::Ok) continue;
    return "its definer " + shown + " is not proved read-only: " + f.message;
  }
  return std::nullopt;
}

std::vector<GrantFinding> checkPrivileges(Connection& conn, const PrivilegeCheckOptions& options) {
  std::vector<GrantFinding> extra;
  auto lines = conn.queryColumn("SHOW GRANTS FOR CURRENT_USER()");
  if (!lines) {
    return {GrantFinding{Sev::Inconclusive, "mysql.grants",
                         "SHOW GRANTS FOR CURRENT_USER() failed (" + operatorText(lines.error()) +
                             "): nothing was checked"}};
  }
  GrantsInput input;
  for (auto& line : *lines) {
    if (line) input.lines.push_back(std::move(*line));
  }
  if (auto roles = implicitRoles(conn)) {
    input.implicit_roles = std::move(*roles);
  } else {
    extra.push_back(GrantFinding{Sev::Inconclusive, "mysql.role",
                                 "@@mandatory_roles could not be read: the roles every account "
                                 "holds were not checked"});
  }
  ServerRoleReader server(conn);
  RoleReader reader = [&server](const Account& role) { return server.read(role); };
  if (options.wrap_role_reader) reader = options.wrap_role_reader(reader);
  input.role_grants = reader;
  input.routine_is_read_only = options.routine_is_read_only;
  auto findings = checkGrants(input);
  server.restore();
  if (!extra.empty()) {
    // An Ok proved nothing when part of the input was missing.
    std::erase_if(findings, [](const GrantFinding& f) { return f.severity == Sev::Ok; });
    findings.insert(findings.end(), extra.begin(), extra.end());
  }
  return findings;
}

std::vector<GrantFinding> definerFindings(Connection& conn, RoutineChecker& checker) {
  auto rows = conn.queryRows(
      "SELECT 'VIEW', TABLE_SCHEMA, TABLE_NAME, DEFINER FROM information_schema.VIEWS "
      "WHERE SECURITY_TYPE = 'DEFINER' UNION ALL "
      "SELECT ROUTINE_TYPE, ROUTINE_SCHEMA, ROUTINE_NAME, DEFINER FROM information_schema.ROUTINES "
      "WHERE SECURITY_TYPE = 'DEFINER' AND ROUTINE_TYPE = 'FUNCTION'",
      kMaxCatalogRows);
  if (!rows) {
    return {GrantFinding{Sev::Inconclusive, "mysql.definer",
                         "the definer-rights views and functions could not be listed (" +
                             operatorText(rows.error()) + "): their definers were not checked"}};
  }
  std::vector<GrantFinding> out;
  std::map<std::string, std::optional<std::string>> definers;
  for (const auto& r : *rows) {
    if (r.size() != 4 || !r[0] || !r[1] || !r[2] || !r[3]) continue;
    auto it = definers.find(*r[3]);
    if (it == definers.end()) it = definers.emplace(*r[3], definerRefusal(conn, *r[3])).first;
    if (!it->second) continue;
    const bool isView = *r[0] == "VIEW";
    const guard::Name name{*r[1], *r[2]};
    RoutineVerdict v;
    if (isView) {
      auto views = checker.checkViews({name});
      if (!views.empty()) v = views.front();
    } else {
      v = checker.checkFunction(name[0], name[1]);
    }
    const std::string shown = (isView ? "view " : "function ") + guard::displayName(name) +
                              " runs with its definer's rights (SQL SECURITY DEFINER), and " +
                              *it->second;
    const std::string fix =
        isView ? "recreate " + guard::displayName(name) +
                     " with SQL SECURITY INVOKER or a read-only DEFINER, or revoke this "
                     "account's SELECT on it"
               : "ALTER FUNCTION " + quoteName(name[0]) + "." + quoteName(name[1]) +
                     " SQL SECURITY INVOKER;";
    if (v.kind == RefusalKind::MayWrite) {
      out.push_back(
          {Sev::Violation, "mysql.definer", shown + "; what it runs may write: " + v.reason, fix});
    } else if (v.kind == RefusalKind::Definer) {
      out.push_back({Sev::Warning, "mysql.definer",
                     shown + "; it reads today, but a tool reaching it is refused", fix});
    } else {
      // What it runs could not be read: whether it writes is not known.
      out.push_back({Sev::Inconclusive, "mysql.definer",
                     shown + "; what it runs could not be checked: " + v.reason, fix});
    }
  }
  return out;
}

std::function<bool(const Level& routine)> routineCheckHook(RoutineChecker& checker) {
  return [&checker](const Level& routine) {
    if (routine.kind != ObjectKind::Function) return false;
    return checker.checkFunction(routine.db, routine.name).allowed;
  };
}

}  // namespace mcpdb::mysql
