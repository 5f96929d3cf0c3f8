#pragma once
// Validation of tool arguments against the tool's input schema.
//
// Hand-written: Debian bookworm packages no JSON Schema validator for C++. Only the subset that
// this server's own generated schemas use is supported (type, enum, const, minimum/maximum and the
// exclusive forms, minLength/maxLength in code points, pattern, format date/date-time/uuid, items,
// minItems/maxItems, properties, required, additionalProperties:false); `validateSchemaSubset`
// refuses anything else at startup so no keyword is silently ignored.

#include <string>

#include "common/json.hpp"
#include "common/result.hpp"

namespace mcpdb::protocol {

// Checks `value` against `schema`. On failure the message names the offending field, e.g.
// "arguments.k: must be at most 20". It never quotes the offending value (values may be secrets).
Status validateJson(const Json& schema, const Json& value, const std::string& path = "arguments");

// Startup check that a schema uses only supported keywords (so validation is never partial).
Status validateSchemaSubset(const Json& schema, const std::string& path = "inputSchema");

}  // namespace mcpdb::protocol
