// The privilege self-check: proves, from the catalog, what the configured role could write if it
// skipped this server (the real boundary, BRIEF "the real last line is the database role").
// Every query (self_check_sql.hpp) is fixed text and goes through the same guarded, read-only
// path as tools. Each check has three outcomes: Ok (proved), Violation (a write path, with the
// statements that remove it), Inconclusive (the catalog could not be read, or a database it
// cannot inspect): nothing unchecked is ever reported as safe.

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "engines/postgres/runtime.hpp"
#include "engines/postgres/guard/denylist.hpp"
#include "engines/postgres/doctor_sql.hpp"

namespace mcpdb::postgres {
namespace {

using engines::Finding;
using Sev = Finding::Severity;
namespace sql = self_check_sql;

using Query = std::function<Result<ExecResult>(const std::string&)>;

constexpr const char* kRoleSql =
    "SELECT current_user::text AS role, quote_ident(current_user::text) AS role_sql, "
    "current_setting('default_transaction_read_only') AS session_default_read_only, "
    "current_setting('transaction_read_only') AS transaction_read_only, "
    "coalesce((SELECT bool_or(c = 'default_transaction_read_only=on') FROM "
    "pg_catalog.pg_db_role_setting s, "
    "unnest(s.setconfig) AS c WHERE s.setrole = r.oid AND s.setdatabase IN (0, (SELECT d.oid FROM "
    "pg_catalog.pg_database d WHERE d.datname = current_database()))), false) AS "
    "role_default_read_only, "
    // A managed service's administrator is not a superuser: it cannot revoke what PUBLIC holds on
    // objects the provider's superuser owns (the large-object functions, template1).
    "(SELECT string_agg(p.rolname::text, ', ' ORDER BY p.rolname) FROM pg_catalog.pg_roles p "
    "WHERE p.rolname IN ('rds_superuser', 'cloudsqlsuperuser', 'azure_pg_admin', "
    "'alloydbsuperuser')) AS managed_admin "
    "FROM pg_catalog.pg_roles r WHERE r.rolname = current_user";

constexpr std::size_t kNamesShown = 5;

// Roles whose members write or act outside table privileges: PostgreSQL's predefined roles
// (COPY TO a server file or program works in a READ ONLY transaction; pg_create_subscription and
// pg_maintain exist from PostgreSQL 16 and 17) and the managed services' admin and replication
// roles.
constexpr std::array<std::string_view, 11> kWriteRoles = {
    "pg_write_all_data", "pg_write_server_files", "pg_execute_server_program",
    "pg_signal_backend", "pg_maintain",           "pg_create_subscription",
    "rds_superuser",     "rds_replication",       "cloudsqlsuperuser",
    "azure_pg_admin",    "alloydbsuperuser"};

bool flag(const Json& row, const char* key) {
  return row.value(key, Json(false)) == Json(true);
}

std::string text(const Json& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

bool mitigatedByProof(const Json& rows, std::string_view managed) {
  if (managed.empty() || !rows.is_array() || rows.empty()) return false;
  for (const Json& row : rows) {
    const std::string name = text(row, "name");
    if (text(row, "kind") != "FUNCTION" || text(row, "holder_sql") != "PUBLIC" ||
        !flag(row, "owner_super") || text(row, "schema") != "pg_catalog" ||
        guard::findDeniedFunction(name.substr(0, name.find('('))) == nullptr) {
      return false;
    }
  }
  return true;
}

namespace {

// The role the check runs as, and what every message and fix needs to know about it.
struct Subject {
  std::string who;      // "role x"
  std::string sql;      // quoted role name
  std::string managed;  // the managed service's admin role (e.g. rds_superuser), or empty
};

// Appends `item` to `list` unless it is already there (order of first appearance is kept).
void addUnique(std::vector<std::string>& list, const std::string& item) {
  if (!item.empty() && std::find(list.begin(), list.end(), item) == list.end()) {
    list.push_back(item);
  }
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Where a row's privilege comes from, for the message: PUBLIC, the role itself or another role.
std::string holderNote(const Json& row) {
  const std::string holder = text(row, "holder_sql");
  if (holder == "PUBLIC") return "granted to PUBLIC";
  if (flag(row, "self")) return "";
  return "through role " + holder;
}

std::string shownName(const Json& row) {
  std::string schema = text(row, "schema");
  std::string name = text(row, "name");
  if (name.empty()) return schema;
  return schema.empty() ? name : schema + "." + name;
}

// The objects of a grant query (one row per object and holder), each with its privileges by
// where they come from: "s.t (UPDATE; INSERT granted to PUBLIC; DELETE through role w)". At most
// kNamesShown objects.
std::string describeObjects(const Json& rows, bool show_privs, bool more) {
  static const std::vector<std::string> kOrder = {
      "INSERT",        "UPDATE", "DELETE", "TRUNCATE",  "TRIGGER", "column INSERT",
      "column UPDATE", "USAGE",  "CREATE", "TEMPORARY", "CONNECT", "EXECUTE"};
  struct Object {
    std::string shown;
    std::vector<std::pair<std::string, std::set<std::size_t>>> by_holder;  // note -> privileges
  };
  std::vector<Object> objects;
  std::map<std::string, std::size_t> index;
  for (const Json& row : rows) {
    const std::string key = text(row, "kind") + " " + text(row, "name_sql");
    auto [it, fresh] = index.emplace(key, objects.size());
    if (fresh) objects.push_back({shownName(row), {}});
    auto& holders = objects[it->second].by_holder;
    const std::string note = holderNote(row);
    auto h = std::find_if(holders.begin(), holders.end(),
                          [&](const auto& x) { return x.first == note; });
    if (h == holders.end()) h = holders.insert(holders.end(), {note, {}});
    const std::string privs = text(row, "privs");
    for (std::size_t start = 0; start <= privs.size();) {
      const std::size_t end = std::min(privs.find(',', start), privs.size());
      auto p = std::find(kOrder.begin(), kOrder.end(), privs.substr(start, end - start));
      if (p != kOrder.end()) h->second.insert(static_cast<std::size_t>(p - kOrder.begin()));
      start = end + 1;
    }
  }
  std::string out;
  for (std::size_t i = 0; i < objects.size() && i < kNamesShown; ++i) {
    std::vector<std::string> parts;
    for (const auto& [note, privs] : objects[i].by_holder) {
      std::vector<std::string> names;
      if (show_privs) {
        for (std::size_t p : privs) names.push_back(kOrder[p]);
      }
      std::string part = join(names, ", ");
      if (!note.empty()) part += (part.empty() ? "" : " ") + note;
      addUnique(parts, part);
    }
    out += (i == 0 ? "" : ", ") + objects[i].shown +
           (parts.empty() ? "" : " (" + join(parts, "; ") + ")");
  }
  if (objects.size() > kNamesShown || more) out += ", ...";
  return out;
}

std::size_t objectCount(const Json& rows) {
  std::set<std::string> keys;
  for (const Json& row : rows) keys.insert(text(row, "kind") + " " + text(row, "name_sql"));
  return keys.size();
}

// The statements that remove every grant in `rows`: REVOKE from PUBLIC or the role itself, and,
// where another role holds it, the role's memberships that lead there. With `schema_wide`, more
// than kNamesShown tables or sequences of one holder are revoked schema by schema.
std::string revokeFix(const Json& rows, const Subject& s, bool schema_wide, bool truncated) {
  struct Group {
    std::string holder, kind, privs;
    std::vector<std::string> names, schemas;
    bool provider_owned = false;
  };
  std::vector<Group> groups;
  std::vector<std::string> memberships;
  for (const Json& row : rows) {
    const std::string via = text(row, "via_sql");
    if (!via.empty()) {
      addUnique(memberships, "REVOKE " + via + " FROM " + s.sql + ";");
      continue;
    }
    Group key{text(row, "holder_sql"), text(row, "kind"), text(row, "fix_privs"), {}, {}, false};
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
      return x.holder == key.holder && x.kind == key.kind && x.privs == key.privs;
    });
    if (g == groups.end()) g = groups.insert(groups.end(), key);
    addUnique(g->names, text(row, "name_sql"));
    addUnique(g->schemas, text(row, "schema_sql"));
    g->provider_owned = g->provider_owned || (key.holder == "PUBLIC" && flag(row, "owner_super"));
  }
  std::vector<std::string> lines;
  bool provider_owned = false;
  for (const Group& g : groups) {
    const bool all =
        schema_wide && g.names.size() > kNamesShown && (g.kind == "TABLE" || g.kind == "SEQUENCE");
    const std::string target = all ? "ALL " + g.kind + "S IN SCHEMA " + join(g.schemas, ", ")
                                   : g.kind + " " + join(g.names, ", ");
    lines.push_back("REVOKE " + g.privs + " ON " + target + " FROM " + g.holder + ";");
    provider_owned = provider_owned || g.provider_owned;
  }
  lines.insert(lines.end(), memberships.begin(), memberships.end());
  if (provider_owned && !s.managed.empty()) {
    lines.push_back("-- managed service (" + s.managed +
                    "): PUBLIC's privilege here was granted by the provider's superuser, and "
                    "only it can revoke it (PostgreSQL answers 'no privileges could be revoked'); "
                    "the operator cannot close this path");
  }
  if (truncated) lines.push_back("-- the list was cut short: run doctor again after these");
  return join(lines, "\n");
}

// What a grant query is about, for its findings.
struct GrantCheck {
  const char* id;       // "pg.table_write"
  const char* body;     // the query after kHolders
  const char* subject;  // "table privileges", in "could not check ..."
  const char* verb;     // "can write", in "<who> can write 2 table(s): ..."
  const char* noun;     // "table(s)"
  const char* ok;       // "<who> " + ok when nothing is found
  bool show_privs = true;
  bool schema_wide = false;
  Sev severity = Sev::Violation;
};

Finding grantFinding(const GrantCheck& c, const Json& rows, bool truncated, const Subject& s) {
  if (rows.empty()) return {Sev::Ok, c.id, s.who + " " + c.ok};
  if (!truncated && mitigatedByProof(rows, s.managed)) {
    return {Sev::Warning, c.id,
            "mitigated, not removed: " + s.who + " " + c.verb + " " +
                std::to_string(objectCount(rows)) + " " + c.noun + ": " +
                describeObjects(rows, c.show_privs, false) +
                "; on this managed service only the provider can revoke PUBLIC's grant, and the "
                "read-only proof refuses every statement that reaches these functions (they are "
                "on the denylist), so no tool of this server can use them; a client holding these "
                "credentials outside this server still can",
            revokeFix(rows, s, c.schema_wide, truncated)};
  }
  return {c.severity, c.id,
          s.who + " " + c.verb + " " + (truncated ? "at least " : "") +
              std::to_string(objectCount(rows)) + " " + c.noun + ": " +
              describeObjects(rows, c.show_privs, truncated),
          revokeFix(rows, s, c.schema_wide, truncated)};
}

Finding inconclusive(const char* id, const std::string& subject, const Error& e) {
  return {Sev::Inconclusive, id, "could not check " + subject + ": " + operatorText(e), ""};
}

Finding runGrantCheck(const Query& query, const GrantCheck& c, const Subject& s) {
  auto r = query(std::string(sql::kHolders) + c.body);
  if (!r) return inconclusive(c.id, c.subject, r.error());
  return grantFinding(c, r->rows, r->truncated, s);
}

// One row of kMembers: the role itself or a role it belongs to.
struct Member {
  const Json& row;
  const Subject& s;

  bool self() const { return flag(row, "self"); }
  std::string name() const { return text(row, "name"); }
  // "role x" for the role itself, "role x belongs to role y (through z)" for another.
  std::string who(const char* what = "role") const {
    if (self()) return s.who;
    const std::string via = text(row, "via_sql");
    const bool direct = via.empty() || via == text(row, "name_sql");
    return s.who + " belongs to " + what + " " + text(row, "name_sql") +
           (direct ? "" : " (through " + via + ")");
  }
  // Revoking the role's own memberships that lead to this one.
  std::string revokeMembership() const {
    const std::string via = text(row, "via_sql");
    // No grant to revoke: the implicit pg_database_owner membership of the database's owner.
    if (via.empty()) return "-- through owning the database: see pg.ownership";
    return "REVOKE " + via + " FROM " + s.sql + ";";
  }
};

Finding superuserFinding(const Json& members, const Subject& s) {
  std::vector<std::string> found, fixes;
  for (const Json& row : members) {
    const Member m{row, s};
    if (!flag(row, "rolsuper")) continue;
    found.push_back(m.self() ? s.who +
                                   " is a superuser: it can write anything and bypass every "
                                   "check"
                             : m.who("superuser role") +
                                   ": it can SET ROLE to it and write "
                                   "anything");
    addUnique(fixes, m.self() ? "ALTER ROLE " + s.sql + " NOSUPERUSER;" : m.revokeMembership());
  }
  if (found.empty()) {
    return {Sev::Ok, "pg.superuser",
            s.who + " is not a superuser and belongs to no superuser role"};
  }
  return {Sev::Violation, "pg.superuser", join(found, "; "), join(fixes, "\n")};
}

// CREATEROLE, CREATEDB and REPLICATION (a replication slot outlives a READ ONLY transaction) are
// write paths; BYPASSRLS widens reads only. A member that can SET ROLE gets the role's attributes.
Finding attributesFinding(const Json& members, const Subject& s) {
  std::vector<std::string> found, fixes;
  bool write = false;
  for (const Json& row : members) {
    const Member m{row, s};
    std::string attrs;
    for (const char* a : {"CREATEROLE", "CREATEDB", "REPLICATION", "BYPASSRLS"}) {
      std::string column = std::string("rol") + a;
      std::transform(column.begin(), column.end(), column.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (!flag(row, column.c_str())) continue;
      attrs += std::string(" ") + a;
      write = write || std::string_view(a) != "BYPASSRLS";
    }
    if (attrs.empty()) continue;
    found.push_back(m.self() ? s.who + " has" + attrs : m.who() + ", which has" + attrs);
    std::string no = attrs;
    for (std::size_t at = no.find(' '); at != std::string::npos; at = no.find(' ', at + 3)) {
      no.insert(at + 1, "NO");
    }
    addUnique(fixes, m.self() ? "ALTER ROLE " + s.sql + no + ";" : m.revokeMembership());
  }
  if (found.empty()) {
    return {Sev::Ok, "pg.role_attributes",
            s.who +
                " has no CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS, itself or through a "
                "role it belongs to"};
  }
  return {write ? Sev::Violation : Sev::Warning, "pg.role_attributes", join(found, "; "),
          join(fixes, "\n")};
}

// Superuser, role attributes and the roles that write outside table privileges, for the role
// itself and every role it belongs to.
void checkMemberships(const Query& query, const Subject& s, std::vector<Finding>& out) {
  auto r = query(std::string(sql::kHolders) + sql::kMembers);
  if (!r) {
    for (const char* id : {"pg.superuser", "pg.role_attributes", "pg.write_roles"}) {
      out.push_back(inconclusive(id, "the role's attributes and memberships", r.error()));
    }
    return;
  }
  out.push_back(superuserFinding(r->rows, s));
  out.push_back(attributesFinding(r->rows, s));
  std::vector<std::string> write_roles, write_fixes, read_files_fixes;
  for (const Json& row : r->rows) {
    const Member m{row, s};
    if (m.self()) continue;
    if (std::find(kWriteRoles.begin(), kWriteRoles.end(), m.name()) != kWriteRoles.end()) {
      const std::string via = text(row, "via_sql");
      const bool direct = via.empty() || via == text(row, "name_sql");
      write_roles.push_back(m.name() + (direct ? "" : " (through " + via + ")"));
      addUnique(write_fixes, m.revokeMembership());
    }
    if (m.name() == "pg_read_server_files") addUnique(read_files_fixes, m.revokeMembership());
  }
  out.push_back(
      write_roles.empty()
          ? Finding{Sev::Ok, "pg.write_roles",
                    s.who + " is not a member of pg_write_all_data, pg_write_server_files, "
                            "pg_execute_server_program, pg_signal_backend or another role that "
                            "writes outside table privileges"}
          : Finding{Sev::Violation, "pg.write_roles",
                    s.who + " is a member of " + join(write_roles, ", "), join(write_fixes, "\n")});
  if (!read_files_fixes.empty()) {
    out.push_back({Sev::Warning, "pg.read_server_files",
                   s.who + " is a member of pg_read_server_files", join(read_files_fixes, "\n")});
  }
}

// CREATE and TEMPORARY on this database, CONNECT on the others: one query, three findings.
void checkDatabases(const Query& query, const Subject& s, std::vector<Finding>& out) {
  auto r = query(std::string(sql::kHolders) + sql::kDatabases);
  if (!r) {
    out.push_back(inconclusive("pg.database_create", "database privileges", r.error()));
    out.push_back(inconclusive("pg.database_temp", "database privileges", r.error()));
    out.push_back(inconclusive("pg.other_databases", "database privileges", r.error()));
    return;
  }
  Json create = Json::array(), temp = Json::array(), other = Json::array();
  for (const Json& row : r->rows) {
    const std::string priv = text(row, "privs");
    if (!flag(row, "is_current")) {
      other.push_back(row);
    } else if (priv == "CREATE") {
      create.push_back(row);
    } else if (priv == "TEMPORARY") {
      temp.push_back(row);
    }
  }
  // "<who> <before> <databases> <after>", the databases with where each privilege comes from.
  auto finding = [&](Sev severity, const char* id, const Json& rows, const std::string& ok,
                     const std::string& before, const std::string& after) -> Finding {
    if (rows.empty()) return {Sev::Ok, id, s.who + " " + ok};
    return {severity, id, s.who + " " + before + " " + describeObjects(rows, false, false) + after,
            revokeFix(rows, s, false, false)};
  };
  out.push_back(finding(Sev::Violation, "pg.database_create", create,
                        "has no CREATE on the database", "has CREATE on database",
                        ": it can create schemas"));
  out.push_back(finding(Sev::Violation, "pg.database_temp", temp,
                        "cannot create temporary tables in the database",
                        "can create temporary tables in database",
                        ": they outlive a call and can shadow names on the search path"));
  out.push_back(finding(Sev::Inconclusive, "pg.other_databases", other,
                        "can connect to no other database", "can also connect to database(s)",
                        ", whose catalogs doctor does not inspect (large-object functions, TEMP, "
                        "grants and ownership there are unchecked): revoke CONNECT, or run doctor "
                        "against each"));
}

// ALTER ... OWNER TO takes the object's own keyword; pg_identify_object names the kind.
std::string alterKeyword(std::string type) {
  if (type == "statistics object") return "STATISTICS";
  if (type == "foreign-data wrapper") type = "foreign data wrapper";
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return type;
}

// Objects the role (or a role it belongs to) owns: an owner can grant itself anything, ALTER or
// DROP them.
Finding checkOwnership(const Query& query, const Subject& s) {
  auto r = query(std::string(sql::kHolders) + sql::kOwnership);
  if (!r) return inconclusive("pg.ownership", "object ownership", r.error());
  if (r->rows.empty()) {
    return {Sev::Ok, "pg.ownership",
            s.who + " owns no object, itself or through a role it belongs to"};
  }
  std::vector<std::string> shown, alters, memberships, notes;
  std::size_t owned_by_self = 0;
  std::string new_owner;
  for (const Json& row : r->rows) {
    const std::string type = text(row, "objtype");
    const std::string name = text(row, "name_sql");
    const bool self = flag(row, "self");
    if (shown.size() < kNamesShown) {
      std::string item = type;
      item.append(" ").append(name);
      if (!self) item.append(" (owned by ").append(text(row, "holder_sql")).append(")");
      shown.push_back(item);
    }
    if (!self) {
      addUnique(memberships, "REVOKE " + text(row, "via_sql") + " FROM " + s.sql + ";");
      continue;
    }
    ++owned_by_self;
    new_owner = text(row, "new_owner_sql");
    if (new_owner.empty()) new_owner = "<an administrative role>";
    if (type == "extension") {
      addUnique(notes, "-- extension " + name +
                           " cannot change owner: drop it and create it again as an "
                           "administrative role");
    } else {
      std::string alter = "ALTER " + alterKeyword(type);
      alter.append(" ").append(name).append(" OWNER TO ").append(new_owner).append(";");
      alters.push_back(alter);
    }
  }
  std::vector<std::string> lines;
  if (owned_by_self > kNamesShown || r->truncated) {
    lines.push_back("REASSIGN OWNED BY " + s.sql + " TO " + new_owner + ";");
  } else {
    lines = alters;
  }
  lines.insert(lines.end(), memberships.begin(), memberships.end());
  lines.insert(lines.end(), notes.begin(), notes.end());
  const std::size_t n = r->rows.size();
  return {Sev::Violation, "pg.ownership",
          s.who + " owns " + (r->truncated ? "at least " : "") + std::to_string(n) +
              " object(s), so it can grant itself any privilege on them, alter or drop them: " +
              join(shown, ", ") + (n > kNamesShown || r->truncated ? ", ..." : ""),
          join(lines, "\n")};
}

constexpr GrantCheck kTableCheck{"pg.table_write",
                                 sql::kTables,
                                 "table privileges",
                                 "can write",
                                 "table(s)",
                                 "has no INSERT, UPDATE, DELETE, TRUNCATE or TRIGGER privilege on "
                                 "any table, itself or through a role it belongs to",
                                 true,
                                 true};
constexpr GrantCheck kSequenceCheck{"pg.sequence_write",
                                    sql::kSequences,
                                    "sequence privileges",
                                    "can advance or set",
                                    "sequence(s) (USAGE or UPDATE)",
                                    "cannot advance or set any sequence",
                                    true,
                                    true};
constexpr GrantCheck kSchemaCheck{
    "pg.schema_create",        sql::kSchemas, "schema privileges", "has CREATE on", "schema(s)",
    "has CREATE on no schema", false};
constexpr GrantCheck kLargeObjectCheck{
    "pg.large_objects",
    sql::kLargeObjects,
    "large-object privileges",
    "can create, change or delete large objects (even in a READ ONLY transaction) with",
    "function(s) or object(s)",
    "cannot execute any large-object function that writes",
    false};
constexpr GrantCheck kRemoteCheck{
    "pg.remote_access",
    sql::kRemote,
    "dblink, postgres_fdw and foreign-server privileges",
    "can reach other servers (and write there) with",
    "function(s), server(s) or wrapper(s)",
    "cannot execute dblink, postgres_fdw or other remote-access functions or use a foreign "
    "server or wrapper",
    false};
constexpr GrantCheck kSecurityDefinerCheck{
    "pg.security_definer",
    sql::kSecurityDefiner,
    "SECURITY DEFINER functions",
    "can execute, as an owner that can write,",
    "SECURITY DEFINER function(s)",
    "can execute no SECURITY DEFINER function whose owner can write",
    false};

}  // namespace

std::vector<Finding> Runtime::selfCheck(const std::stop_token& stop) {
  std::vector<Finding> out;
  Limits limits;
  limits.max_rows = 1000;
  limits.max_bytes = 1 << 20;
  limits.timeout = std::chrono::milliseconds(10000);
  const Query query = [&](const std::string& text) {
    return run(text, BoundParams{}, limits, stop, Clock::now() + limits.timeout);
  };

  auto role = query(kRoleSql);
  if (!role || role->rows.empty()) {
    out.push_back({Sev::Inconclusive, "pg.connect",
                   "could not inspect the role's privileges, so nothing was proved: " +
                       (role ? std::string("the role is not visible in pg_roles")
                             : operatorText(role.error())),
                   ""});
    return out;
  }
  const Json& r = role->rows[0];
  const Subject s{"role " + text(r, "role"), text(r, "role_sql"), text(r, "managed_admin")};
  out.push_back({Sev::Ok, "pg.connect", "connected as " + s.who});

  checkMemberships(query, s, out);
  for (const GrantCheck* c : {&kTableCheck, &kSequenceCheck, &kSchemaCheck}) {
    out.push_back(runGrantCheck(query, *c, s));
  }
  checkDatabases(query, s, out);
  for (const GrantCheck* c : {&kLargeObjectCheck, &kRemoteCheck, &kSecurityDefinerCheck}) {
    out.push_back(runGrantCheck(query, *c, s));
  }
  out.push_back(checkOwnership(query, s));

  const bool session_ro =
      text(r, "session_default_read_only") == "on" && text(r, "transaction_read_only") == "on";
  out.push_back(session_ro
                    ? Finding{Sev::Ok, "pg.session_read_only",
                              "this server's sessions default to read-only and calls run in "
                              "READ ONLY transactions"}
                    : Finding{Sev::Violation, "pg.session_read_only",
                              "this server's session is not read-only",
                              "ALTER ROLE " + s.sql + " SET default_transaction_read_only = on;"});
  out.push_back(
      flag(r, "role_default_read_only")
          ? Finding{Sev::Ok, "pg.role_read_only_default",
                    s.who + " defaults to read-only transactions (ALTER ROLE ... SET "
                            "default_transaction_read_only = on)"}
          : Finding{Sev::Warning, "pg.role_read_only_default",
                    s.who + " does not default to read-only transactions: a client holding these "
                            "credentials outside this server starts read-write transactions (only "
                            "grants stop it)",
                    "ALTER ROLE " + s.sql + " SET default_transaction_read_only = on;"});
  return out;
}

}  // namespace mcpdb::postgres
