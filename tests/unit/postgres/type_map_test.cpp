// Result mapping by type OID (text format, sessions in ISO DateStyle, UTC, hex bytea).
#include <gtest/gtest.h>

#include "engines/postgres/type_map.hpp"

namespace mcpdb::postgres {
namespace {

const TypeInfo kTypes{16385, 16390};

Json map(Oid type, std::string_view text) {
  return valueToJson(type, text, kTypes);
}

TEST(PostgresTypeMap, Integers) {
  EXPECT_EQ(map(oid::kInt2, "-12"), Json(-12));
  EXPECT_EQ(map(oid::kInt4, "2147483647"), Json(2147483647));
  EXPECT_EQ(map(oid::kInt8, "9007199254740991"), Json(9007199254740991LL));
  EXPECT_EQ(map(oid::kInt8, "-9007199254740991"), Json(-9007199254740991LL));
  // Beyond 2^53 - 1 a JSON number would lose precision in most clients: a string instead.
  EXPECT_EQ(map(oid::kInt8, "9007199254740993"), Json("9007199254740993"));
  EXPECT_EQ(map(oid::kInt8, "-9223372036854775808"), Json("-9223372036854775808"));
}

TEST(PostgresTypeMap, NumericAndFloat) {
  EXPECT_EQ(map(oid::kNumeric, "12345678901234567890.123456789"),
            Json("12345678901234567890.123456789"));
  EXPECT_EQ(map(oid::kFloat8, "0.1"), Json(0.1));
  EXPECT_EQ(map(oid::kFloat4, "-1.5e+10"), Json(-1.5e10));
  EXPECT_EQ(map(oid::kFloat8, "NaN"), Json("NaN"));
  EXPECT_EQ(map(oid::kFloat8, "-Infinity"), Json("-Infinity"));
}

TEST(PostgresTypeMap, TextBoolUuid) {
  EXPECT_EQ(map(oid::kText, "héllo \"x\""), Json("héllo \"x\""));
  EXPECT_EQ(map(oid::kBool, "t"), Json(true));
  EXPECT_EQ(map(oid::kBool, "f"), Json(false));
  EXPECT_EQ(map(oid::kUuid, "123e4567-e89b-12d3-a456-426614174000"),
            Json("123e4567-e89b-12d3-a456-426614174000"));
}

TEST(PostgresTypeMap, DatesAndTimes) {
  EXPECT_EQ(map(oid::kDate, "2024-01-15"), Json("2024-01-15"));
  EXPECT_EQ(map(oid::kTimestamp, "2024-01-15 10:20:30"), Json("2024-01-15T10:20:30"));
  EXPECT_EQ(map(oid::kTimestamp, "2024-01-15 10:20:30.123456"), Json("2024-01-15T10:20:30.123456"));
  EXPECT_EQ(map(oid::kTimestamptz, "2024-01-15 10:20:30+00"), Json("2024-01-15T10:20:30Z"));
  EXPECT_EQ(map(oid::kTimestamptz, "2024-01-15 10:20:30.5+05:30"),
            Json("2024-01-15T10:20:30.5+05:30"));
  EXPECT_EQ(map(oid::kTimestamptz, "2024-01-15 10:20:30-08"), Json("2024-01-15T10:20:30-08:00"));
  EXPECT_EQ(map(oid::kTimestamptz, "infinity"), Json("infinity"));
  EXPECT_EQ(map(oid::kInterval, "P1DT2H"), Json("P1DT2H"));
}

TEST(PostgresTypeMap, ByteaJsonVector) {
  EXPECT_EQ(map(oid::kBytea, "\\x00ff4869"), Json("AP9IaQ=="));
  EXPECT_EQ(map(oid::kBytea, "\\x"), Json(""));
  EXPECT_EQ(map(oid::kJsonb, R"({"a": [1, 2, {"b": null}]})"),
            Json::parse(R"({"a":[1,2,{"b":null}]})"));
  EXPECT_EQ(map(oid::kJson, "\"s\""), Json("s"));
  EXPECT_EQ(map(16385, "[0.5,-1,2.25]"), Json::array({0.5, -1, 2.25}));
  EXPECT_EQ(map(16390, "[1,2]"), Json::array({1, 2}));
}

TEST(PostgresTypeMap, Arrays) {
  EXPECT_EQ(map(1016, "{1,-2,9007199254740993}"), Json::array({1, -2, "9007199254740993"}));
  EXPECT_EQ(map(1009, R"({plain,"with space","q\"uote","back\\slash",NULL,"NULL"})"),
            Json::array({"plain", "with space", "q\"uote", "back\\slash", nullptr, "NULL"}));
  EXPECT_EQ(map(1007, "{{1,2},{3,4}}"), Json::array({Json::array({1, 2}), Json::array({3, 4})}));
  EXPECT_EQ(map(1007, "[0:1]={5,6}"), Json::array({5, 6}));
  EXPECT_EQ(map(1000, "{t,f}"), Json::array({true, false}));
  EXPECT_EQ(map(1182, "{2024-01-01,2024-12-31}"), Json::array({"2024-01-01", "2024-12-31"}));
  EXPECT_EQ(map(1009, "{}"), Json::array());
  EXPECT_EQ(map(3807, R"({"{\"a\": 1}","[2]"})"), Json::array({Json{{"a", 1}}, Json::array({2})}));
  // Malformed input never crashes; it falls back to the text.
  EXPECT_EQ(map(1007, "{1,2"), Json("{1,2"));
}

TEST(PostgresTypeMap, TypeNames) {
  EXPECT_EQ(typeName(oid::kInt8, kTypes), "int8");
  EXPECT_EQ(typeName(1009, kTypes), "text[]");
  EXPECT_EQ(typeName(16385, kTypes), "vector");
  EXPECT_EQ(typeName(99999, kTypes), "oid:99999");
  EXPECT_EQ(map(99999, "(1,2)"), Json("(1,2)"));
}

}  // namespace
}  // namespace mcpdb::postgres
