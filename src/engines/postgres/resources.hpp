#pragma once
// Schema resources of the Postgres engine: one per configured tool (mcpdb://postgres/tools/<name>),
// describing its parameters and its result columns as PostgreSQL describes the prepared statement.
// The JSON shape is documented in README.md ("Schema resources").

#include <memory>
#include <vector>

#include "common/result.hpp"
#include "engines/postgres/runtime.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::postgres {

// The resource URI of a tool (its name percent-encoded: tool names never need it, but the
// helper is the same for every engine).
std::string toolResourceUri(std::string_view tool);

// Adds a resource per query tool and for the semantic-search tool, and the template. Never
// connects: each read describes its statement through `rt` (guard, proof, pool) on demand.
// `runtimes`: one per source, each describing its own tools.
Status registerResources(protocol::ToolRegistry& registry,
                         const std::vector<std::shared_ptr<Runtime>>& runtimes);
// The same for one runtime.
Status registerResources(protocol::ToolRegistry& registry, const std::shared_ptr<Runtime>& rt);

}  // namespace mcpdb::postgres
