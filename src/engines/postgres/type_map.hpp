#pragma once
// Result values (text format) -> JSON, by type OID. Choices, documented in the output schema:
//   int2/int4/oid -> number; int8 -> number when |v| <= 2^53-1, else a string (lossless);
//   numeric -> string (lossless); float4/float8 -> number ("NaN"/"Infinity" as strings);
//   bool -> boolean; date "YYYY-MM-DD"; timestamp "YYYY-MM-DDTHH:MM:SS[.ffffff]";
//   timestamptz "...Z" / "...+hh:mm" (sessions run with TimeZone=UTC, DateStyle=ISO);
//   interval ISO 8601 (IntervalStyle=iso_8601); bytea -> base64; json/jsonb -> JSON;
//   arrays -> JSON arrays (nested for several dimensions); pgvector vector/halfvec -> arrays;
//   everything else -> its text form.

#include <string>
#include <string_view>

#include "common/json.hpp"
#include "engines/postgres/params.hpp"

namespace mcpdb::postgres {

// OIDs of extension types, discovered once per database.
struct TypeInfo {
  Oid vector = 0;
  Oid halfvec = 0;
};

// Converts one non-NULL value.
Json valueToJson(Oid type, std::string_view text, const TypeInfo& types);

// A short type name for the column list ("int8", "text[]", "vector", or "oid:<n>").
std::string typeName(Oid type, const TypeInfo& types);

// The JSON type valueToJson gives a non-NULL value of `type`, in JSON Schema's words: a string,
// or an array of them where it depends on the value (int8 beyond 2^53-1 and float NaN/Infinity
// become strings); "any" for json/jsonb.
Json jsonTypeOf(Oid type, const TypeInfo& types);

// Helpers exposed for tests.
std::string base64Encode(std::string_view bytes);
std::string isoTimestamp(std::string_view pg_text);

}  // namespace mcpdb::postgres
