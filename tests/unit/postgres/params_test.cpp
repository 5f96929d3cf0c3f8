// Binding: every argument becomes a bound text value with an explicit type OID, never SQL text.
#include <gtest/gtest.h>

#include "engines/postgres/params.hpp"
#include "unit/postgres/test_util.hpp"

namespace mcpdb::postgres {
namespace {

std::vector<ParamSpec> specs() {
  auto p = test::parse(R"(
postgres:
  tools:
    t:
      description: T.
      statement: SELECT $1, $2, $3, $4, $5, $6, $7, $8
      parameters:
        - {name: s, type: string, description: S, max_length: 50}
        - {name: i, type: integer, description: I, default: 7}
        - {name: f, type: float, description: F, required: false}
        - {name: b, type: boolean, description: B, required: false}
        - {name: d, type: date, description: D, required: false}
        - {name: ts, type: timestamp, description: TS, required: false}
        - {name: u, type: uuid, description: U, required: false}
        - {name: arr, type: array, description: A, items: {type: string}, required: false}
)");
  EXPECT_TRUE(p.errors.empty()) << (p.errors.empty() ? "" : p.errors[0]);
  return p.section.tools.at(0).parameters;
}

TEST(PostgresParams, BindsTypedValuesWithOids) {
  auto r = bindArguments(specs(), Json{{"s", "x'; DROP TABLE t; --"},
                                       {"f", 1.5},
                                       {"b", true},
                                       {"d", "2024-02-29"},
                                       {"ts", "2024-01-01T10:00:00Z"},
                                       {"u", "123e4567-e89b-12d3-a456-426614174000"},
                                       {"arr", {"a\"b", "c\\d", "e,f}"}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->values.size(), 8U);
  EXPECT_EQ(*r->values[0], "x'; DROP TABLE t; --");  // bound verbatim: a value, not SQL
  EXPECT_EQ(*r->values[1], "7");                     // the default
  EXPECT_EQ(*r->values[2], "1.5");
  EXPECT_EQ(*r->values[3], "true");
  EXPECT_EQ(*r->values[4], "2024-02-29");
  EXPECT_EQ(*r->values[5], "2024-01-01T10:00:00Z");
  EXPECT_EQ(*r->values[7], R"({"a\"b","c\\d","e,f}"})");
  EXPECT_EQ(r->types,
            (std::vector<Oid>{oid::kText, oid::kInt8, oid::kFloat8, oid::kBool, oid::kDate,
                              oid::kTimestamptz, oid::kUuid, oid::kTextArray}));
  auto ptrs = r->pointers();
  EXPECT_STREQ(ptrs[0], "x'; DROP TABLE t; --");
}

TEST(PostgresParams, AbsentOptionalIsNull) {
  auto r = bindArguments(specs(), Json{{"s", "a"}});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->values[2].has_value());
  EXPECT_EQ(r->pointers()[2], nullptr);
}

TEST(PostgresParams, RefusesWithoutEchoingValues) {
  const auto p = specs();
  auto missing = bindArguments(p, Json::object());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "arguments.s: is required");
  auto unknown = bindArguments(p, Json{{"s", "a"}, {"secret_sql", "x"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message.find("secret_sql"), std::string::npos);
  auto too_long = bindArguments(p, Json{{"s", std::string(51, 'q')}});
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().code, Code::InvalidArgument);
  EXPECT_EQ(too_long.error().message.find("qqq"), std::string::npos);
  auto nul = bindArguments(p, Json{{"s", std::string("a\0b", 3)}});
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.error().message, "arguments.s: must not contain NUL characters");
  EXPECT_FALSE(bindArguments(p, Json{{"s", "a"}, {"i", "1; DROP TABLE t"}}).ok());
  EXPECT_FALSE(bindArguments(p, Json{{"s", "a"}, {"i", 1.5}}).ok());
  EXPECT_FALSE(bindArguments(p, Json{{"s", "a"}, {"d", "2024-01-01'; --"}}).ok());
  EXPECT_FALSE(bindArguments(p, Json{{"s", "a"}, {"u", "not-a-uuid"}}).ok());
  EXPECT_FALSE(bindArguments(p, Json{{"s", "a"}, {"b", "true"}}).ok());
  EXPECT_FALSE(bindArguments(p, Json{{"s", {{"$ne", nullptr}}}}).ok());
  EXPECT_FALSE(bindArguments(p, Json{{"s", "a"}, {"arr", {1, 2}}}).ok());
  EXPECT_FALSE(bindArguments(p, Json::array()).ok());
}

TEST(PostgresParams, IntegersKeepFullRange) {
  ScalarSpec spec;
  spec.type = ScalarType::Integer;
  EXPECT_EQ(*encodeScalar(spec, Json(std::int64_t{-9223372036854775807LL - 1}), "x"),
            "-9223372036854775808");
  EXPECT_EQ(*encodeScalar(spec, Json(std::int64_t{9223372036854775807LL}), "x"),
            "9223372036854775807");
  EXPECT_FALSE(encodeScalar(spec, Json(std::uint64_t{18446744073709551615ULL}), "x").ok());
  EXPECT_EQ(*encodeScalar(spec, Json(4.0), "x"), "4");
}

// An integer is what the schema says it is: integral floats count (4.0), others do not (4.5, and
// 1e17, beyond 2^53, where a float no longer says which integer was meant).
TEST(PostgresParams, IntegralFloatsAreIntegersLikeTheSchema) {
  ScalarSpec spec;
  spec.type = ScalarType::Integer;
  finalizeScalar(spec);
  EXPECT_EQ(*encodeScalar(spec, Json(-3.0), "x"), "-3");
  EXPECT_EQ(encodeScalar(spec, Json(4.5), "x").error().message, "x: must be an integer");
  EXPECT_EQ(encodeScalar(spec, Json(1e17), "x").error().message, "x: must be an integer");
  std::vector<ParamSpec> p(1);
  p[0].name = "n";
  p[0].scalar = spec;
  auto bound = bindArguments(p, Json{{"n", 7.0}});
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(*bound->values[0], "7");
}

}  // namespace
}  // namespace mcpdb::postgres
