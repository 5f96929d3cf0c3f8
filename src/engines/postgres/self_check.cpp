// The privilege self-check: proves, from the catalog, what the configured role could write if it
// skipped this server (the real boundary, BRIEF "the real last line is the database role").
// Every query below is fixed text and goes through the same guarded, read-only path as tools.

#include "engines/postgres/runtime.hpp"

namespace mcpdb::postgres {
namespace {

using engines::Finding;
using Sev = Finding::Severity;

constexpr const char* kRoleSql =
    "SELECT current_user::text AS role, quote_ident(current_user::text) AS role_sql, "
    "quote_ident(current_database()) AS database_sql, r.rolsuper, r.rolcreaterole, r.rolcreatedb, "
    "r.rolreplication, "
    "r.rolbypassrls, "
    "pg_has_role(current_user, 'pg_write_all_data', 'MEMBER') AS write_all_data, "
    "pg_has_role(current_user, 'pg_write_server_files', 'MEMBER') AS write_server_files, "
    "pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER') AS execute_server_program, "
    "pg_has_role(current_user, 'pg_read_server_files', 'MEMBER') AS read_server_files, "
    "has_database_privilege(current_database(), 'CREATE') AS db_create, "
    "has_database_privilege(current_database(), 'TEMPORARY') AS db_temp, "
    "current_setting('default_transaction_read_only') AS session_default_read_only, "
    "current_setting('transaction_read_only') AS transaction_read_only, "
    "coalesce((SELECT bool_or(c = 'default_transaction_read_only=on') FROM "
    "pg_catalog.pg_db_role_setting s, "
    "unnest(s.setconfig) AS c WHERE s.setrole = r.oid AND s.setdatabase IN (0, (SELECT d.oid FROM "
    "pg_catalog.pg_database d WHERE d.datname = current_database()))), false) AS "
    "role_default_read_only "
    "FROM pg_catalog.pg_roles r WHERE r.rolname = current_user";

constexpr const char* kTablesSql =
    "SELECT n.nspname::text AS schema, c.relname::text AS name, "
    "quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name_sql, "
    "has_table_privilege(c.oid, 'INSERT') AS ins, has_table_privilege(c.oid, 'UPDATE') AS upd, "
    "has_table_privilege(c.oid, 'DELETE') AS del, has_table_privilege(c.oid, 'TRUNCATE') AS trunc, "
    "(has_any_column_privilege(c.oid, 'INSERT') OR has_any_column_privilege(c.oid, 'UPDATE')) AS "
    "cols "
    "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind IN ('r', 'p', 'v', 'f') AND n.nspname NOT IN ('pg_catalog', "
    "'information_schema') "
    "AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%' "
    "AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE') "
    "OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE') "
    "OR has_any_column_privilege(c.oid, 'INSERT') OR has_any_column_privilege(c.oid, 'UPDATE')) "
    "ORDER BY 1, 2";

constexpr const char* kSequencesSql =
    "SELECT n.nspname::text AS schema, c.relname::text AS name, "
    "quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name_sql "
    "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND (has_sequence_privilege(c.oid, 'UPDATE') OR has_sequence_privilege(c.oid, 'USAGE')) ORDER "
    "BY 1, 2";

constexpr const char* kSchemasSql =
    "SELECT n.nspname::text AS schema, quote_ident(n.nspname) AS name_sql "
    "FROM pg_catalog.pg_namespace n "
    "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE "
    "'pg_toast%' "
    "AND n.nspname NOT LIKE 'pg_temp%' AND has_schema_privilege(n.oid, 'CREATE') ORDER BY 1";

constexpr std::size_t kNamesShown = 5;

bool flag(const Json& row, const char* key) {
  return row.value(key, Json(false)) == Json(true);
}

std::string nameList(const Json& rows, std::size_t total, bool more) {
  std::string s;
  for (std::size_t i = 0; i < rows.size() && i < kNamesShown; ++i) {
    const Json& r = rows[i];
    s += (i == 0 ? "" : ", ") + r.value("schema", std::string()) +
         (r.contains("name") ? "." + r.value("name", std::string()) : "");
  }
  if (total > kNamesShown || more) s += ", ...";
  return s;
}

// "REVOKE <what> ON <kind> a, b FROM role;" for the objects shown (at most kNamesShown).
std::string revokeFor(const char* what, const char* kind, const Json& rows,
                      const std::string& role) {
  std::string names;
  for (std::size_t i = 0; i < rows.size() && i < kNamesShown; ++i) {
    names += (i == 0 ? "" : ", ") + rows[i].value("name_sql", std::string());
  }
  return std::string("REVOKE ") + what + " ON " + kind + " " + names + " FROM " + role +
         ";  -- and from PUBLIC or any role it belongs to that holds it";
}

}  // namespace

std::vector<Finding> Runtime::selfCheck() {
  std::vector<Finding> out;
  Limits limits;
  limits.max_rows = 1000;
  limits.max_bytes = 1 << 20;
  limits.timeout = std::chrono::milliseconds(10000);
  std::stop_source never;
  auto query = [&](const char* sql) {
    return run(sql, BoundParams{}, limits, never.get_token(), Clock::now() + limits.timeout);
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
  const std::string who = "role " + r.value("role", std::string("?"));
  const std::string role_sql = r.value("role_sql", std::string("?"));
  const std::string db_sql = r.value("database_sql", std::string("?"));
  out.push_back({Sev::Ok, "pg.connect", "connected as " + who});

  out.push_back(flag(r, "rolsuper")
                    ? Finding{Sev::Violation, "pg.superuser",
                              who + " is a superuser: it can write anything and bypass every check",
                              "ALTER ROLE " + role_sql + " NOSUPERUSER;"}
                    : Finding{Sev::Ok, "pg.superuser", who + " is not a superuser"});

  std::string attrs;
  if (flag(r, "rolcreaterole")) attrs += " CREATEROLE";
  if (flag(r, "rolcreatedb")) attrs += " CREATEDB";
  std::string soft;
  if (flag(r, "rolreplication")) soft += " REPLICATION";
  if (flag(r, "rolbypassrls")) soft += " BYPASSRLS";
  std::string no_attrs;
  for (std::string_view a : {" CREATEROLE", " CREATEDB", " REPLICATION", " BYPASSRLS"}) {
    if ((attrs + soft).find(a) != std::string::npos) no_attrs += " NO" + std::string(a.substr(1));
  }
  const std::string attr_fix = "ALTER ROLE " + role_sql + no_attrs + ";";
  if (!attrs.empty()) {
    out.push_back({Sev::Violation, "pg.role_attributes", who + " has" + attrs + soft, attr_fix});
  } else if (!soft.empty()) {
    out.push_back({Sev::Warning, "pg.role_attributes", who + " has" + soft, attr_fix});
  } else {
    out.push_back({Sev::Ok, "pg.role_attributes",
                   who + " has no CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS"});
  }

  std::string roles;
  for (const char* k : {"write_all_data", "write_server_files", "execute_server_program"}) {
    if (flag(r, k)) roles += std::string(roles.empty() ? "" : ", ") + "pg_" + k;
  }
  out.push_back(roles.empty()
                    ? Finding{Sev::Ok, "pg.write_roles",
                              who +
                                  " is not a member of pg_write_all_data, pg_write_server_files or "
                                  "pg_execute_server_program"}
                    : Finding{Sev::Violation, "pg.write_roles", who + " is a member of " + roles,
                              "REVOKE " + roles + " FROM " + role_sql +
                                  ";  -- or from the role that grants the membership"});
  if (flag(r, "read_server_files")) {
    out.push_back({Sev::Warning, "pg.read_server_files",
                   who + " is a member of pg_read_server_files",
                   "REVOKE pg_read_server_files FROM " + role_sql + ";"});
  }

  if (auto t = query(kTablesSql); !t) {
    out.push_back({Sev::Inconclusive, "pg.table_write",
                   "could not check table privileges: " + operatorText(t.error()), ""});
  } else if (t->rows.empty()) {
    out.push_back({Sev::Ok, "pg.table_write",
                   who + " has no INSERT, UPDATE, DELETE or TRUNCATE privilege on any table"});
  } else {
    std::string detail;
    for (std::size_t i = 0; i < t->rows.size() && i < kNamesShown; ++i) {
      const Json& row = t->rows[i];
      std::string privs;
      for (auto [k, name] : {std::pair{"ins", "INSERT"}, std::pair{"upd", "UPDATE"},
                             std::pair{"del", "DELETE"}, std::pair{"trunc", "TRUNCATE"}}) {
        if (flag(row, k)) privs += std::string(privs.empty() ? "" : ", ") + name;
      }
      if (privs.empty() && flag(row, "cols")) privs = "column INSERT/UPDATE";
      detail += std::string(i == 0 ? "" : "; ") + row.value("schema", std::string()) + "." +
                row.value("name", std::string()) + " (" + privs + ")";
    }
    if (t->rows.size() > kNamesShown || t->truncated) detail += "; ...";
    out.push_back({Sev::Violation, "pg.table_write",
                   who + " can write " + std::string(t->truncated ? "at least " : "") +
                       std::to_string(t->rows.size()) + " table" +
                       (t->rows.size() == 1 ? "" : "s") + ": " + detail,
                   revokeFor("INSERT, UPDATE, DELETE, TRUNCATE", "TABLE", t->rows, role_sql)});
  }

  if (auto s = query(kSequencesSql); !s) {
    out.push_back({Sev::Inconclusive, "pg.sequence_write",
                   "could not check sequence privileges: " + operatorText(s.error()), ""});
  } else if (s->rows.empty()) {
    out.push_back({Sev::Ok, "pg.sequence_write", who + " cannot advance or set any sequence"});
  } else {
    out.push_back(
        {Sev::Violation, "pg.sequence_write",
         who + " can advance " + std::to_string(s->rows.size()) +
             " sequence(s) (USAGE or UPDATE): " + nameList(s->rows, s->rows.size(), s->truncated),
         revokeFor("USAGE, UPDATE", "SEQUENCE", s->rows, role_sql)});
  }

  if (auto s = query(kSchemasSql); !s) {
    out.push_back({Sev::Inconclusive, "pg.schema_create",
                   "could not check schema privileges: " + operatorText(s.error()), ""});
  } else if (s->rows.empty()) {
    out.push_back({Sev::Ok, "pg.schema_create", who + " has CREATE on no schema"});
  } else {
    out.push_back(
        {Sev::Violation, "pg.schema_create",
         who + " has CREATE on schema(s): " + nameList(s->rows, s->rows.size(), s->truncated),
         revokeFor("CREATE", "SCHEMA", s->rows, role_sql)});
  }

  out.push_back(
      flag(r, "db_create")
          ? Finding{Sev::Violation, "pg.database_create",
                    who + " has CREATE on the database (can create schemas)",
                    "REVOKE CREATE ON DATABASE " + db_sql + " FROM " + role_sql +
                        ";  -- and from PUBLIC if granted there"}
          : Finding{Sev::Ok, "pg.database_create", who + " has no CREATE on the database"});
  if (flag(r, "db_temp")) {
    out.push_back({Sev::Warning, "pg.database_temp",
                   who + " may create temporary tables in the database",
                   "REVOKE TEMPORARY ON DATABASE " + db_sql + " FROM PUBLIC, " + role_sql + ";"});
  }

  const bool session_ro = r.value("session_default_read_only", std::string()) == "on" &&
                          r.value("transaction_read_only", std::string()) == "on";
  out.push_back(
      session_ro ? Finding{Sev::Ok, "pg.session_read_only",
                           "this server's sessions default to read-only and calls run in "
                           "READ ONLY transactions"}
                 : Finding{Sev::Violation, "pg.session_read_only",
                           "this server's session is not read-only",
                           "ALTER ROLE " + role_sql + " SET default_transaction_read_only = on;"});
  out.push_back(
      flag(r, "role_default_read_only")
          ? Finding{Sev::Ok, "pg.role_read_only_default",
                    who + " defaults to read-only transactions (ALTER ROLE ... SET "
                          "default_transaction_read_only = on)"}
          : Finding{Sev::Warning, "pg.role_read_only_default",
                    who +
                        " does not default to read-only transactions: a client holding these "
                        "credentials "
                        "outside this server starts read-write transactions (only grants stop it)",
                    "ALTER ROLE " + role_sql + " SET default_transaction_read_only = on;"});
  return out;
}

}  // namespace mcpdb::postgres
