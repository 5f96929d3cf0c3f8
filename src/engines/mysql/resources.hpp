#pragma once
// Schema resources of the MySQL engine: one per configured tool (mcpdb://mysql/tools/<name>),
// describing its parameters (from the config) and its result columns as the server describes the
// prepared statement, which is never executed. Reading one vets the tool's stored functions and
// views first, exactly as a call does: a refused tool gives an error, not a description.

#include <memory>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "common/result.hpp"
#include "engines/mysql/config.hpp"
#include "engines/mysql/connection.hpp"
#include "engines/mysql/runtime.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::mysql {

// The resource URI of a tool (its name percent-encoded, as for every engine).
std::string toolResourceUri(std::string_view tool);

// The tool's parameters as the config declares them, in `?` order:
// [{name, position (1-based), json_type, required, constraints as JSON Schema keywords...}].
Json describeParameters(const QueryTool& tool);

// The description JSON of `tool` from its statement's shape: {engine, tool, source, parameters,
// columns [{name, type, nullable}], result_key, limits}. Internal when the statement's placeholder
// count differs from the declared parameters.
Result<Json> describeTool(const QueryTool& tool, const std::string& source,
                          const StatementShape& shape);

// Adds a resource per tool of `settings` and the template. Never connects: each read describes
// through the runtime of the tool's source (`runtimeOf`, asked once per tool here).
Status registerResources(protocol::ToolRegistry& registry, const Settings& settings,
                         const RuntimeOf& runtimeOf);

}  // namespace mcpdb::mysql
