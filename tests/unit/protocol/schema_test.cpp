#include <gtest/gtest.h>

#include "protocol/jsonrpc.hpp"
#include "protocol/schema.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::protocol {
namespace {

const Json kSchema = Json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
    "k": {"type": "integer", "minimum": 1, "maximum": 20},
    "day": {"type": "string", "format": "date"},
    "at": {"type": "string", "format": "date-time"},
    "id": {"type": "string", "format": "uuid"},
    "color": {"type": "string", "enum": ["red", "blue"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "maxItems": 2}
  },
  "required": ["name"],
  "additionalProperties": false
})");

std::string check(const std::string& args) {
  auto st = validateJson(kSchema, Json::parse(args));
  return st.ok() ? "ok" : st.error().message;
}

TEST(Schema, NamesTheBadFieldWithoutEchoingTheValue) {
  EXPECT_EQ(check(R"({"name":"abc"})"), "ok");
  EXPECT_EQ(check(R"({})"), "arguments.name: is required");
  EXPECT_EQ(check(R"({"name":7})"), "arguments.name: must be a string");
  EXPECT_EQ(check(R"({"name":"abcdef"})"), "arguments.name: must be at most 5 characters long");
  EXPECT_EQ(check(R"({"name":"AB"})"),
            R"(arguments.name: does not match the required pattern "^[a-z]+$")");
  EXPECT_EQ(check(R"({"name":"a","k":0})"), "arguments.k: must be at least 1");
  EXPECT_EQ(check(R"({"name":"a","k":21})"), "arguments.k: must be at most 20");
  EXPECT_EQ(check(R"({"name":"a","k":2.5})"), "arguments.k: must be an integer");
  EXPECT_EQ(check(R"({"name":"a","k":3.0})"), "ok");
  EXPECT_EQ(check(R"({"name":"a","k":"3"})"), "arguments.k: must be an integer");
  EXPECT_EQ(check(R"({"name":"a","day":"2024-02-30"})"),
            "ok");  // calendar checks are the database's
  EXPECT_EQ(check(R"({"name":"a","day":"2024-13-01"})"),
            "arguments.day: must be a date (YYYY-MM-DD)");
  EXPECT_EQ(check(R"({"name":"a","at":"2024-01-01T10:00:00Z"})"), "ok");
  EXPECT_EQ(check(R"({"name":"a","at":"2024-01-01T10:00:00+02:00"})"), "ok");
  EXPECT_EQ(check(R"({"name":"a","at":"yesterday"})"),
            "arguments.at: must be an RFC 3339 date-time");
  EXPECT_EQ(check(R"({"name":"a","id":"123e4567-e89b-12d3-a456-426614174000"})"), "ok");
  EXPECT_EQ(check(R"({"name":"a","id":"' OR 1=1 --"})"), "arguments.id: must be a UUID");
  EXPECT_EQ(check(R"({"name":"a","color":"green"})"),
            R"(arguments.color: must be one of: "red", "blue")");
  EXPECT_EQ(check(R"({"name":"a","tags":["abc","de"]})"), "ok");
  EXPECT_EQ(check(R"({"name":"a","tags":["abcd"]})"),
            "arguments.tags[0]: must be at most 3 characters long");
  EXPECT_EQ(check(R"({"name":"a","tags":["a","b","c"]})"),
            "arguments.tags: must have at most 2 items");
  EXPECT_EQ(check(R"({"name":"a","extra":{"$ne":null}})"), "arguments: unknown field 'extra'");
}

TEST(Schema, LengthCountsCodePoints) {
  EXPECT_EQ(check(R"({"name":"abc"})"), "ok");
  const Json s = {{"type", "string"}, {"maxLength", 2}};
  EXPECT_TRUE(validateJson(s, Json("한국")).ok());
  EXPECT_FALSE(validateJson(s, Json("한국어")).ok());
}

TEST(Schema, SubsetCheckRefusesUnsupportedKeywords) {
  EXPECT_TRUE(validateSchemaSubset(kSchema).ok());
  EXPECT_FALSE(validateSchemaSubset(Json{{"type", "object"}, {"oneOf", Json::array()}}).ok());
  EXPECT_FALSE(validateSchemaSubset(Json{{"type", "string"}, {"pattern", "("}}).ok());
  EXPECT_FALSE(validateSchemaSubset(Json{{"type", "string"}, {"format", "email"}}).ok());
}

TEST(ToolNames, FollowMcpRules) {
  EXPECT_TRUE(isValidToolName("semantic_search_documents"));
  EXPECT_TRUE(isValidToolName("a.b-c_D9"));
  EXPECT_FALSE(isValidToolName(""));
  EXPECT_FALSE(isValidToolName("has space"));
  EXPECT_FALSE(isValidToolName("semi;colon"));
  EXPECT_FALSE(isValidToolName(std::string(129, 'a')));
  EXPECT_TRUE(isValidToolName(std::string(128, 'a')));
}

// Tool names are unique regardless of case, across engines too; the refusal names both.
TEST(ToolNames, AreUniqueRegardlessOfCase) {
  ToolRegistry reg;
  Tool t;
  t.name = "find_user";
  t.engine = "a";
  t.input_schema = {{"type", "object"}};
  t.handler = [](const Json&, CallContext&) -> Result<ToolOutput> { return ToolOutput{}; };
  ASSERT_TRUE(reg.add(t));
  t.engine = "b";
  auto exact = reg.add(t);
  ASSERT_FALSE(exact);
  EXPECT_EQ(exact.error().message, "duplicate tool name 'find_user'");
  t.name = "Find_USER";
  auto folded = reg.add(t);
  ASSERT_FALSE(folded);
  EXPECT_EQ(folded.error().message,
            "tool names 'find_user' and 'Find_USER' differ only in case; tool names must be unique "
            "regardless of case");
  t.name = "find_user2";
  EXPECT_TRUE(reg.add(t));
  EXPECT_EQ(reg.size(), 2U);
}

TEST(Framing, RefusesOversizeAndDeepNesting) {
  ParseLimits limits;
  limits.max_bytes = 100;
  limits.max_depth = 8;
  auto big = parseMessage(std::string(101, ' '), limits);
  ASSERT_TRUE(big.error_response.has_value());
  EXPECT_EQ((*big.error_response)["error"]["code"], -32600);
  auto deep = parseMessage(std::string(9, '[') + std::string(9, ']'), limits);
  ASSERT_TRUE(deep.error_response.has_value());
  EXPECT_EQ((*deep.error_response)["error"]["code"], -32600);
  // Brackets inside strings do not count.
  auto str = parseMessage(R"({"a":"[[[[[[[[[[[[[[[["})", limits);
  EXPECT_TRUE(str.message.has_value());
  auto bad = parseMessage("{nope", limits);
  ASSERT_TRUE(bad.error_response.has_value());
  EXPECT_EQ((*bad.error_response)["error"]["code"], -32700);
}

TEST(Framing, SerializeReplacesInvalidUtf8) {
  const Json j = {{"s", std::string("a\xff"
                                    "b")}};
  const std::string s = serialize(j);
  EXPECT_NE(s.find("a\xEF\xBF\xBD"
                   "b"),
            std::string::npos);
}

}  // namespace
}  // namespace mcpdb::protocol
