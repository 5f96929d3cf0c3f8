// BSON -> JSON: every BSON type, the edge cases that must not lose information, and hostile bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engines/mongodb/bson_json.hpp"
#include "engines/mongodb/commands.hpp"

namespace mcpdb::mongodb {
namespace {

template <class F>
Json one(F append) {
  BsonPtr doc = newDoc();
  append(doc.get());
  return bsonToJson(*doc)["v"];
}

TEST(MongoBsonJson, Scalars) {
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_DOUBLE(d, "v", 1.5); }), Json(1.5));
  EXPECT_TRUE(one([](bson_t* d) { BSON_APPEND_DOUBLE(d, "v", 2.0); }).is_number_float());
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_DOUBLE(d, "v", NAN); }),
            (Json{{"$numberDouble", "NaN"}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_DOUBLE(d, "v", INFINITY); }),
            (Json{{"$numberDouble", "Infinity"}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_DOUBLE(d, "v", -INFINITY); }),
            (Json{{"$numberDouble", "-Infinity"}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_UTF8(d, "v", "héllo"); }), Json("héllo"));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_BOOL(d, "v", true); }), Json(true));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_NULL(d, "v"); }), Json(nullptr));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_INT32(d, "v", -7); }), Json(-7));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_UNDEFINED(d, "v"); }), (Json{{"$undefined", true}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_MINKEY(d, "v"); }), (Json{{"$minKey", 1}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_MAXKEY(d, "v"); }), (Json{{"$maxKey", 1}}));
}

TEST(MongoBsonJson, StringWithNulIsKept) {
  Json v = one([](bson_t* d) { bson_append_utf8(d, "v", 1, "a\0b", 3); });
  EXPECT_EQ(v.get<std::string>(), std::string("a\0b", 3));
}

TEST(MongoBsonJson, Int64IsExactBeyond2To53) {
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_INT64(d, "v", 9007199254740992LL); }),
            Json(9007199254740992LL));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_INT64(d, "v", 9007199254740993LL); }),
            (Json{{"$numberLong", "9007199254740993"}}));
  EXPECT_EQ(
      one([](bson_t* d) { BSON_APPEND_INT64(d, "v", std::numeric_limits<std::int64_t>::min()); }),
      (Json{{"$numberLong", "-9223372036854775808"}}));
}

TEST(MongoBsonJson, ObjectIdDateDecimal) {
  bson_oid_t oid;
  bson_oid_init_from_string(&oid, "65a1b2c3d4e5f60718293a4b");
  EXPECT_EQ(one([&](bson_t* d) { BSON_APPEND_OID(d, "v", &oid); }),
            (Json{{"$oid", "65a1b2c3d4e5f60718293a4b"}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_DATE_TIME(d, "v", 1705276800123LL); }),
            (Json{{"$date", "2024-01-15T00:00:00.123Z"}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_DATE_TIME(d, "v", -1); }),
            (Json{{"$date", "1969-12-31T23:59:59.999Z"}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_DATE_TIME(d, "v", 253402300800000LL); }),
            (Json{{"$date", {{"$numberLong", "253402300800000"}}}}));
  EXPECT_EQ(one([](bson_t* d) {
              BSON_APPEND_DATE_TIME(d, "v", std::numeric_limits<std::int64_t>::min());
            }),
            (Json{{"$date", {{"$numberLong", "-9223372036854775808"}}}}));
  bson_decimal128_t dec;
  ASSERT_TRUE(bson_decimal128_from_string("12345678901234567890.123456789", &dec));
  EXPECT_EQ(one([&](bson_t* d) { BSON_APPEND_DECIMAL128(d, "v", &dec); }),
            (Json{{"$numberDecimal", "12345678901234567890.123456789"}}));
}

TEST(MongoBsonJson, BinaryAndUuid) {
  const uint8_t bytes[] = {0x00, 0xff, 0x10, 0x41};
  EXPECT_EQ(
      one([&](bson_t* d) { BSON_APPEND_BINARY(d, "v", BSON_SUBTYPE_BINARY, bytes, sizeof bytes); }),
      (Json{{"$binary", {{"base64", "AP8QQQ=="}, {"subType", "00"}}}}));
  EXPECT_EQ(
      one([&](bson_t* d) { BSON_APPEND_BINARY(d, "v", BSON_SUBTYPE_USER, bytes, sizeof bytes); }),
      (Json{{"$binary", {{"base64", "AP8QQQ=="}, {"subType", "80"}}}}));
  EXPECT_EQ(one([&](bson_t* d) { BSON_APPEND_BINARY(d, "v", BSON_SUBTYPE_BINARY, bytes, 0); }),
            (Json{{"$binary", {{"base64", ""}, {"subType", "00"}}}}));
  const uint8_t uuid[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0};
  EXPECT_EQ(one([&](bson_t* d) { BSON_APPEND_BINARY(d, "v", BSON_SUBTYPE_UUID, uuid, 16); }),
            (Json{{"$uuid", "12345678-9abc-def0-1234-56789abcdef0"}}));
}

TEST(MongoBsonJson, RegexTimestampCodeSymbolDbPointer) {
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_REGEX(d, "v", "^a.*b$", "im"); }),
            (Json{{"$regularExpression", {{"pattern", "^a.*b$"}, {"options", "im"}}}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_TIMESTAMP(d, "v", 1700000000, 7); }),
            (Json{{"$timestamp", {{"t", 1700000000}, {"i", 7}}}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_CODE(d, "v", "function(){return 1}"); }),
            (Json{{"$code", "function(){return 1}"}}));
  EXPECT_EQ(one([](bson_t* d) { BSON_APPEND_SYMBOL(d, "v", "sym"); }), (Json{{"$symbol", "sym"}}));
  BsonPtr scope = newDoc();
  BSON_APPEND_INT32(scope.get(), "x", 1);
  EXPECT_EQ(one([&](bson_t* d) { BSON_APPEND_CODE_WITH_SCOPE(d, "v", "return x", scope.get()); }),
            (Json{{"$code", "return x"}, {"$scope", {{"x", 1}}}}));
  bson_oid_t oid;
  bson_oid_init_from_string(&oid, "65a1b2c3d4e5f60718293a4b");
  EXPECT_EQ(
      one([&](bson_t* d) { BSON_APPEND_DBPOINTER(d, "v", "coll", &oid); }),
      (Json{{"$dbPointer", {{"$ref", "coll"}, {"$id", {{"$oid", "65a1b2c3d4e5f60718293a4b"}}}}}}));
}

TEST(MongoBsonJson, NestedDocumentsAndArrays) {
  BsonPtr doc = newDoc();
  bson_t sub;
  bson_t arr;
  BSON_APPEND_DOCUMENT_BEGIN(doc.get(), "meta", &sub);
  BSON_APPEND_UTF8(&sub, "lang", "en");
  BSON_APPEND_ARRAY_BEGIN(&sub, "tags", &arr);
  BSON_APPEND_UTF8(&arr, "0", "sql");
  BSON_APPEND_INT32(&arr, "1", 2);
  bson_append_array_end(&sub, &arr);
  bson_append_document_end(doc.get(), &sub);
  EXPECT_EQ(bsonToJson(*doc), (Json{{"meta", {{"lang", "en"}, {"tags", {"sql", 2}}}}}));
}

TEST(MongoBsonJson, DollarKeyedDocumentsAreWrappedNotMistakenForTypes) {
  // A stored document that looks like an ObjectId must not read as one.
  BsonPtr doc = newDoc();
  bson_t sub;
  BSON_APPEND_DOCUMENT_BEGIN(doc.get(), "v", &sub);
  BSON_APPEND_UTF8(&sub, "$oid", "65a1b2c3d4e5f60718293a4b");
  bson_append_document_end(doc.get(), &sub);
  EXPECT_EQ(bsonToJson(*doc)["v"], (Json{{"$document", {{"$oid", "65a1b2c3d4e5f60718293a4b"}}}}));
}

TEST(MongoBsonJson, DuplicateKeysKeepEveryValue) {
  BsonPtr doc = newDoc();
  BSON_APPEND_INT32(doc.get(), "a", 1);
  BSON_APPEND_INT32(doc.get(), "a", 2);
  BSON_APPEND_INT32(doc.get(), "a", 3);
  EXPECT_EQ(bsonToJson(*doc), (Json{{"a", 1}, {"a (2)", 2}, {"a (3)", 3}}));
}

TEST(MongoBsonJson, InvalidUtf8IsTaggedNotReplaced) {
  BsonPtr doc = newDoc();
  bson_append_utf8(doc.get(), "v", 1, "\xff\xfe", 2);
  EXPECT_EQ(bsonToJson(*doc)["v"], (Json{{"$invalidUtf8", "//4="}}));
  // The result can always be serialised.
  EXPECT_NO_THROW((void)bsonToJson(*doc).dump());
}

TEST(MongoBsonJson, DeepNestingIsCut) {
  BsonPtr inner = newDoc();
  BSON_APPEND_INT32(inner.get(), "x", 1);
  for (int i = 0; i < 150; ++i) {
    BsonPtr outer = newDoc();
    BSON_APPEND_DOCUMENT(outer.get(), "d", inner.get());
    inner = std::move(outer);
  }
  Json j = bsonToJson(*inner);
  int depth = 0;
  const Json* p = &j;
  while (p->is_object() && p->contains("d")) {
    p = &(*p)["d"];
    ++depth;
  }
  EXPECT_EQ(depth, kMaxDepth + 1);  // kMaxDepth nested levels kept, then the marker
  EXPECT_TRUE(p->contains("$truncated"));
}

TEST(MongoBsonJson, UntrustedBytes) {
  EXPECT_FALSE(bsonBytesToJson(nullptr, 0).ok());
  const uint8_t short_doc[] = {5, 0, 0};
  EXPECT_FALSE(bsonBytesToJson(short_doc, sizeof short_doc).ok());
  const uint8_t bad_len[] = {50, 0, 0, 0, 0};
  EXPECT_FALSE(bsonBytesToJson(bad_len, sizeof bad_len).ok());
  const uint8_t empty[] = {5, 0, 0, 0, 0};
  auto r = bsonBytesToJson(empty, sizeof empty);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, Json::object());
}

TEST(MongoBsonJson, IsoDates) {
  EXPECT_EQ(isoDateFromMillis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(isoDateFromMillis(-62167219200000LL), "0000-01-01T00:00:00.000Z");
  EXPECT_EQ(isoDateFromMillis(253402300799999LL), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(isoDateFromMillis(-62167219200001LL), "");
  EXPECT_EQ(isoDateFromMillis(951782400000LL), "2000-02-29T00:00:00.000Z");
}

}  // namespace
}  // namespace mcpdb::mongodb
