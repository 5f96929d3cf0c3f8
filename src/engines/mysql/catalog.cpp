#include "engines/mysql/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

namespace mcpdb::mysql {
namespace {

// What a verdict depends on, hashed by the server (SHA-256: a digest an object's author cannot
// make collide with a vetted one). A hidden definition hashes apart from an empty one.
constexpr const char* kViewDigest =
    "SHA2(CONCAT_WS(0x1f, 'VIEW', TABLE_SCHEMA, TABLE_NAME, SECURITY_TYPE, DEFINER, "
    "VIEW_DEFINITION IS NULL, IFNULL(VIEW_DEFINITION, '')), 256)";
constexpr const char* kRoutineDigest =
    "SHA2(CONCAT_WS(0x1f, ROUTINE_TYPE, ROUTINE_SCHEMA, ROUTINE_NAME, SECURITY_TYPE, DEFINER, "
    "CREATED, LAST_ALTERED, ROUTINE_DEFINITION IS NULL, IFNULL(ROUTINE_DEFINITION, '')), 256)";

// One branch per schema, each with an equality on the schema: MariaDB then reads that schema's
// directory only (an OR of schemas scans every database).
std::string branches(const std::vector<guard::Name>& candidates, const std::string& select,
                     const char* schemaColumn, const char* nameColumn) {
  std::map<std::string, std::vector<std::string>> bySchema;
  for (const guard::Name& n : candidates) {
    if (n.size() == 2) bySchema[n[0]].push_back(n[1]);
  }
  std::string out;
  for (const auto& [schema, names] : bySchema) {
    if (!out.empty()) out += " UNION ALL ";
    out += select + " WHERE " + schemaColumn + " = " + quoteLiteral(schema) + " AND " + nameColumn +
           " IN (";
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (i > 0) out += ", ";
      out += quoteLiteral(names[i]);
    }
    out += ")";
  }
  return out;
}

std::string objectsSql(const std::vector<guard::Name>& candidates, bool withDefinitions) {
  const std::string views =
      withDefinitions ? std::string(
                            "SELECT 'VIEW', TABLE_SCHEMA, TABLE_NAME, SECURITY_TYPE, "
                            "DEFINER, VIEW_DEFINITION, ") +
                            kViewDigest + " FROM information_schema.VIEWS"
                      : std::string("SELECT ") + kViewDigest + " FROM information_schema.VIEWS";
  const std::string routines =
      withDefinitions
          ? std::string(
                "SELECT ROUTINE_TYPE, ROUTINE_SCHEMA, ROUTINE_NAME, "
                "SECURITY_TYPE, DEFINER, ROUTINE_DEFINITION, ") +
                kRoutineDigest + " FROM information_schema.ROUTINES"
          : std::string("SELECT ") + kRoutineDigest + " FROM information_schema.ROUTINES";
  return branches(candidates, views, "TABLE_SCHEMA", "TABLE_NAME") + " UNION ALL " +
         branches(candidates, routines, "ROUTINE_SCHEMA", "ROUTINE_NAME");
}

CatalogObject::Kind kindOf(const std::optional<std::string>& text) {
  if (text == "VIEW") return CatalogObject::Kind::View;
  if (text == "FUNCTION") return CatalogObject::Kind::Function;
  if (text == "PROCEDURE") return CatalogObject::Kind::Procedure;
  return CatalogObject::Kind::Other;
}

bool anyName(const std::vector<guard::Name>& candidates) {
  for (const guard::Name& n : candidates) {
    if (n.size() == 2) return true;
  }
  return false;
}

// Statements counted server-wide (Com_*) that create, replace, rename or drop a view, a stored
// function or a table (a table replaced by a view), or a database (which drops its views).
constexpr std::string_view kDefinitionCounters[] = {
    "Com_alter_function", "Com_alter_view",  "Com_create_db",    "Com_create_function",
    "Com_create_table",   "Com_create_view", "Com_drop_db",      "Com_drop_function",
    "Com_drop_table",     "Com_drop_view",   "Com_rename_table",
};
// ... and those that change what an account (a definer) may do.
constexpr std::string_view kPrivilegeCounters[] = {
    "Com_alter_user",  "Com_create_role", "Com_create_user", "Com_drop_role",
    "Com_drop_user",   "Com_flush",       "Com_grant",       "Com_grant_role",
    "Com_rename_user", "Com_revoke",      "Com_revoke_all",  "Com_revoke_role",
};

bool listed(std::string_view name, const auto& names) {
  for (std::string_view n : names) {
    if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return true;
    }
  }
  return false;
}

}  // namespace

Result<CatalogEpoch> readCatalogEpoch(Connection& conn) {
  static const std::string sql = [] {
    std::string out = "SHOW GLOBAL STATUS WHERE Variable_name IN (";
    bool first = true;
    auto add = [&](std::string_view n) {
      out += (first ? "'" : ", '") + std::string(n) + "'";
      first = false;
    };
    for (std::string_view n : kDefinitionCounters) add(n);
    for (std::string_view n : kPrivilegeCounters) add(n);
    return out + ")";
  }();
  auto rows = conn.queryRows(sql, 64);
  if (!rows) return rows.error();
  CatalogEpoch epoch;
  for (const auto& r : *rows) {
    if (r.size() != 2 || !r[0] || !r[1]) continue;
    std::string& into = listed(*r[0], kPrivilegeCounters) ? epoch.privileges : epoch.definitions;
    into += *r[0] + "=" + *r[1] + ";";
  }
  if (epoch.definitions.empty()) {
    return makeError(Code::Internal, "the server reported none of its statement counters");
  }
  return epoch;
}

std::string quoteLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\0') {
      out += "\\0";
    } else {
      if (c == '\'' || c == '\\') out += c == '\'' ? '\'' : '\\';
      out += c;
    }
  }
  return out + "'";
}

Result<std::vector<CatalogObject>> lookUpObjects(Connection& conn,
                                                 const std::vector<guard::Name>& candidates) {
  std::vector<CatalogObject> out;
  if (!anyName(candidates)) return out;
  auto rows = conn.queryRows(objectsSql(candidates, true), kMaxCatalogRows);
  if (!rows) return rows.error();
  for (auto& r : *rows) {
    if (r.size() != 7 || !r[1] || !r[2]) continue;
    CatalogObject o;
    o.kind = kindOf(r[0]);
    o.name = {*r[1], *r[2]};
    o.definer_rights = r[3] == "DEFINER";
    o.definer = r[4].value_or("");
    if (r[5] && !r[5]->empty()) o.definition = std::move(r[5]);
    o.fingerprint = r[6].value_or("");
    out.push_back(std::move(o));
  }
  return out;
}

Result<std::set<std::string>> fingerprintObjects(Connection& conn,
                                                 const std::vector<guard::Name>& candidates) {
  std::set<std::string> out;
  if (!anyName(candidates)) return out;
  auto rows = conn.queryRows(objectsSql(candidates, false), kMaxCatalogRows);
  if (!rows) return rows.error();
  for (auto& r : *rows) {
    if (!r.empty() && r[0]) out.insert(std::move(*r[0]));
  }
  return out;
}

}  // namespace mcpdb::mysql
