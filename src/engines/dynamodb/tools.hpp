#pragma once
// The four DynamoDB tools: list_dynamodb_targets, get_dynamodb_item, scan_dynamodb_table,
// count_dynamodb_items. There is deliberately no Query, PartiQL or filter tool.

#include <memory>
#include <string>

#include "common/result.hpp"
#include "engines/dynamodb/runtime.hpp"
#include "engines/dynamodb/config.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::dynamodb {

// The tool names; every tool serves every target.
inline constexpr const char* kListTargetsTool = "list_dynamodb_targets";
inline constexpr const char* kGetItemTool = "get_dynamodb_item";
inline constexpr const char* kScanTool = "scan_dynamodb_table";
inline constexpr const char* kCountTool = "count_dynamodb_items";

// Cursor context for a scan of `target`: binds a cursor to this tool and target.
std::string scanCursorContext(const Target& target);

// Every tool serves every target, each call on its target's backend (`routes`).
Status registerTools(protocol::ToolRegistry& tools, const std::shared_ptr<const Routes>& routes,
                     const std::string& cursor_key);

}  // namespace mcpdb::dynamodb
