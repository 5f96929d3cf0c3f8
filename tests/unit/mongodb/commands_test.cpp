// Exact wire shapes of what the engine sends, and proof that no builder can produce a write stage
// or server-side code. The Atlas-only shapes ($vectorSearch, createSearchIndexes) are compared as
// canonical extended JSON with golden files: tested at the wire level, they cannot run here.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "config/node.hpp"
#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/demo_loader.hpp"
#include "support/golden.hpp"

namespace mcpdb::mongodb {
namespace {

namespace fs = std::filesystem;
const fs::path kGolden = fs::path(MCPDB_SOURCE_DIR) / "tests/unit/mongodb/golden";

std::string pretty(const bson_t& doc) {
  return nlohmann::ordered_json::parse(canonicalJson(doc)).dump(2) + "\n";
}

void expectGolden(const std::string& name, const bson_t& doc) {
  testsupport::expectMatchesGolden(pretty(doc), kGolden / name);
}

Target demo() {
  auto t = demo_detail::demoTarget();
  EXPECT_TRUE(t.ok());
  return *t;
}

const std::vector<float> kQuery = {0.25f, -0.5f, 1.0f};

TEST(MongoWireShape, VectorSearchPipelineWithFilters) {
  Target t = demo();
  std::vector<FilterValue> filters = {{"category", std::string("databases")},
                                      {"tags", std::string("sql")}};
  BsonPtr p = vectorSearchPipeline(*t.vector_search, kQuery, 5, filters);
  expectGolden("vector_search_pipeline.json", *p);
}

TEST(MongoWireShape, VectorSearchPipelineOneFilterAndNone) {
  Target t = demo();
  BsonPtr one =
      vectorSearchPipeline(*t.vector_search, kQuery, 3, {{"category", std::string("$where")}});
  expectGolden("vector_search_pipeline_one_filter.json", *one);
  BsonPtr none = vectorSearchPipeline(*t.vector_search, kQuery, 20, {});
  expectGolden("vector_search_pipeline_no_filter.json", *none);
}

TEST(MongoWireShape, CreateSearchIndexesCommand) {
  Target t = demo();
  BsonPtr cmd = demo_detail::createSearchIndexesCommand(t, 512);
  expectGolden("create_search_indexes.json", *cmd);
}

TEST(MongoWireShape, ExactScanAndListAndGet) {
  Target t = demo();
  ReadOptions ro{1234, "local"};
  expectGolden("exact_scan_options.json", *exactScanOptions(*t.vector_search, 10001, ro));
  expectGolden("list_options.json", *listOptions(t, 21, ro));
  expectGolden("get_options.json", *getOptions(t, ro));
  expectGolden("count_options.json", *countOptions(100001, ro));
}

TEST(MongoWireShape, NumCandidatesPolicy) {
  VectorSearch vs;
  vs.num_candidates_multiplier = 10;
  vs.num_candidates_max = 150;
  EXPECT_EQ(numCandidates(vs, 1), 10u);
  EXPECT_EQ(numCandidates(vs, 5), 50u);
  EXPECT_EQ(numCandidates(vs, 20), 150u);  // capped
  vs.num_candidates_max = 10;
  EXPECT_EQ(numCandidates(vs, 20), 20u);  // never below k
  vs.num_candidates_multiplier = 1;
  vs.num_candidates_max = 1000;
  EXPECT_EQ(numCandidates(vs, 7), 7u);
}

// Walks every key of a document: collects all keys and all pipeline stage names.
void walkKeys(bson_iter_t& i, std::set<std::string>& keys) {
  while (bson_iter_next(&i)) {
    keys.insert(bson_iter_key(&i));
    if (BSON_ITER_HOLDS_DOCUMENT(&i) || BSON_ITER_HOLDS_ARRAY(&i)) {
      bson_iter_t c;
      ASSERT_TRUE(bson_iter_recurse(&i, &c));
      walkKeys(c, keys);
    }
  }
}

void collectKeys(const bson_t& doc, std::set<std::string>& keys) {
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init(&it, &doc));
  walkKeys(it, keys);
}

TEST(MongoReadOnly, EveryBuiltDocumentIsFreeOfWriteStagesAndServerCode) {
  Target t = demo();
  ReadOptions ro{1000, "majority"};
  // Hostile-looking agent values go in wherever agent values can go.
  std::vector<FilterValue> filters = {{"category", std::string("$merge")},
                                      {"tags", std::string("{\"$out\": \"x\"}")}};
  bson_oid_t oid;
  bson_oid_init(&oid, nullptr);
  BsonPtr after = newDoc();
  BSON_APPEND_UTF8(after.get(), "v", "$where");
  bson_iter_t after_it;
  ASSERT_TRUE(bson_iter_init_find(&after_it, after.get(), "v"));

  std::vector<std::pair<std::string, BsonPtr>> built;
  built.emplace_back("getFilter(oid)", getFilter(TypedId{oid}));
  built.emplace_back("getFilter(string)", getFilter(TypedId{std::string("$where")}));
  built.emplace_back("getFilter(int)", getFilter(TypedId{std::int64_t{7}}));
  built.emplace_back("getOptions", getOptions(t, ro));
  built.emplace_back("listFilter(first)", listFilter(nullptr, false));
  built.emplace_back("listFilter(after)", listFilter(&after_it, false));
  built.emplace_back("listFilter(after,desc)", listFilter(&after_it, true));
  built.emplace_back("listOptions", listOptions(t, 10, ro));
  built.emplace_back("countFilter", countFilter());
  built.emplace_back("countOptions", countOptions(11, ro));
  built.emplace_back("estimatedCountOptions", estimatedCountOptions(ro));
  built.emplace_back("vectorSearchPipeline",
                     vectorSearchPipeline(*t.vector_search, kQuery, 5, filters));
  built.emplace_back("aggregateOptions", aggregateOptions(ro));
  built.emplace_back("equalityFilter", equalityFilter(filters));
  built.emplace_back("exactScanOptions", exactScanOptions(*t.vector_search, 100, ro));
  built.emplace_back("connectionStatusCommand", connectionStatusCommand());
  built.emplace_back("listCollectionCommand", listCollectionCommand("documents"));

  const std::set<std::string> forbidden = {"$out",
                                           "$merge",
                                           "$where",
                                           "$function",
                                           "$accumulator",
                                           "insert",
                                           "update",
                                           "delete",
                                           "findAndModify",
                                           "createIndexes",
                                           "drop",
                                           "dropDatabase",
                                           "createSearchIndexes",
                                           "$set",
                                           "$unset",
                                           "$expr",
                                           "$eval"};
  for (const auto& [name, doc] : built) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(checkNoForbiddenOperators(*doc).ok());
    std::set<std::string> keys;
    collectKeys(*doc, keys);
    for (const auto& f : forbidden) EXPECT_EQ(keys.count(f), 0u) << "key " << f;
  }
  // The pipeline has exactly the two registry-built stages.
  const BsonPtr& pipeline = built[11].second;
  bson_iter_t it;
  bson_iter_t stages;
  ASSERT_TRUE(bson_iter_init_find(&it, pipeline.get(), "pipeline"));
  ASSERT_TRUE(bson_iter_recurse(&it, &stages));
  std::vector<std::string> names;
  while (bson_iter_next(&stages)) {
    bson_iter_t s;
    ASSERT_TRUE(bson_iter_recurse(&stages, &s));
    ASSERT_TRUE(bson_iter_next(&s));
    names.emplace_back(bson_iter_key(&s));
    EXPECT_FALSE(bson_iter_next(&s)) << "one operator per stage";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"$vectorSearch", "$project"}));
}

TEST(MongoReadOnly, TheSendGuardRefusesForbiddenOperatorsAtAnyDepth) {
  for (const char* op : {"$out", "$merge", "$where", "$function", "$accumulator"}) {
    BsonPtr doc = newDoc();
    bson_t arr;
    bson_t stage;
    bson_t inner;
    BSON_APPEND_ARRAY_BEGIN(doc.get(), "pipeline", &arr);
    BSON_APPEND_DOCUMENT_BEGIN(&arr, "0", &stage);
    BSON_APPEND_DOCUMENT_BEGIN(&stage, "$facet", &inner);
    BSON_APPEND_UTF8(&inner, op, "x");
    bson_append_document_end(&stage, &inner);
    bson_append_document_end(&arr, &stage);
    bson_append_array_end(doc.get(), &arr);
    auto st = checkNoForbiddenOperators(*doc);
    ASSERT_FALSE(st.ok()) << op;
    EXPECT_EQ(st.error().code, Code::PermissionDenied);
    EXPECT_EQ(st.error().message, std::string("refused to send a command containing ") + op);
  }
  // As a value, an operator name is just a string.
  BsonPtr value = newDoc();
  BSON_APPEND_UTF8(value.get(), "_id", "$where");
  EXPECT_TRUE(checkNoForbiddenOperators(*value).ok());
}

TEST(MongoCommands, ListCollectionCommandNamesOneCollectionAsAValue) {
  // doctor's existence check: the collection name is a filter value, never a key or an operator.
  EXPECT_EQ(canonicalJson(*listCollectionCommand("a\"b $where")),
            R"({ "listCollections" : { "$numberInt" : "1" }, "nameOnly" : true, "filter" : { )"
            R"("name" : "a\"b $where" } })");
}

}  // namespace
}  // namespace mcpdb::mongodb
