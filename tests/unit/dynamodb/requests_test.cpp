// Request bodies, exactly as sent; typed keys; key type confusion refused.
#include <gtest/gtest.h>

#include "engines/dynamodb/requests.hpp"
#include "engines/dynamodb/doctor.hpp"

namespace mcpdb::dynamodb {
namespace {

Target simpleTarget() {
  Target t;
  t.name = "docs";
  t.table = "mcp_demo_documents";
  t.partition_key = {"id", KeyType::S};
  t.attributes = {"id", "title", "body"};
  return t;
}

Target compositeTarget() {
  Target t;
  t.name = "events";
  t.table = "mcp_demo_events";
  t.partition_key = {"category", KeyType::S};
  t.sort_key = KeyAttribute{"seq", KeyType::N};
  return t;
}

Target binaryTarget() {
  Target t;
  t.name = "blobs";
  t.table = "blobs";
  t.partition_key = {"digest", KeyType::B};
  return t;
}

TEST(DynamoRequests, OnlyReadOperationNames) {
  EXPECT_EQ(readOpName(ReadOp::GetItem), "GetItem");
  EXPECT_EQ(readOpName(ReadOp::Scan), "Scan");
  EXPECT_EQ(readOpName(ReadOp::DescribeTable), "DescribeTable");
}

TEST(DynamoRequests, GetItemWithProjectionPlaceholders) {
  auto key = buildKey(simpleTarget(), "doc-01", nullptr);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(
      getItemRequest(simpleTarget(), *key, true).dump(),
      R"({"ConsistentRead":true,"ExpressionAttributeNames":{"#a0":"id","#a1":"title","#a2":"body"},)"
      R"("Key":{"id":{"S":"doc-01"}},"ProjectionExpression":"#a0, #a1, #a2","TableName":"mcp_demo_documents"})");
}

TEST(DynamoRequests, GetItemCompositeKeyWithoutProjection) {
  Json sk = "42";
  auto key = buildKey(compositeTarget(), "databases", &sk);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(
      getItemRequest(compositeTarget(), *key, false).dump(),
      R"({"ConsistentRead":false,"Key":{"category":{"S":"databases"},"seq":{"N":"42"}},"TableName":"mcp_demo_events"})");
}

TEST(DynamoRequests, Scan) {
  EXPECT_EQ(scanRequest(compositeTarget(), 25, std::nullopt).dump(),
            R"({"Limit":25,"TableName":"mcp_demo_events"})");
  Json start = {{"category", {{"S", "x"}}}, {"seq", {{"N", "7"}}}};
  EXPECT_EQ(scanRequest(simpleTarget(), 3, start).dump(),
            R"({"ExclusiveStartKey":{"category":{"S":"x"},"seq":{"N":"7"}},)"
            R"("ExpressionAttributeNames":{"#a0":"id","#a1":"title","#a2":"body"},"Limit":3,)"
            R"("ProjectionExpression":"#a0, #a1, #a2","TableName":"mcp_demo_documents"})");
}

TEST(DynamoRequests, CountScanAndDescribeTable) {
  EXPECT_EQ(countScanRequest(simpleTarget(), 1000, std::nullopt).dump(),
            R"({"Limit":1000,"Select":"COUNT","TableName":"mcp_demo_documents"})");
  EXPECT_EQ(describeTableRequest(simpleTarget()).dump(), R"({"TableName":"mcp_demo_documents"})");
}

TEST(DynamoRequests, DeniedWriteProbeCanNeverMatch) {
  EXPECT_EQ(deniedWriteProbeOperation(), "UpdateItem");
  EXPECT_EQ(
      deniedWriteProbeRequest(compositeTarget()).dump(),
      R"j({"ConditionExpression":"attribute_not_exists(#pk) AND attribute_exists(#pk)",)j"
      R"j("ExpressionAttributeNames":{"#pk":"category","#probe":"mcpdb_self_check_probe"},)j"
      R"j("ExpressionAttributeValues":{":probe":{"BOOL":true}},)j"
      R"j("Key":{"category":{"S":"mcpdb-self-check-probe"},"seq":{"N":"-9.87654321E-120"}},)j"
      R"j("ReturnValues":"NONE","TableName":"mcp_demo_events","UpdateExpression":"SET #probe = :probe"})j");
}

TEST(DynamoRequests, OperatorLookingValuesAreJustKeyValues) {
  for (const char* v : {R"({"$ne":null})", "a OR 1=1", "' OR '1'='1", "#a0", ":v"}) {
    auto key = buildKey(simpleTarget(), v, nullptr);
    ASSERT_TRUE(key.ok());
    EXPECT_EQ(*key, (Json{{"id", {{"S", v}}}}));
  }
  // An object is not a key value at all.
  auto obj = buildKey(simpleTarget(), Json{{"$ne", nullptr}}, nullptr);
  ASSERT_FALSE(obj.ok());
  EXPECT_EQ(obj.error().code, Code::InvalidArgument);
}

TEST(DynamoRequests, NumberKeys) {
  Target t = compositeTarget();
  for (const Json& ok :
       std::vector<Json>{"42", "-1.5", "1e10", "12345678901234567890123456789012345678", 42, -7}) {
    Json sk = ok;
    auto key = buildKey(t, "c", &sk);
    ASSERT_TRUE(key.ok()) << ok.dump();
    EXPECT_EQ((*key)["seq"]["N"], ok.is_string() ? ok.get<std::string>() : ok.dump());
  }
}

// The schema types number keys as integer: 42.0 is one (JSON Schema), and becomes "42"; 1.5 is not
// an integer and is not a digit string either.
TEST(DynamoRequests, NumberKeysAcceptIntegralFloats) {
  Target t = compositeTarget();
  Json sk = 42.0;
  auto key = buildKey(t, "c", &sk);
  ASSERT_TRUE(key.ok()) << key.error().message;
  EXPECT_EQ((*key)["seq"]["N"], "42");
  Json frac = 1.5;
  EXPECT_FALSE(buildKey(t, "c", &frac).ok());
}

TEST(DynamoRequests, KeyTypeConfusionRefused) {
  struct Case {
    Target target;
    Json pk;
    std::optional<Json> sk;
    std::string message;
  };
  const std::vector<Case> cases = {
      {simpleTarget(), 5, std::nullopt,
       "arguments.partition_key: target 'docs' has a string (S) partition key 'id': pass the value "
       "as a JSON string"},
      {simpleTarget(), true, std::nullopt,
       "arguments.partition_key: target 'docs' has a string (S) partition key 'id': pass the value "
       "as a JSON string"},
      {simpleTarget(), "", std::nullopt,
       "arguments.partition_key: target 'docs' has a string (S) partition key 'id': the value must "
       "be 1 to 2048 bytes"},
      {compositeTarget(), "c", Json("abc"),
       "arguments.sort_key: target 'events' has a number (N) sort key 'seq': the value is not a "
       "DynamoDB number "
       "(digits, optional '-', '.', exponent; at most 38 significant digits)"},
      {compositeTarget(), "c", Json(1.5),
       "arguments.sort_key: target 'events' has a number (N) sort key 'seq': pass the number as a "
       "string of digits, "
       "e.g. \"42\" or \"-1.5\""},
      {compositeTarget(), "c", Json("1 OR 1=1"),
       "arguments.sort_key: target 'events' has a number (N) sort key 'seq': the value is not a "
       "DynamoDB number "
       "(digits, optional '-', '.', exponent; at most 38 significant digits)"},
      {compositeTarget(), "c", std::nullopt,
       "arguments.sort_key: target 'events' has a composite key: sort_key ('seq') is required"},
      {simpleTarget(), "x", Json("y"),
       "arguments.sort_key: target 'docs' has no sort key; omit sort_key"},
      {binaryTarget(), "not base64", std::nullopt,
       "arguments.partition_key: target 'blobs' has binary (B) partition key 'digest': pass the "
       "bytes as non-empty "
       "standard base64"},
      {binaryTarget(), 12, std::nullopt,
       "arguments.partition_key: target 'blobs' has binary (B) partition key 'digest': pass the "
       "bytes as non-empty "
       "standard base64"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    auto key = buildKey(c.target, c.pk, c.sk ? &*c.sk : nullptr);
    ASSERT_FALSE(key.ok());
    EXPECT_EQ(key.error().code, Code::InvalidArgument);
    EXPECT_EQ(key.error().message, c.message);
  }
  auto ok = buildKey(binaryTarget(), "AAEC", nullptr);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (Json{{"digest", {{"B", "AAEC"}}}}));
}

TEST(DynamoRequests, CursorKeysAreCheckedAgainstTheKeySchema) {
  Target t = compositeTarget();
  EXPECT_TRUE(validateWireKey(t, {{"category", {{"S", "x"}}}, {"seq", {{"N", "1"}}}}).ok());
  EXPECT_FALSE(validateWireKey(t, {{"category", {{"S", "x"}}}}).ok());
  EXPECT_FALSE(validateWireKey(t, {{"category", {{"S", "x"}}}, {"seq", {{"S", "1"}}}}).ok());
  EXPECT_FALSE(validateWireKey(t, {{"category", {{"S", "x"}}}, {"other", {{"N", "1"}}}}).ok());
  EXPECT_FALSE(
      validateWireKey(t, {{"category", {{"S", "x"}}}, {"seq", {{"N", "1"}}}, {"x", {{"S", "1"}}}})
          .ok());
  EXPECT_FALSE(validateWireKey(t, Json::array()).ok());
}

TEST(DynamoRequests, KeyOfItem) {
  Target t = compositeTarget();
  auto k =
      keyOfItem(t, {{"category", {{"S", "x"}}}, {"seq", {{"N", "1"}}}, {"body", {{"S", "b"}}}});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, (Json{{"category", {{"S", "x"}}}, {"seq", {{"N", "1"}}}}));
  EXPECT_FALSE(keyOfItem(t, {{"category", {{"S", "x"}}}}).ok());
}

}  // namespace
}  // namespace mcpdb::dynamodb
