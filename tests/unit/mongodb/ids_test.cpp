// Agent ids become exactly one typed BSON scalar; operator-looking strings stay plain values.
#include <gtest/gtest.h>

#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/ids.hpp"

namespace mcpdb::mongodb {
namespace {

std::string filterJson(const TypedId& id) {
  return canonicalJson(*getFilter(id));
}

TEST(MongoIds, ObjectIdFromHex) {
  auto id = convertId(Json("65a1b2c3d4e5f60718293a4b"), IdType::ObjectId);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(filterJson(*id), R"({ "_id" : { "$oid" : "65a1b2c3d4e5f60718293a4b" } })");
}

TEST(MongoIds, ObjectIdRefusesAnythingElse) {
  for (const Json& bad :
       {Json("65a1b2c3d4e5f60718293a4"), Json("65a1b2c3d4e5f60718293a4g"), Json("$where"),
        Json(R"({"$ne": null})"), Json(42), Json::object({{"$ne", nullptr}}), Json(nullptr)}) {
    auto id = convertId(bad, IdType::ObjectId);
    ASSERT_FALSE(id.ok()) << bad.dump();
    EXPECT_EQ(id.error().code, Code::InvalidArgument);
    // The message never echoes the value.
    EXPECT_EQ(id.error().message, "arguments.id: must be a 24-character hex ObjectId string");
  }
}

TEST(MongoIds, OperatorLookingStringsArePlainStringValues) {
  for (const std::string& s :
       {std::string(R"({"$ne": null})"), std::string("$where"), std::string("$gt"),
        std::string("'; db.dropDatabase(); '"), std::string("a\0b", 3)}) {
    auto id = convertId(Json(s), IdType::String);
    ASSERT_TRUE(id.ok());
    BsonPtr f = getFilter(*id);
    bson_iter_t it;
    ASSERT_TRUE(bson_iter_init_find(&it, f.get(), "_id"));
    ASSERT_TRUE(BSON_ITER_HOLDS_UTF8(&it)) << "the value must be a string, never a document";
    uint32_t len = 0;
    const char* v = bson_iter_utf8(&it, &len);
    EXPECT_EQ(std::string(v, len), s);
    EXPECT_EQ(bson_count_keys(f.get()), 1u);
  }
  auto id = convertId(Json(R"({"$ne": null})"), IdType::String);
  EXPECT_EQ(filterJson(*id), R"({ "_id" : "{\"$ne\": null}" })");
}

TEST(MongoIds, StringTargetRefusesNonStrings) {
  EXPECT_FALSE(convertId(Json(5), IdType::String).ok());
  EXPECT_FALSE(convertId(Json::object({{"$ne", nullptr}}), IdType::String).ok());
  EXPECT_FALSE(convertId(Json(std::string(2000, 'x')), IdType::String).ok());
}

TEST(MongoIds, IntTargetAcceptsIntegersAndDecimalStrings) {
  auto a = convertId(Json(42), IdType::Int);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(filterJson(*a), R"({ "_id" : { "$numberLong" : "42" } })");
  auto b = convertId(Json("-9007199254740993"), IdType::Int);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(filterJson(*b), R"({ "_id" : { "$numberLong" : "-9007199254740993" } })");
  for (const Json& bad : {Json("12abc"), Json(""), Json("$where"), Json(1.5), Json(true),
                          Json("99999999999999999999")}) {
    auto r = convertId(bad, IdType::Int);
    EXPECT_FALSE(r.ok()) << bad.dump();
  }
  EXPECT_FALSE(convertId(Json(18446744073709551615ULL), IdType::Int).ok());
}

}  // namespace
}  // namespace mcpdb::mongodb
