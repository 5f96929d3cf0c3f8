#pragma once
// BSON -> JSON for agents: readable, and lossless (every BSON value maps to one JSON form that
// names its type where plain JSON cannot). The mapping, close to MongoDB Relaxed Extended JSON v2:
//   double            number; NaN/Infinity/-Infinity as {"$numberDouble": "NaN"}
//   string            string; invalid UTF-8 as {"$invalidUtf8": "<base64>"}
//   document / array  object / array; a document with a field starting with '$' is wrapped as
//                     {"$document": {...}} so it cannot be mistaken for a typed value below
//   binary            {"$binary": {"base64": "...", "subType": "00"}}; UUID (subtype 4, 16 bytes)
//                     as {"$uuid": "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"}
//   ObjectId          {"$oid": "<24 hex>"}
//   bool, null        true/false, null
//   date              {"$date": "YYYY-MM-DDTHH:MM:SS.mmmZ"} (ISO 8601 UTC, years 0-9999), else
//                     {"$date": {"$numberLong": "<ms since epoch>"}}
//   regex             {"$regularExpression": {"pattern": "...", "options": "..."}}
//   int32             number
//   int64             number when |v| <= 2^53, else {"$numberLong": "<decimal>"}
//   Decimal128        {"$numberDecimal": "<decimal string>"}
//   timestamp         {"$timestamp": {"t": <seconds>, "i": <increment>}}
//   code / code w/ scope / symbol / DBPointer / undefined / minKey / maxKey: their extended JSON
//   forms
// Duplicate field names keep every value: later ones get the key "<name> (2)", "<name> (3)", ...
// Nesting deeper than kMaxDepth becomes {"$truncated": "nesting deeper than 100 levels"}.

#include <cstddef>
#include <cstdint>

#include <bson/bson.h>

#include "common/json.hpp"
#include "common/result.hpp"

namespace mcpdb::mongodb {

inline constexpr int kMaxDepth = 100;

// A whole document.
Json bsonToJson(const bson_t& doc);
// The value under an iterator.
Json bsonValueToJson(const bson_iter_t& iter);
// Untrusted bytes (fuzzing, raw replies): validated first; InvalidArgument when not a BSON
// document.
Result<Json> bsonBytesToJson(const std::uint8_t* data, std::size_t size);

// "YYYY-MM-DDTHH:MM:SS.mmmZ" for milliseconds since the epoch, or "" outside years 0-9999.
std::string isoDateFromMillis(std::int64_t ms);
// Standard base64 with padding.
std::string base64Encode(const std::uint8_t* data, std::size_t size);

}  // namespace mcpdb::mongodb
