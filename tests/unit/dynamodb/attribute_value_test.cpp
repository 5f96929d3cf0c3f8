// AttributeValue <-> agent JSON: every type, both directions, lossless; malformed input refused.
#include <gtest/gtest.h>

#include "engines/dynamodb/attribute_value.hpp"

namespace mcpdb::dynamodb {
namespace {

Json agentOf(const Json& wire) {
  auto r = attributeToJson(wire);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : Json();
}

void expectRoundTrip(const Json& wire, const Json& expected_agent) {
  SCOPED_TRACE(wire.dump());
  Json agent = agentOf(wire);
  EXPECT_EQ(agent, expected_agent);
  // Through text, as an agent would receive it.
  Json reparsed = Json::parse(agent.dump());
  auto back = jsonToAttribute(reparsed);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, wire);
}

TEST(AttributeValue, ScalarsArePlainJson) {
  expectRoundTrip({{"S", "hello"}}, "hello");
  expectRoundTrip({{"S", ""}}, "");
  expectRoundTrip({{"BOOL", true}}, true);
  expectRoundTrip({{"BOOL", false}}, false);
  expectRoundTrip({{"NULL", true}}, nullptr);
}

TEST(AttributeValue, OperatorLookingStringsStayStrings) {
  expectRoundTrip({{"S", "{\"$ne\":null}"}}, "{\"$ne\":null}");
  expectRoundTrip({{"S", "a OR 1=1"}}, "a OR 1=1");
}

TEST(AttributeValue, SafeNumbersArePlainJsonNumbers) {
  expectRoundTrip({{"N", "0"}}, 0);
  expectRoundTrip({{"N", "42"}}, 42);
  expectRoundTrip({{"N", "-17"}}, -17);
  expectRoundTrip({{"N", "999999999999999"}}, 999999999999999LL);  // 15 digits
  expectRoundTrip({{"N", "1.5"}}, 1.5);
  expectRoundTrip({{"N", "-0.25"}}, -0.25);
  expectRoundTrip({{"N", "19.99"}}, 19.99);
  EXPECT_EQ(agentOf({{"N", "19.99"}}).dump(), "19.99");
}

TEST(AttributeValue, NumbersThatJsonWouldAlterAreWrappedExactly) {
  // More than 15 significant digits: a double (or a JavaScript reader) would change them.
  expectRoundTrip({{"N", "9007199254740993"}}, Json{{"$number", "9007199254740993"}});
  expectRoundTrip({{"N", "12345678901234567890123456789012345678"}},
                  Json{{"$number", "12345678901234567890123456789012345678"}});
  expectRoundTrip({{"N", "0.1234567890123456789"}}, Json{{"$number", "0.1234567890123456789"}});
  // Exponents and non-canonical forms keep their exact text.
  expectRoundTrip({{"N", "1E+125"}}, Json{{"$number", "1E+125"}});
  expectRoundTrip({{"N", "-1e-130"}}, Json{{"$number", "-1e-130"}});
  expectRoundTrip({{"N", "1.50"}}, Json{{"$number", "1.50"}});
  expectRoundTrip({{"N", "007"}}, Json{{"$number", "007"}});
  expectRoundTrip({{"N", "-0"}}, Json{{"$number", "-0"}});
  expectRoundTrip({{"N", "0.00001"}}, Json{{"$number", "0.00001"}});  // nlohmann would print 1e-05
}

TEST(AttributeValue, BinaryAndSets) {
  expectRoundTrip({{"B", "AAEC/w=="}}, Json{{"$binary", "AAEC/w=="}});
  expectRoundTrip({{"SS", {"b", "a"}}}, Json{{"$stringSet", {"b", "a"}}});
  expectRoundTrip({{"NS", {"1", "12345678901234567890123"}}},
                  Json{{"$numberSet", {"1", "12345678901234567890123"}}});
  expectRoundTrip({{"BS", {"AA==", "AQI="}}}, Json{{"$binarySet", {"AA==", "AQI="}}});
}

TEST(AttributeValue, ListsAndMapsNest) {
  Json wire = {{"M",
                {{"title", {{"S", "x"}}},
                 {"tags", {{"L", {{{"S", "a"}}, {{"N", "2"}}, {{"NULL", true}}}}}},
                 {"inner", {{"M", {{"big", {{"N", "123456789012345678"}}}}}}},
                 {"empty", {{"M", Json::object()}}},
                 {"none", {{"L", Json::array()}}}}}};
  Json agent = {{"title", "x"},
                {"tags", {"a", 2, nullptr}},
                {"inner", {{"big", {{"$number", "123456789012345678"}}}}},
                {"empty", Json::object()},
                {"none", Json::array()}};
  expectRoundTrip(wire, agent);
}

TEST(AttributeValue, MapsThatLookLikeWrappersAreEscaped) {
  expectRoundTrip({{"M", {{"$number", {{"S", "7"}}}}}}, Json{{"$map", {{"$number", "7"}}}});
  expectRoundTrip({{"M", {{"$map", {{"S", "x"}}}}}}, Json{{"$map", {{"$map", "x"}}}});
  expectRoundTrip({{"M", {{"$ne", {{"NULL", true}}}}}}, Json{{"$map", {{"$ne", nullptr}}}});
  // Two keys, or a key not starting with '$': plain.
  expectRoundTrip({{"M", {{"$a", {{"S", "1"}}}, {"$b", {{"S", "2"}}}}}},
                  Json{{"$a", "1"}, {"$b", "2"}});
}

TEST(AttributeValue, ItemsConvertAttributeByAttribute) {
  Json wire = {{"id", {{"S", "doc-01"}}}, {"n", {{"N", "3"}}}, {"$weird", {{"S", "ok"}}}};
  auto agent = itemToJson(wire);
  ASSERT_TRUE(agent.ok());
  EXPECT_EQ(*agent, (Json{{"id", "doc-01"}, {"n", 3}, {"$weird", "ok"}}));
  auto back = jsonToItem(*agent);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, wire);
}

TEST(AttributeValue, MalformedWireValuesAreRefused) {
  for (const Json& bad : std::vector<Json>{
           Json::object(), Json{{"S", 1}}, Json{{"N", "abc"}}, Json{{"N", 5}}, Json{{"N", "1e126"}},
           Json{{"N", "123456789012345678901234567890123456789"}}, Json{{"B", "not base64!"}},
           Json{{"B", "AAA"}}, Json{{"BOOL", "true"}}, Json{{"NULL", false}},
           Json{{"M", Json::array()}}, Json{{"L", Json::object()}}, Json{{"SS", {1}}},
           Json{{"NS", {"x"}}}, Json{{"BS", {"%%%%"}}}, Json{{"X", "y"}},
           Json{{"S", "a"}, {"N", "1"}}, Json("plain"), Json{{"L", {Json{{"Q", 1}}}}}}) {
    SCOPED_TRACE(bad.dump());
    auto r = attributeToJson(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Code::InvalidArgument);
    EXPECT_EQ(r.error().message.find("abc"), std::string::npos);  // never echoes values
  }
}

TEST(AttributeValue, DeepNestingIsRefusedNotRecursedForever) {
  Json wire = {{"S", "x"}};
  for (int i = 0; i < kMaxNesting + 5; ++i) wire = Json{{"L", Json::array({wire})}};
  EXPECT_FALSE(attributeToJson(wire).ok());
  Json ok = {{"S", "x"}};
  for (int i = 0; i < 32; ++i) ok = Json{{"L", Json::array({ok})}};
  EXPECT_TRUE(attributeToJson(ok).ok());
}

TEST(AttributeValue, UnknownWrappersFromAgentsAreRefused) {
  EXPECT_FALSE(jsonToAttribute(Json{{"$ne", nullptr}}).ok());
  EXPECT_FALSE(jsonToAttribute(Json{{"$number", 5}}).ok());
  EXPECT_FALSE(jsonToAttribute(Json{{"$binary", "??"}}).ok());
  EXPECT_FALSE(jsonToAttribute(Json(1e300)).ok());  // beyond DynamoDB's range
}

TEST(DynamoNumber, Syntax) {
  for (const char* ok :
       {"0", "-0", "1", "-1", "1.5", ".5", "5.", "00012", "1e5", "1E-5", "-1.2e+3",
        "12345678901234567890123456789012345678", "1.2345678901234567890123456789012345678e125",
        "1e-130", "9.9999999999999999999999999999999999999E+125", "0.000e999"}) {
    EXPECT_TRUE(isDynamoNumber(ok)) << ok;
  }
  for (const char* bad :
       {"", "-", "+1", "1e", "e5", "1.2.3", "0x10", " 1", "1 ", "NaN", "Infinity", "1e126",
        "1e-131", "10e125", "123456789012345678901234567890123456789", "1,5", "1e1234567"}) {
    EXPECT_FALSE(isDynamoNumber(bad)) << bad;
  }
}

TEST(Base64, Strict) {
  for (const char* ok : {"", "AA==", "AAA=", "AAAA", "+/+/", "aGVsbG8="})
    EXPECT_TRUE(isBase64(ok)) << ok;
  for (const char* bad : {"A", "AA", "AAA", "A===", "=AAA", "AA=A", "AA-_", "AA AA", "AAAA===="}) {
    EXPECT_FALSE(isBase64(bad)) << bad;
  }
}

}  // namespace
}  // namespace mcpdb::dynamodb
