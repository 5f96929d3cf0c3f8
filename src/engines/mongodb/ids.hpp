#pragma once
// Agent-supplied `_id` values are converted by the target's declared id type into exactly one
// BSON scalar. Nothing an agent sends is ever parsed as a document: a string such as
// `{"$ne": null}` or `"$where"` stays a string value (or is refused for ObjectId/int targets).

#include <cstdint>
#include <string>
#include <variant>

#include <bson/bson.h>

#include "common/json.hpp"
#include "common/result.hpp"
#include "engines/mongodb/config.hpp"

namespace mcpdb::mongodb {

// One typed _id value.
struct TypedId {
  std::variant<bson_oid_t, std::string, std::int64_t> value;
};

// Converts a tool argument (JSON string or integer) by `type`. Errors are InvalidArgument and
// never quote the value.
Result<TypedId> convertId(const Json& arg, IdType type);

// Appends the id as one scalar (ObjectId, UTF-8 string or int64) under `key`.
bool appendTypedId(bson_t* doc, const char* key, const TypedId& id);

}  // namespace mcpdb::mongodb
