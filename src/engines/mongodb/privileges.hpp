#pragma once
// The read-only proof for MongoDB: the reply of {connectionStatus: 1, showPrivileges: true} is
// checked for any action that writes data, schema, indexes or users on the configured database,
// on every database or on the cluster.

#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "engines/engine.hpp"

namespace mcpdb::mongodb {

// True for privilege actions that change data, schema, indexes, users or the server.
bool isWriteAction(std::string_view action);

// Findings (checks "mongodb.auth", "mongodb.privileges") for a connectionStatus reply converted
// with bsonToJson. Never prints the user name; prints role names and actions. `uri_env` is the
// variable holding the source's URI (named in the fix).
std::vector<engines::Finding> assessConnectionStatus(const Json& reply, std::string_view database,
                                                     std::string_view uri_env = "MONGODB_URI");

}  // namespace mcpdb::mongodb
