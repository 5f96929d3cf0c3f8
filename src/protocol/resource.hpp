#pragma once
// What an engine hands the registry besides tools: read-only descriptions of what an allowlisted
// target looks like (a Postgres tool's parameters and result columns, a DynamoDB table's key
// schema, a MongoDB collection's exposed fields), served as MCP resources. Nothing beyond the
// allowlist is described (no catalog browsing), and a resource is visible exactly when the caller
// may see one of the tools it describes.

#include <functional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "common/result.hpp"
#include "protocol/tool.hpp"

namespace mcpdb::protocol {

// The URI scheme of every resource this server offers.
inline constexpr std::string_view kResourceScheme = "mcpdb://";

struct Resource {
  std::string uri;          // mcpdb://<engine>/<kind>/<name>, unique; ASCII, no spaces
  std::string name;         // short programmatic name (the tool or target name)
  std::string title;        // short human title
  std::string description;  // for an LLM: what the description holds
  std::string mime_type = "application/json";
  std::string engine;
  // The tools this resource describes: visible to a caller when any of them is.
  std::vector<std::string> tools;
  // The description as JSON (served as the resource's text). May ask the database (a Postgres
  // statement's result columns come from describing it); must honour ctx.stop and ctx.deadline,
  // never throw, and never return a row or a credential.
  std::function<Result<Json>(CallContext& ctx)> read;
};

// An RFC 6570 URI template naming a kind of resource (resources/templates/list).
struct ResourceTemplate {
  std::string uri_template;  // e.g. mcpdb://postgres/tools/{name}
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type = "application/json";
  std::string engine;  // listed when the caller may see any tool of this engine
};

}  // namespace mcpdb::protocol
