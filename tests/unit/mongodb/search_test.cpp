// Exact-scan scoring: cosine similarity over stored BSON arrays and the top-k order.
#include <gtest/gtest.h>

#include "engines/mongodb/search.hpp"

namespace mcpdb::mongodb {
namespace {

BsonPtr vecDoc(const std::vector<double>& v, const std::string& id = "x") {
  BsonPtr d = newDoc();
  BSON_APPEND_UTF8(d.get(), "doc_id", id.c_str());
  bson_t arr;
  BSON_APPEND_ARRAY_BEGIN(d.get(), "embedding", &arr);
  for (std::size_t i = 0; i < v.size(); ++i)
    BSON_APPEND_DOUBLE(&arr, std::to_string(i).c_str(), v[i]);
  bson_append_array_end(d.get(), &arr);
  return d;
}

std::optional<double> score(const bson_t& doc, const std::vector<float>& q) {
  bson_iter_t it;
  bson_iter_t v;
  if (!bson_iter_init(&it, &doc) || !bson_iter_find_descendant(&it, "embedding", &v))
    return std::nullopt;
  return cosineSimilarity(v, q);
}

TEST(MongoExactScore, Cosine) {
  EXPECT_NEAR(*score(*vecDoc({1, 0, 0}), {1, 0, 0}), 1.0, 1e-12);
  EXPECT_NEAR(*score(*vecDoc({0, 1, 0}), {1, 0, 0}), 0.0, 1e-12);
  EXPECT_NEAR(*score(*vecDoc({-2, 0, 0}), {1, 0, 0}), -1.0, 1e-12);
  EXPECT_NEAR(*score(*vecDoc({3, 4, 0}), {1, 0, 0}), 0.6, 1e-12);  // not normalised: still cosine
}

TEST(MongoExactScore, MalformedVectorsAreSkipped) {
  EXPECT_FALSE(score(*vecDoc({1, 0}), {1, 0, 0}));        // wrong dimension
  EXPECT_FALSE(score(*vecDoc({1, 0, 0, 0}), {1, 0, 0}));  // wrong dimension
  EXPECT_FALSE(score(*vecDoc({0, 0, 0}), {1, 0, 0}));     // zero norm
  EXPECT_FALSE(score(*vecDoc({NAN, 0, 0}), {1, 0, 0}));
  BsonPtr s = newDoc();
  BSON_APPEND_UTF8(s.get(), "embedding", "[1,0,0]");
  EXPECT_FALSE(score(*s, {1, 0, 0}));
  BsonPtr mixed = newDoc();
  bson_t arr;
  BSON_APPEND_ARRAY_BEGIN(mixed.get(), "embedding", &arr);
  BSON_APPEND_INT32(&arr, "0", 1);
  BSON_APPEND_UTF8(&arr, "1", "0");
  bson_append_array_end(mixed.get(), &arr);
  EXPECT_FALSE(score(*mixed, {1, 0}));
  BsonPtr ints = newDoc();
  BSON_APPEND_ARRAY_BEGIN(ints.get(), "embedding", &arr);
  BSON_APPEND_INT32(&arr, "0", 1);
  BSON_APPEND_INT64(&arr, "1", 1);
  bson_append_array_end(ints.get(), &arr);
  EXPECT_NEAR(*score(*ints, {1, 1}), 1.0, 1e-12);
}

TEST(MongoTopK, KeepsBestInScoreOrderWithStableTies) {
  TopK top(3);
  const std::vector<std::pair<double, std::string>> in = {{0.1, "a"}, {0.9, "b"}, {0.5, "c"},
                                                          {0.9, "d"}, {0.2, "e"}, {0.95, "f"}};
  for (const auto& [s, id] : in) top.offer(s, *vecDoc({1}, id));
  auto out = top.take();
  ASSERT_EQ(out.size(), 3u);
  std::vector<std::string> ids;
  for (auto& [s, d] : out) ids.push_back(fieldAt(*d, "doc_id").get<std::string>());
  EXPECT_EQ(ids,
            (std::vector<std::string>{"f", "b", "d"}));  // b before d: same score, scanned first
}

TEST(MongoTopK, FewerThanK) {
  TopK top(5);
  top.offer(0.3, *vecDoc({1}, "a"));
  top.offer(0.7, *vecDoc({1}, "b"));
  auto out = top.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, 0.7);
}

TEST(MongoSearchHit, ShapeFromRegistryFields) {
  VectorSearch vs;
  vs.id_field = "doc_id";
  vs.title_field = "title";
  vs.text_field = "body";
  vs.metadata_fields = {"category", "meta.lang"};
  BsonPtr d = newDoc();
  bson_oid_t oid;
  bson_oid_init_from_string(&oid, "65a1b2c3d4e5f60718293a4b");
  BSON_APPEND_OID(d.get(), "_id", &oid);
  BSON_APPEND_UTF8(d.get(), "doc_id", "doc-01");
  BSON_APPEND_UTF8(d.get(), "title", "T");
  BSON_APPEND_UTF8(d.get(), "body", "B");
  BSON_APPEND_UTF8(d.get(), "category", "databases");
  bson_t meta;
  BSON_APPEND_DOCUMENT_BEGIN(d.get(), "meta", &meta);
  BSON_APPEND_UTF8(&meta, "lang", "en");
  bson_append_document_end(d.get(), &meta);
  SearchHit h = makeHit(*d, vs, 0.5);
  EXPECT_EQ(h.id, "doc-01");
  EXPECT_EQ(h.title, "T");
  EXPECT_EQ(h.text, "B");
  EXPECT_EQ(h.metadata, (Json{{"category", "databases"}, {"meta.lang", "en"}}));
  EXPECT_EQ(h.mongo_id, (Json{{"$oid", "65a1b2c3d4e5f60718293a4b"}}));
}

}  // namespace
}  // namespace mcpdb::mongodb
