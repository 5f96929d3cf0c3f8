// Classifies what SHOW GRANTS says an account (and every role it holds, transitively) may do.
// The only privileges that leave a verdict Ok are those that read this server's data or its
// definitions; everything else known is a Violation, anything unknown is Inconclusive.
//
// Decisions:
// - SHOW DATABASES is Ok: it lists database names, which the server's own schema tools expose
//   anyway; it reads nothing else and writes nothing. SHOW VIEW, SHOW CREATE ROUTINE (MariaDB) and
//   SHOW_ROUTINE (MySQL) read definitions only. USAGE is "no privilege".
// - REFERENCES is a Violation: it exists to attach foreign keys to another table, i.e. to change
//   how that table may be written (a RESTRICT key blocks its deletes). It is inert only while no
//   CREATE/ALTER is reachable, a read-only principal never needs it, and revoking it is free.
// - EXECUTE is a Violation: a routine may write and MySQL does not enforce READS SQL DATA, and a
//   SQL SECURITY DEFINER routine writes with its definer's rights. Routines the operator checked
//   (GrantsInput::routine_is_read_only) are exempt, only at routine level: EXECUTE on a database
//   or *.* covers routines created later.
// - A write reached through a role is fixed by revoking the role where the path leaves the
//   account (REVOKE `writer` FROM `agent`@`%`): revoking the privilege from the role instead would
//   change every other holder of that role.

#include "engines/mysql/grants.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <set>
#include <string_view>
#include <utility>

namespace mcpdb::mysql {
namespace {

using Sev = GrantFinding::Severity;

enum class Effect { Read, Usage, Execute, Write };

struct KnownPrivilege {
  std::string_view name;
  Effect effect;
  std::string_view why;  // for the message of a Violation
};

constexpr std::string_view kRows = "writes rows";
constexpr std::string_view kSchema = "changes the schema";
constexpr std::string_view kServer = "administers the server, beyond this database";
constexpr std::string_view kAccounts = "manages accounts or privileges";
constexpr std::string_view kReplication = "reads the binary log or drives replication";

// Static privileges of MySQL 8.0/8.4 and MariaDB 10.6-11.x (MariaDB's 10.5 split of SUPER
// included), then MySQL's dynamic privileges. Names as SHOW GRANTS prints them.
constexpr std::array kKnown = {
    KnownPrivilege{"SELECT", Effect::Read, ""},
    KnownPrivilege{"SHOW VIEW", Effect::Read, ""},
    KnownPrivilege{"SHOW DATABASES", Effect::Read, ""},
    KnownPrivilege{"SHOW CREATE ROUTINE", Effect::Read, ""},
    KnownPrivilege{"SHOW_ROUTINE", Effect::Read, ""},
    KnownPrivilege{"USAGE", Effect::Usage, ""},
    KnownPrivilege{"EXECUTE", Effect::Execute,
                   "runs routines, which can write (MySQL does not enforce READS SQL DATA)"},
    KnownPrivilege{"INSERT", Effect::Write, kRows},
    KnownPrivilege{"UPDATE", Effect::Write, kRows},
    KnownPrivilege{"DELETE", Effect::Write, kRows},
    KnownPrivilege{"DELETE HISTORY", Effect::Write, "deletes the history of versioned tables"},
    KnownPrivilege{"CREATE", Effect::Write, kSchema},
    KnownPrivilege{"DROP", Effect::Write, kSchema},
    KnownPrivilege{"ALTER", Effect::Write, kSchema},
    KnownPrivilege{"INDEX", Effect::Write, kSchema},
    KnownPrivilege{"REFERENCES", Effect::Write,
                   "adds foreign keys that restrict how other tables are written"},
    KnownPrivilege{"CREATE VIEW", Effect::Write, kSchema},
    KnownPrivilege{"CREATE ROUTINE", Effect::Write, kSchema},
    KnownPrivilege{"ALTER ROUTINE", Effect::Write, kSchema},
    KnownPrivilege{"TRIGGER", Effect::Write, kSchema},
    KnownPrivilege{"EVENT", Effect::Write, "schedules statements (events)"},
    KnownPrivilege{"CREATE TABLESPACE", Effect::Write, kSchema},
    KnownPrivilege{"CREATE TEMPORARY TABLES", Effect::Write,
                   "creates temporary tables, writes that outlive a call on a pooled connection"},
    KnownPrivilege{"LOCK TABLES", Effect::Write, "locks tables against other clients"},
    KnownPrivilege{"FILE", Effect::Write, "reads and writes files on the database host"},
    KnownPrivilege{"PROCESS", Effect::Write, "sees other sessions and their statements"},
    KnownPrivilege{"SUPER", Effect::Write, kServer},
    KnownPrivilege{"RELOAD", Effect::Write, kServer},
    KnownPrivilege{"SHUTDOWN", Effect::Write, kServer},
    KnownPrivilege{"CREATE USER", Effect::Write, kAccounts},
    KnownPrivilege{"CREATE ROLE", Effect::Write, kAccounts},
    KnownPrivilege{"DROP ROLE", Effect::Write, kAccounts},
    KnownPrivilege{"GRANT OPTION", Effect::Write, kAccounts},
    KnownPrivilege{"PROXY", Effect::Write, "acts as another account"},
    KnownPrivilege{"ALL", Effect::Write, "every privilege at this level"},
    KnownPrivilege{"ALL PRIVILEGES", Effect::Write, "every privilege at this level"},
    KnownPrivilege{"REPLICATION SLAVE", Effect::Write, kReplication},
    KnownPrivilege{"REPLICATION REPLICA", Effect::Write, kReplication},
    KnownPrivilege{"REPLICATION CLIENT", Effect::Write, kReplication},
    KnownPrivilege{"BINLOG MONITOR", Effect::Write, kReplication},
    KnownPrivilege{"BINLOG ADMIN", Effect::Write, kReplication},
    KnownPrivilege{"BINLOG REPLAY", Effect::Write, kReplication},
    KnownPrivilege{"SLAVE MONITOR", Effect::Write, kReplication},
    KnownPrivilege{"REPLICA MONITOR", Effect::Write, kReplication},
    KnownPrivilege{"REPLICATION MASTER ADMIN", Effect::Write, kReplication},
    KnownPrivilege{"REPLICATION SLAVE ADMIN", Effect::Write, kReplication},
    KnownPrivilege{"READ_ONLY ADMIN", Effect::Write, kServer},
    KnownPrivilege{"CONNECTION ADMIN", Effect::Write, kServer},
    KnownPrivilege{"FEDERATED ADMIN", Effect::Write, kServer},
    KnownPrivilege{"SET USER", Effect::Write, kAccounts},
    // MySQL 8.0/8.4 dynamic privileges.
    KnownPrivilege{"APPLICATION_PASSWORD_ADMIN", Effect::Write, kAccounts},
    KnownPrivilege{"AUDIT_ABORT_EXEMPT", Effect::Write, kServer},
    KnownPrivilege{"AUDIT_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"AUTHENTICATION_POLICY_ADMIN", Effect::Write, kAccounts},
    KnownPrivilege{"BACKUP_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"BINLOG_ADMIN", Effect::Write, kReplication},
    KnownPrivilege{"BINLOG_ENCRYPTION_ADMIN", Effect::Write, kReplication},
    KnownPrivilege{"CLONE_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"CONNECTION_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"ENCRYPTION_KEY_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"FIREWALL_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"FIREWALL_EXEMPT", Effect::Write, kServer},
    KnownPrivilege{"FIREWALL_USER", Effect::Write, kServer},
    KnownPrivilege{"FLUSH_OPTIMIZER_COSTS", Effect::Write, kServer},
    KnownPrivilege{"FLUSH_PRIVILEGES", Effect::Write, kServer},
    KnownPrivilege{"FLUSH_STATUS", Effect::Write, kServer},
    KnownPrivilege{"FLUSH_TABLES", Effect::Write, kServer},
    KnownPrivilege{"FLUSH_USER_RESOURCES", Effect::Write, kServer},
    KnownPrivilege{"GROUP_REPLICATION_ADMIN", Effect::Write, kReplication},
    KnownPrivilege{"GROUP_REPLICATION_STREAM", Effect::Write, kReplication},
    KnownPrivilege{"INNODB_REDO_LOG_ARCHIVE", Effect::Write, kServer},
    KnownPrivilege{"INNODB_REDO_LOG_ENABLE", Effect::Write, kServer},
    KnownPrivilege{"MASKING_DICTIONARIES_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"NDB_STORED_USER", Effect::Write, kAccounts},
    KnownPrivilege{"OPTIMIZE_LOCAL_TABLE", Effect::Write, kServer},
    KnownPrivilege{"PASSWORDLESS_USER_ADMIN", Effect::Write, kAccounts},
    KnownPrivilege{"PERSIST_RO_VARIABLES_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"REPLICATION_APPLIER", Effect::Write, kReplication},
    KnownPrivilege{"REPLICATION_SLAVE_ADMIN", Effect::Write, kReplication},
    KnownPrivilege{"RESOURCE_GROUP_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"RESOURCE_GROUP_USER", Effect::Write, kServer},
    KnownPrivilege{"ROLE_ADMIN", Effect::Write, kAccounts},
    KnownPrivilege{"SENSITIVE_VARIABLES_OBSERVER", Effect::Write,
                   "reads sensitive server variables, beyond this database"},
    KnownPrivilege{"SERVICE_CONNECTION_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"SESSION_VARIABLES_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"SET_ANY_DEFINER", Effect::Write, kAccounts},
    KnownPrivilege{"ALLOW_NONEXISTENT_DEFINER", Effect::Write, kAccounts},
    KnownPrivilege{"SET_USER_ID", Effect::Write, kAccounts},
    KnownPrivilege{"SKIP_QUERY_REWRITE", Effect::Write, kServer},
    KnownPrivilege{"SYSTEM_USER", Effect::Write, kAccounts},
    KnownPrivilege{"SYSTEM_VARIABLES_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"TABLE_ENCRYPTION_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"TELEMETRY_LOG_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"TP_CONNECTION_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"TRANSACTION_GTID_TAG", Effect::Write, kReplication},
    KnownPrivilege{"VERSION_TOKEN_ADMIN", Effect::Write, kServer},
    KnownPrivilege{"XA_RECOVER_ADMIN", Effect::Write, "sees other sessions' XA transactions"},
};

const KnownPrivilege* findPrivilege(std::string_view name) {
  auto it = std::find_if(kKnown.begin(), kKnown.end(),
                         [&](const KnownPrivilege& k) { return k.name == name; });
  return it == kKnown.end() ? nullptr : &*it;
}

// A privilege word is echoed (and put in a REVOKE) only if it looks like one: upper-case ASCII
// words. Anything else from the line is described, not quoted.
bool printableWord(std::string_view word) {
  if (word.empty() || word.size() > 64) return false;
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ' ';
  });
}

// Control characters from names never reach a terminal through a message.
std::string printable(std::string text) {
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return text;
}

// True when a database-level name matches more than one database: an unescaped % or _ (SHOW
// GRANTS prints `db\_1` for the literal name db_1).
bool isPattern(std::string_view db) {
  for (std::size_t i = 0; i < db.size(); ++i) {
    if (db[i] == '\\') {
      ++i;
    } else if (db[i] == '%' || db[i] == '_') {
      return true;
    }
  }
  return false;
}

std::string levelText(const Level& level) {
  std::string out = levelSql(level);
  if (level.kind == ObjectKind::Database && isPattern(level.db)) {
    out += " (a pattern: every database whose name matches)";
  }
  return out;
}

std::string concat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out.append(part);
  return out;
}

std::string key(const Account& a) {
  return accountSql(a);
}

// How the check reached the grants it is reading: directly, or along a chain of roles.
struct Path {
  std::vector<Account> chain;  // roles from the one the account holds to the current holder
  bool implicit = false;       // chain[0] is held without a GRANT (mandatory_roles, PUBLIC)
  std::string via_fix;         // the REVOKE of the first edge that can be cut; empty: none yet
};

class Checker {
 public:
  explicit Checker(const GrantsInput& input) : in_(input) {}

  std::vector<GrantFinding> run() {
    std::vector<Result<GrantLine>> lines;
    for (const auto& text : in_.lines) lines.push_back(parseGrantLine(text));
    for (const auto& line : lines) {
      if (line.ok() && line->kind != LineKind::DefaultRole) {
        subject_ = accountSql(line->grantee);
        break;
      }
    }
    if (in_.lines.empty()) {
      add(Sev::Inconclusive, "mysql.grants", "SHOW GRANTS returned no lines: nothing was checked");
    }
    const Path direct;
    for (std::size_t i = 0; i < lines.size(); ++i) readLine(lines[i], i + 1, direct, nullptr);
    for (const Account& role : in_.implicit_roles) {
      Path path;
      path.chain.push_back(role);
      path.implicit = true;
      visited_.clear();
      visited_.insert(key(role));
      readRole(role, path);
    }
    finish();
    return std::move(out_);
  }

 private:
  // `what` names the privilege and level for deduplication: the same privilege reached again
  // with the same fix (MariaDB's SHOW GRANTS FOR a role repeats its nested roles' lines) is one
  // finding, shown with the first path found.
  void add(Sev sev, std::string check, const std::string& message, std::string fix = {},
           const std::string& what = {}) {
    GrantFinding f{sev, std::move(check), printable(message), std::move(fix)};
    const std::string key = f.check + '\n' + f.fix + '\n' + (what.empty() ? f.message : what);
    if (seen_.insert(key).second) out_.push_back(std::move(f));
  }

  // through(path), naming the role a line is granted to when it is not the role being read
  // (MariaDB lists a role's nested roles' grants under it).
  static std::string through(const Path& path, const Account& grantee) {
    std::string out = through(path);
    if (!path.chain.empty() && !(grantee == path.chain.back())) {
      out += ", from role " + accountSql(grantee);
    }
    return out;
  }

  // " through role `a` -> `b`", or "" for the account's own grants.
  static std::string through(const Path& path) {
    if (path.chain.empty()) return "";
    std::string out = path.implicit ? " through the role " : " through role ";
    for (std::size_t i = 0; i < path.chain.size(); ++i) {
      out += (i == 0 ? "" : " -> ") + accountSql(path.chain[i]);
    }
    if (path.implicit) out += " (held by every account)";
    return out;
  }

  static std::string where(const Path& path, std::size_t line_no) {
    return path.chain.empty() ? "line " + std::to_string(line_no) + " of SHOW GRANTS"
                              : "line " + std::to_string(line_no) + " of the grants of role " +
                                    accountSql(path.chain.back());
  }

  // The fix of a privilege held at `holder`: cut the path's first edge, or revoke it in place.
  static std::string fixFor(const Path& path, const std::string& revoke) {
    return path.via_fix.empty() ? revoke : path.via_fix;
  }

  // One line, read with `path` (the grants of the account itself when path.chain is empty).
  // `edges` (null for the account's own lines) collects the roles a role holds, walked later.
  void readLine(const Result<GrantLine>& line, std::size_t line_no, const Path& path,
                std::vector<std::pair<Account, Account>>* edges) {
    if (!line.ok()) {
      add(Sev::Inconclusive, "mysql.grants",
          where(path, line_no) + " could not be read (" + line.error().message +
              "); what it grants was not checked",
          path.via_fix);
      return;
    }
    const GrantLine& g = *line;
    switch (g.kind) {
      case LineKind::PartialRevoke:  // only narrows a global grant, which is judged on its own
      case LineKind::DefaultRole:    // activation; every granted role is followed regardless
        return;
      case LineKind::Proxy:
        add(Sev::Violation, "mysql.privilege",
            subject_ + " holds PROXY on " + accountSql(g.proxied) + through(path, g.grantee) +
                ": it can act as that account" +
                (g.grant_option ? " and grant that to others" : ""),
            fixFor(path, "REVOKE PROXY ON " + accountSql(g.proxied) + " FROM " +
                             accountSql(g.grantee) + ";"),
            "PROXY " + accountSql(g.proxied));
        return;
      case LineKind::Privileges: readPrivileges(g, path); return;
      case LineKind::Roles: readRoles(g, path, edges); return;
    }
  }

  void readPrivileges(const GrantLine& g, const Path& path) {
    const std::string level = levelSql(g.level);
    const std::string from = " FROM " + accountSql(g.grantee) + ";";
    const std::string on = " on " + levelText(g.level) + through(path, g.grantee);
    for (const Privilege& p : g.privileges) {
      const std::string what = privilegeSql(p);
      std::string held = subject_;
      held.append(" holds ").append(what).append(on);
      std::string dedupe = what;
      dedupe.append(" ON ").append(level);
      std::string revoke = "REVOKE ";
      revoke.append(dedupe).append(from);
      const KnownPrivilege* known = findPrivilege(p.name);
      if (known == nullptr) {
        if (printableWord(p.name)) {
          add(Sev::Inconclusive, "mysql.privilege",
              concat({held, ": an unknown privilege, not assumed to be read-only"}),
              fixFor(path, revoke), dedupe);
        } else {
          add(Sev::Inconclusive, "mysql.privilege",
              concat({subject_, " holds an unrecognised privilege word", on,
                      ": not assumed to be read-only"}),
              path.via_fix);
        }
        continue;
      }
      const bool broad = g.level.kind == ObjectKind::Global || g.level.kind == ObjectKind::Database;
      switch (known->effect) {
        case Effect::Usage: break;
        case Effect::Read: addRead(concat({what, " on ", levelText(g.level)})); break;
        case Effect::Execute:
          if (routineChecked(g.level)) {
            addRead(concat({what, " on ", levelText(g.level), " (checked read-only)"}));
            break;
          }
          add(Sev::Violation, "mysql.privilege",
              concat({held, ": ", known->why,
                      broad ? "; at this level it covers routines created later" : ""}),
              fixFor(path, revoke), dedupe);
          break;
        case Effect::Write:
          add(Sev::Violation, "mysql.privilege", concat({held, ": ", known->why}),
              fixFor(path, revoke), dedupe);
          break;
      }
    }
    if (g.grant_option) {
      add(Sev::Violation, "mysql.grant_option",
          subject_ + " holds GRANT OPTION on " + levelText(g.level) + through(path, g.grantee) +
              ": it can grant its privileges to other accounts",
          fixFor(path, "REVOKE GRANT OPTION ON " + level + from), "GRANT OPTION ON " + level);
    }
  }

  // Remembers a read privilege for the Ok message, once, in the order found.
  void addRead(std::string read) {
    if (reads_seen_.insert(read).second) reads_.push_back(std::move(read));
  }

  bool routineChecked(const Level& level) const {
    const bool routine = level.kind == ObjectKind::Procedure ||
                         level.kind == ObjectKind::Function || level.kind == ObjectKind::Package ||
                         level.kind == ObjectKind::PackageBody;
    return routine && in_.routine_is_read_only && in_.routine_is_read_only(level);
  }

  // A line granting roles: each role is a path of its own from the account, or one step further
  // along the current path.
  void readRoles(const GrantLine& g, const Path& path,
                 std::vector<std::pair<Account, Account>>* edges) {
    for (const Account& role : g.roles) {
      const std::string cut = "REVOKE " + accountSql(role) + " FROM " + accountSql(g.grantee) + ";";
      if (g.admin_option) {
        add(Sev::Violation, "mysql.role",
            subject_ + " holds role " + accountSql(role) + " WITH ADMIN OPTION" +
                through(path, g.grantee) + ": it can grant that role to other accounts",
            fixFor(path, cut + " GRANT " + accountSql(role) + " TO " + accountSql(g.grantee) + ";"),
            "ADMIN OPTION " + accountSql(role));
      }
      if (edges != nullptr) {
        edges->emplace_back(role, g.grantee);
        continue;
      }
      // A role the account itself holds: a new path, walked once however often it is listed.
      if (!roots_.insert(key(role)).second) continue;
      Path root;
      root.chain.push_back(role);
      root.via_fix = cut;
      visited_.clear();
      visited_.insert(key(role));
      readRole(role, root);
    }
  }

  // Reads the grants of path.chain.back() and walks the roles it holds, depth first. Each role is
  // read once per root path (visited_), which also ends cycles.
  void readRole(const Account& role, const Path& path) {
    const std::vector<Result<GrantLine>>* lines = grantsOf(role);
    if (lines == nullptr) {
      add(Sev::Inconclusive, "mysql.role",
          "the grants of role " + accountSql(role) +
              (path.chain.size() > 1 ? " (reached" + through(path) + ")" : std::string()) +
              " could not be read: what it grants to " + subject_ + " was not checked",
          path.via_fix);
      return;
    }
    std::vector<std::pair<Account, Account>> edges;
    for (std::size_t i = 0; i < lines->size(); ++i) readLine((*lines)[i], i + 1, path, &edges);
    for (const auto& [next, grantee] : edges) {
      if (!visited_.insert(key(next)).second) continue;  // a cycle, or already read on this root
      Path deeper = path;
      deeper.chain.push_back(next);
      if (deeper.via_fix.empty()) {
        deeper.via_fix = "REVOKE " + accountSql(next) + " FROM " + accountSql(grantee) + ";";
      }
      if (static_cast<int>(deeper.chain.size()) > kMaxRoleDepth ||
          static_cast<int>(visited_.size()) > kMaxRolesPerPath) {
        add(Sev::Inconclusive, "mysql.role",
            "roles nest too deep or too wide" + through(deeper) + ": the rest was not checked",
            deeper.via_fix);
        continue;
      }
      readRole(next, deeper);
    }
  }

  // The parsed grants of a role, asked for once; nullptr when they could not be read.
  const std::vector<Result<GrantLine>>* grantsOf(const Account& role) {
    auto it = roles_.find(key(role));
    if (it == roles_.end()) {
      std::optional<std::vector<Result<GrantLine>>> parsed;
      if (in_.role_grants) {
        if (auto text = in_.role_grants(role)) {
          parsed.emplace();
          for (const auto& line : *text) parsed->push_back(parseGrantLine(line));
        }
      }
      it = roles_.emplace(key(role), std::move(parsed)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  void finish() {
    const bool proved = std::none_of(out_.begin(), out_.end(),
                                     [](const GrantFinding& f) { return f.severity != Sev::Ok; });
    if (!proved) return;
    std::string message = subject_ + " can only read";
    if (reads_.empty()) {
      message += " (it holds no privilege beyond USAGE)";
    } else {
      constexpr std::size_t kShown = 6;
      message += ": ";
      for (std::size_t i = 0; i < reads_.size() && i < kShown; ++i) {
        message += (i == 0 ? "" : "; ") + reads_[i];
      }
      if (reads_.size() > kShown) {
        message += "; and " + std::to_string(reads_.size() - kShown) + " more";
      }
    }
    if (!roots_.empty() || !in_.implicit_roles.empty()) message += " (roles included)";
    add(Sev::Ok, "mysql.privilege", message);
  }

  const GrantsInput& in_;
  std::string subject_ = "the account";
  std::vector<GrantFinding> out_;
  std::set<std::string> seen_;
  std::vector<std::string> reads_;
  std::set<std::string> reads_seen_;
  std::set<std::string> roots_;
  std::set<std::string> visited_;
  std::map<std::string, std::optional<std::vector<Result<GrantLine>>>> roles_;
};

}  // namespace

std::vector<GrantFinding> checkGrants(const GrantsInput& input) {
  return Checker(input).run();
}

}  // namespace mcpdb::mysql
