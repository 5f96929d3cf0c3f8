#pragma once
// Schema resources of the DynamoDB engine: one per table that a registered target reads
// (mcpdb://dynamodb/tables/<table>; with several sources
// mcpdb://dynamodb/sources/<source>/tables/<table>), with its key schema and indexes from
// DescribeTable and, per target, the key schema the tools use and the fields they return. The JSON
// shape is documented in README.md ("Schema resources").

#include <memory>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "engines/dynamodb/runtime.hpp"
#include "engines/dynamodb/config.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::dynamodb {

// The resource URI of a table when there is one source, and of a source's table when there are
// several (percent-encoded).
std::string tableResourceUri(std::string_view table);
std::string tableResourceUri(std::string_view source, std::string_view table);

// Adds a resource per table of each source and the template. Never connects: a read sends one
// DescribeTable through the source's backend (the tools' transport) when its cached answer is
// missing or old.
Status registerResources(protocol::ToolRegistry& tools,
                         const std::shared_ptr<const Routes>& routes);

}  // namespace mcpdb::dynamodb
