#pragma once
// doctor for MongoDB: the read-only proof (the reply of {connectionStatus: 1, showPrivileges:
// true} checked for any action that writes data, schema, indexes or users on the configured
// database, on every database or on the cluster) and the targets' check.

#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "engines/engine.hpp"
#include "engines/mongodb/runtime.hpp"

namespace mcpdb::mongodb {

// True for privilege actions that change data, schema, indexes, users or the server.
bool isWriteAction(std::string_view action);

// Findings (checks "mongodb.auth", "mongodb.privileges") for a connectionStatus reply converted
// with bsonToJson. Never prints the user name; prints role names and actions. `uri_env` is the
// variable holding the source's URI (named in the fix).
std::vector<engines::Finding> assessConnectionStatus(const Json& reply, std::string_view database,
                                                     std::string_view uri_env = "MONGODB_URI");

// doctor and the start-up self-check on one source: connects and assesses its user's privileges
// (Inconclusive when it cannot).
std::vector<engines::Finding> checkSource(SourceClient& src);
// Each of `targets` (read on `src`): its collection exists and the user may read it.
std::vector<engines::Finding> checkTargets(SourceClient& src,
                                           const std::vector<const Target*>& targets);

}  // namespace mcpdb::mongodb
