#pragma once
// The request bodies the server sends, built by type from the registry: table and attribute names
// come only from the config, agent values only ever become typed AttributeValues. Names in
// expressions are always #placeholders (ExpressionAttributeNames), never spliced.

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/json.hpp"
#include "common/result.hpp"
#include "engines/dynamodb/config.hpp"

namespace mcpdb::dynamodb {

// The only operations the serving code sends (besides the self-check's denied write).
enum class ReadOp { GetItem, Scan, DescribeTable };
std::string_view readOpName(ReadOp op);

// A wire key from agent arguments, typed by the target's key schema. `sort_key` is null when
// absent. InvalidArgument (naming the argument, never quoting the value) on a missing, extra or
// mistyped value.
Result<Json> buildKey(const Target& target, const Json& partition_key, const Json* sort_key);

// The key attributes of a wire item (scan cursors).
Result<Json> keyOfItem(const Target& target, const Json& wire_item);

// Checks that `key` holds exactly the target's key attributes with their types (decoded cursors).
Status validateWireKey(const Target& target, const Json& key);

Json getItemRequest(const Target& target, const Json& key, bool consistent_read);
Json scanRequest(const Target& target, std::uint32_t limit,
                 const std::optional<Json>& exclusive_start_key);
Json countScanRequest(const Target& target, std::uint32_t limit,
                      const std::optional<Json>& exclusive_start_key);
Json describeTableRequest(const Target& target);

}  // namespace mcpdb::dynamodb
