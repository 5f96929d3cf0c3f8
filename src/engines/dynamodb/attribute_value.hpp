#pragma once
// DynamoDB AttributeValue <-> the JSON an agent reads ("agent JSON"), lossless both ways.
//
// Wire form (DynamoDB JSON API): every value is a one-key object, e.g. {"S":"x"}, {"N":"12.5"},
// {"B":"<base64>"}, {"BOOL":true}, {"NULL":true}, {"M":{...}}, {"L":[...]}, {"SS":[...]},
// {"NS":[...]}, {"BS":[...]}.
//
// Agent form: plain JSON wherever plain JSON keeps the information, a one-key "$" wrapper
// elsewhere.
//   S            -> "text"
//   BOOL, NULL   -> true/false, null
//   L            -> [ ... ]
//   M            -> { ... }   (escaped as {"$map": {...}} only when the map has exactly one key
//   that
//                              starts with "$", so it cannot be mistaken for a wrapper)
//   N            -> a JSON number when the JSON text is exactly DynamoDB's digits and any JSON
//   reader
//                   gets the same value back (integers up to 2^53-1, decimals of at most 15
//                   significant digits whose shortest form is the same text); otherwise
//                   {"$number": "<exact digits>"} (DynamoDB numbers have 38 digits: a double would
//                   lose them)
//   B            -> {"$binary": "<base64>"}
//   SS / NS / BS -> {"$stringSet": [...]}, {"$numberSet": ["<digits>", ...]}, {"$binarySet":
//   ["<base64>", ...]}
// Sets keep the order DynamoDB sent.

#include <string>
#include <string_view>

#include "common/json.hpp"
#include "common/result.hpp"

namespace mcpdb::dynamodb {

// Values nest at most this deep (DynamoDB allows 32 levels; deeper input is refused, never
// recursed).
inline constexpr int kMaxNesting = 64;

// Wire AttributeValue -> agent JSON. InvalidArgument (safe message, no values) on malformed input.
Result<Json> attributeToJson(const Json& wire);
// Wire item (attribute name -> AttributeValue) -> agent JSON object.
Result<Json> itemToJson(const Json& wire_item);

// Agent JSON -> wire AttributeValue (the exact inverse of attributeToJson).
Result<Json> jsonToAttribute(const Json& agent);
// Agent JSON object -> wire item.
Result<Json> jsonToItem(const Json& agent_item);

// True when `text` is a DynamoDB number: optional '-', digits with an optional fraction and an
// optional exponent, at most 38 significant digits, magnitude 1E-130 .. 9.99..E+125 (or zero).
bool isDynamoNumber(std::string_view text);

// Strict standard base64 (RFC 4648 section 4, padded); empty text is valid (zero bytes).
bool isBase64(std::string_view text);

}  // namespace mcpdb::dynamodb
