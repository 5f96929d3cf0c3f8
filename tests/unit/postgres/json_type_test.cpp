// The JSON type a schema resource reports for a column: the type valueToJson actually produces.
#include <gtest/gtest.h>

#include <algorithm>

#include "engines/postgres/type_map.hpp"

namespace mcpdb::postgres {
namespace {

// The JSON Schema type name of a value.
std::string kindOf(const Json& v) {
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

// Every value's kind is one jsonTypeOf allows.
void expectAllowed(Oid type, std::string_view text, const TypeInfo& types = {}) {
  const Json allowed = jsonTypeOf(type, types);
  const std::string kind = kindOf(valueToJson(type, text, types));
  if (allowed == "any") return;
  if (allowed.is_string()) {
    EXPECT_EQ(allowed, kind) << typeName(type, types) << " " << text;
  } else {
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), kind), allowed.end())
        << typeName(type, types) << " " << text << " -> " << kind;
  }
}

TEST(PostgresJsonType, MatchesWhatValuesBecome) {
  expectAllowed(oid::kBool, "t");
  expectAllowed(oid::kInt2, "-7");
  expectAllowed(oid::kInt4, "2147483647");
  expectAllowed(oid::kOid, "16384");
  expectAllowed(oid::kInt8, "42");
  expectAllowed(oid::kInt8, "9223372036854775807");  // beyond 2^53-1: a string
  expectAllowed(oid::kFloat8, "0.1");
  expectAllowed(oid::kFloat4, "NaN");
  expectAllowed(oid::kNumeric, "12.50");
  expectAllowed(oid::kText, "x");
  expectAllowed(oid::kBytea, "\\x00ff");
  expectAllowed(oid::kDate, "2024-01-02");
  expectAllowed(oid::kTimestamptz, "2024-01-15 10:20:30+00");
  expectAllowed(oid::kUuid, "123e4567-e89b-12d3-a456-426614174000");
  expectAllowed(oid::kTextArray, "{a,b}");
  expectAllowed(oid::kInt8Array, "{1,2}");
  expectAllowed(12345, "an enum label");  // unknown types: their text
  TypeInfo pgvector;
  pgvector.vector = 16500;
  expectAllowed(16500, "[1,2,3]", pgvector);
}

TEST(PostgresJsonType, Names) {
  EXPECT_EQ(jsonTypeOf(oid::kInt8, {}), Json::parse(R"(["integer", "string"])"));
  EXPECT_EQ(jsonTypeOf(oid::kFloat8, {}), Json::parse(R"(["number", "string"])"));
  EXPECT_EQ(jsonTypeOf(oid::kJsonb, {}), "any");
  EXPECT_EQ(jsonTypeOf(oid::kJson, {}), "any");
  EXPECT_EQ(jsonTypeOf(oid::kNumeric, {}), "string");
  EXPECT_EQ(jsonTypeOf(oid::kUuidArray, {}), "array");
  EXPECT_EQ(jsonTypeOf(0, {}), "string");  // no vector type known: never "array" by accident
}

}  // namespace
}  // namespace mcpdb::postgres
