#include "engines/mongodb/doctor.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "engines/mongodb/bson_json.hpp"
#include "engines/mongodb/commands.hpp"

namespace mcpdb::mongodb {

bool isWriteAction(std::string_view action) {
  // MongoDB privilege actions (docs: "Privilege Actions") that modify anything.
  static const std::set<std::string_view> kWrite = {"anyAction",
                                                    "insert",
                                                    "update",
                                                    "remove",
                                                    "bypassDocumentValidation",
                                                    "createCollection",
                                                    "createIndex",
                                                    "dropCollection",
                                                    "dropDatabase",
                                                    "dropIndex",
                                                    "renameCollectionSameDB",
                                                    "collMod",
                                                    "convertToCapped",
                                                    "compact",
                                                    "reIndex",
                                                    "emptycapped",
                                                    "createSearchIndexes",
                                                    "dropSearchIndex",
                                                    "updateSearchIndex",
                                                    "applyOps",
                                                    "enableSharding",
                                                    "refineCollectionShardKey",
                                                    "reshardCollection",
                                                    "moveChunk",
                                                    "splitChunk",
                                                    "cleanupOrphaned",
                                                    "createUser",
                                                    "dropUser",
                                                    "updateUser",
                                                    "grantRole",
                                                    "revokeRole",
                                                    "createRole",
                                                    "dropRole",
                                                    "updateRole",
                                                    "grantRolesToUser",
                                                    "revokeRolesFromUser",
                                                    "grantPrivilegesToRole",
                                                    "revokePrivilegesFromRole",
                                                    "dropAllUsersFromDatabase",
                                                    "dropAllRolesFromDatabase",
                                                    "changePassword",
                                                    "changeCustomData",
                                                    "setFeatureCompatibilityVersion",
                                                    "shutdown",
                                                    "fsync",
                                                    "restore",
                                                    "internal",
                                                    "changeStreamPreAndPostImages"};
  return kWrite.count(action) != 0;
}

namespace {

using engines::Finding;

// Where a privilege applies, relative to the configured database; empty when elsewhere.
std::string scopeOf(const Json& resource, std::string_view database, bool& ours) {
  ours = true;
  if (!resource.is_object()) return "an unreadable resource";
  if (resource.value("anyResource", false)) return "any resource";
  if (resource.value("cluster", false)) return "the cluster";
  const std::string db = resource.contains("db") && resource["db"].is_string()
                             ? resource["db"].get<std::string>()
                             : "";
  const std::string coll = resource.contains("collection") && resource["collection"].is_string()
                               ? resource["collection"].get<std::string>()
                               : "";
  const std::string what = coll.empty() ? "every collection" : "collection '" + coll + "'";
  if (db.empty()) return what + " of every database";
  if (db == database) return what + " of database '" + db + "'";
  ours = false;
  return what + " of database '" + db + "'";
}

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::vector<Finding> assessConnectionStatus(const Json& reply, std::string_view database,
                                            std::string_view uri_env) {
  std::vector<Finding> out;
  const Json* auth = reply.is_object() && reply.contains("authInfo") ? &reply["authInfo"] : nullptr;
  if (auth == nullptr || !auth->is_object()) {
    out.push_back({Finding::Severity::Inconclusive, "mongodb.auth",
                   "connectionStatus returned no authInfo; the privileges of the MongoDB user "
                   "could not be verified"});
    return out;
  }
  const Json users = auth->value("authenticatedUsers", Json::array());
  std::set<std::string> roles;
  for (const auto& r : auth->value("authenticatedUserRoles", Json::array())) {
    if (r.is_object() && r.contains("role") && r["role"].is_string()) {
      roles.insert(r["role"].get<std::string>() + "@" +
                   (r.contains("db") && r["db"].is_string() ? r["db"].get<std::string>() : "?"));
    }
  }
  if (!users.is_array() || users.empty()) {
    out.push_back(
        {Finding::Severity::Violation, "mongodb.auth",
         "no authenticated user: the server does not require authentication or " +
             std::string(uri_env) +
             " carries no "
             "credentials, so nothing at the database stops a client holding this URI from "
             "writing; connect as "
             "a user with only the built-in 'read' role on '" +
             std::string(database) + "'",
         "enable authentication (security.authorization: enabled) and put a user with "
         "only the built-in 'read' role in " +
             std::string(uri_env) + ": db.getSiblingDB('" + std::string(database) +
             "').createUser({user: 'mcp_reader', pwd: <secret>, "
             "roles: [{role: 'read', db: '" +
             std::string(database) + "'}]})"});
    return out;
  }
  if (!auth->contains("authenticatedUserPrivileges") ||
      !(*auth)["authenticatedUserPrivileges"].is_array()) {
    out.push_back(
        {Finding::Severity::Inconclusive, "mongodb.privileges",
         "connectionStatus did not list privileges (showPrivileges unsupported?); roles: " +
             (roles.empty() ? std::string("none") : join(roles))});
    return out;
  }
  std::set<std::string> violations;
  std::set<std::string> elsewhere;
  for (const auto& p : (*auth)["authenticatedUserPrivileges"]) {
    if (!p.is_object()) continue;
    std::set<std::string> writes;
    for (const auto& a : p.value("actions", Json::array())) {
      if (a.is_string() && isWriteAction(a.get<std::string>())) writes.insert(a.get<std::string>());
    }
    if (writes.empty()) continue;
    bool ours = true;
    const std::string scope = scopeOf(p.value("resource", Json()), database, ours);
    (ours ? violations : elsewhere).insert(join(writes) + " on " + scope);
  }
  const std::string role_text = roles.empty() ? std::string("none") : join(roles);
  if (!violations.empty()) {
    std::string msg = "the MongoDB user can write: ";
    std::string list;
    for (const auto& v : violations) list += (list.empty() ? "" : "; ") + v;
    out.push_back({Finding::Severity::Violation, "mongodb.privileges",
                   msg + list + " (roles: " + role_text + ")",
                   "revoke every role but 'read' on '" + std::string(database) +
                       "': db.getSiblingDB('admin').revokeRolesFromUser('<user>', [<the roles "
                       "above>])"});
  }
  if (!elsewhere.empty()) {
    std::string list;
    for (const auto& v : elsewhere) list += (list.empty() ? "" : "; ") + v;
    out.push_back(
        {Finding::Severity::Warning, "mongodb.privileges.other_databases",
         "the MongoDB user can write in other databases: " + list + " (roles: " + role_text + ")"});
  }
  if (violations.empty()) {
    out.push_back({Finding::Severity::Ok, "mongodb.privileges",
                   "the MongoDB user has no write action on database '" + std::string(database) +
                       "', any database or the cluster (roles: " + role_text + ")"});
  }
  return out;
}

namespace {

using Sev = engines::Finding::Severity;

// Target `t`'s collection exists and can be read (a count of at most one document).
engines::Finding checkTarget(Client& client, const Target& t) {
  const std::string db = client.database();
  const std::string check = "mongodb.target." + t.name;
  const std::string label = "target " + t.name + " (collection " + t.collection + ")";
  auto listed = client.readCommand(*listCollectionCommand(t.collection));
  ReadOptions ro;
  auto counted = client.countDocuments(t.collection, *countFilter(), *countOptions(1, ro));
  const Error* failed = !listed ? &listed.error() : !counted ? &counted.error() : nullptr;
  if (failed != nullptr) {
    const bool denied = failed->code == Code::PermissionDenied;
    return {denied ? Sev::Unusable : Sev::Inconclusive, check, label + ": " + operatorText(*failed),
            denied ? "db.getSiblingDB('" + db +
                         "').grantRolesToUser('<user>', [{role: 'read', db: '" + db + "'}])"
                   : ""};
  }
  const Json reply = bsonToJson(**listed);
  const Json batch = reply.contains("cursor") && reply["cursor"].is_object()
                         ? reply["cursor"].value("firstBatch", Json::array())
                         : Json::array();
  if (!batch.is_array() || batch.empty()) {
    return {Sev::Unusable, check, label + ": no such collection in database '" + db + "'",
            "create it, or correct mongodb.targets." + t.name + ".collection"};
  }
  return {Sev::Ok, check, label + ": exists and can be read"};
}

}  // namespace

std::vector<engines::Finding> checkSource(SourceClient& src) {
  auto client = src.client();
  if (!client) {
    return {{Sev::Inconclusive, "mongodb.connect",
             "could not connect, so nothing was proved: " + operatorText(client.error())}};
  }
  BsonPtr cmd = connectionStatusCommand();
  auto reply = (*client)->readCommand(*cmd);
  if (!reply) {
    return {{Sev::Inconclusive, "mongodb.connection_status",
             "could not run connectionStatus, so the MongoDB user's privileges are unverified: " +
                 operatorText(reply.error())}};
  }
  return assessConnectionStatus(bsonToJson(**reply), (*client)->database(), src.source().uri_env);
}

std::vector<engines::Finding> checkTargets(SourceClient& src,
                                           const std::vector<const Target*>& targets) {
  auto client = src.client();
  if (!client) {
    return {{Sev::Inconclusive, "mongodb.targets",
             "could not check the targets: " + operatorText(client.error())}};
  }
  std::vector<engines::Finding> out;
  for (const Target* t : targets) out.push_back(checkTarget(**client, *t));
  return out;
}

}  // namespace mcpdb::mongodb
