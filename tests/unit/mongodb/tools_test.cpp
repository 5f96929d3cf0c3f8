// The tool surface without a server: names, schemas, annotations, and every argument check that
// must refuse before anything is sent (bad ids, forged or foreign cursors, unknown filters).
#include <gtest/gtest.h>

#include "common/cursor.hpp"
#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/ids.hpp"
#include "engines/mongodb/config.hpp"
#include "unit/mongodb/tool_harness.hpp"

namespace mcpdb::mongodb {
namespace {

using testing::ToolHarness;

// Port 1: nothing listens; any attempt to connect would fail with Unavailable, not InvalidArgument.
const std::map<std::string, std::string, std::less<>> kEnv = {
    {"MONGODB_URI", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200"},
    {"MONGODB_DATABASE", "mcpdemo"}};

const char* kTwoTargets = R"(
mongodb:
  targets:
    a:
      collection: ca
      id_type: string
      projection: [title]
    b:
      collection: cb
      id_type: int
      projection: [title]
      vector_search:
        tool: search_b
        index: ib
        path: v
        title_field: title
        text_field: body
        filter_fields: [{path: lang, type: string}, {path: year, type: integer}]
)";

TEST(MongoTools, BuiltInSurface) {
  ToolHarness h(std::string(defaultSectionYaml()), kEnv);
  ASSERT_TRUE(h.ok());
  std::vector<std::string> names;
  for (const auto& t : h.registry().tools()) {
    names.push_back(t->name);
    EXPECT_EQ(t->engine, "mongodb");
    EXPECT_TRUE(protocol::validateSchemaSubset(t->input_schema).ok()) << t->name;
    Json d = protocol::ToolRegistry::describe(*t);
    EXPECT_EQ(d["annotations"]["readOnlyHint"], true);
    EXPECT_EQ(d["inputSchema"]["additionalProperties"], false) << t->name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_mongodb_targets", "get_mongodb_document",
                                             "list_mongodb_documents", "count_mongodb_documents",
                                             "semantic_search_mongodb"}));
  // No tool takes a filter document, a pipeline, a collection or a field name.
  for (const auto& t : h.registry().tools()) {
    for (const auto& [prop, schema] : t->input_schema["properties"].items()) {
      EXPECT_TRUE(prop == "target" || prop == "id" || prop == "limit" || prop == "cursor" ||
                  prop == "method" || prop == "query" || prop == "k" || prop == "filter")
          << t->name << "." << prop;
    }
  }
}

TEST(MongoTools, EnabledOnlyWithBothVariables) {
  auto m = makeModule();
  EXPECT_TRUE(
      m->enabled(Env::fromMap({{"MONGODB_URI", "mongodb://x"}, {"MONGODB_DATABASE", "d"}})));
  EXPECT_FALSE(m->enabled(Env::fromMap({{"MONGODB_URI", "mongodb://x"}})));
  EXPECT_FALSE(m->enabled(Env::fromMap({{"MONGODB_DATABASE", "d"}})));
  EXPECT_EQ(m->name(), "mongodb");
}

const char* kSources = R"(
mongodb:
  sources:
    main: {uri_env: MAIN_MONGODB_URI, database_env: MAIN_MONGODB_DATABASE}
    reports: {uri_env: REPORTS_MONGODB_URI, database: reports}
  targets:
    docs: {collection: documents, projection: [title], source: main}
    stats:
      collection: stats
      projection: [n]
      source: reports
      vector_search: {tool: search_stats, index: i, path: v, title_field: n, text_field: n}
)";

TEST(MongoTools, EnabledWhenSomeSourceHasItsVariables) {
  auto m = makeModule();
  config::Diagnostics diag("sources.yaml");
  const YAML::Node root = YAML::Load(kSources);
  m->configure(config::Node(root, "", diag).child("mongodb"), Limits{});
  ASSERT_TRUE(diag.ok()) << diag.errors().front();
  // `reports` names its database: its URI's variable is all it needs.
  EXPECT_TRUE(m->enabled(Env::fromMap({{"REPORTS_MONGODB_URI", "mongodb://x"}})));
  EXPECT_TRUE(m->enabled(
      Env::fromMap({{"MAIN_MONGODB_URI", "mongodb://x"}, {"MAIN_MONGODB_DATABASE", "d"}})));
  EXPECT_FALSE(m->enabled(Env::fromMap({{"MAIN_MONGODB_URI", "mongodb://x"}})));
  // The default source's variables mean nothing once sources are declared.
  EXPECT_FALSE(
      m->enabled(Env::fromMap({{"MONGODB_URI", "mongodb://x"}, {"MONGODB_DATABASE", "d"}})));
}

// The audit of a call naming no known target, made past the schema check (the handler's own
// refusal is what is tested).
protocol::CallAudit auditOfUnknownTarget(ToolHarness& h) {
  const protocol::Tool* tool = h.registry().find("get_mongodb_document");
  protocol::CallContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto r = tool->handler({{"target", "nope"}, {"id", "1"}}, ctx);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::NotFound);
  return ctx.audit;
}

// A source whose variable is unset fails its own calls, naming the source and the variable; the
// audit sink names the source even then. No URI is ever in a message.
TEST(MongoTools, AnUnsetSourceFailsItsOwnCallsClearly) {
  ToolHarness h(kSources, {{"REPORTS_MONGODB_URI",
                            "mongodb://reader:hunter2@127.0.0.1:1/"
                            "?serverSelectionTimeoutMS=200"}});
  ASSERT_TRUE(h.ok());
  auto r = h.call("count_mongodb_documents", {{"target", "docs"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_EQ(r.error().message, "mongodb source 'main': MAIN_MONGODB_URI is not set");
  EXPECT_EQ(h.lastAudit().source, "main");
  // The other source is tried (and is down): its error names it, never its URI or password.
  auto s = h.call("count_mongodb_documents", {{"target", "stats"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::Unavailable) << s.error().message;
  EXPECT_EQ(s.error().message.rfind("mongodb source 'reports' (REPORTS_MONGODB_URI): ", 0), 0u)
      << s.error().message;
  EXPECT_EQ(s.error().message.find("hunter2"), std::string::npos);
  EXPECT_EQ(s.error().message.find("mongodb://"), std::string::npos);
  EXPECT_EQ(h.lastAudit().source, "reports");
  // The search tool reads its target's source, decided when it was registered.
  auto q = h.call("search_stats", {{"query", "x"}});
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(h.lastAudit().source, "reports");
  // Before the target is known, a call with several sources has read none.
  EXPECT_EQ(auditOfUnknownTarget(h).source, "");
}

TEST(MongoTools, TheDefaultSourceIsNamedInTheAuditEvenWhenACallFailsEarly) {
  ToolHarness h(kTwoTargets, kEnv);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(auditOfUnknownTarget(h).source, "default");
  ASSERT_TRUE(h.call("list_mongodb_targets", Json::object()).ok());
  EXPECT_EQ(h.lastAudit().source, "default");
  EXPECT_FALSE(h.lastAudit().truncated);
}

TEST(MongoTools, ListTargetsNeedsNoServer) {
  ToolHarness h(kTwoTargets, kEnv);
  ASSERT_TRUE(h.ok());
  auto r = h.call("list_mongodb_targets", Json::object());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ((*r)["targets"].size(), 2u);
  EXPECT_EQ((*r)["targets"][0]["name"], "a");
  EXPECT_EQ((*r)["targets"][0]["semantic_search"], nullptr);
  EXPECT_EQ((*r)["targets"][1]["id_type"], "int");
  EXPECT_EQ((*r)["targets"][1]["semantic_search"]["tool"], "search_b");
}

TEST(MongoTools, ArgumentsAreRefusedBeforeAnythingIsSent) {
  ToolHarness h(kTwoTargets, kEnv);
  ASSERT_TRUE(h.ok());
  auto expectInvalid = [&](const std::string& tool, const Json& args, const std::string& message) {
    auto r = h.call(tool, args);
    ASSERT_FALSE(r.ok()) << tool << " " << args.dump();
    EXPECT_EQ(r.error().code, Code::InvalidArgument) << r.error().message;
    if (!message.empty()) {
      EXPECT_EQ(r.error().message, message);
    }
  };
  expectInvalid("get_mongodb_document", {{"target", "b"}, {"id", "$where"}},
                "arguments.id: must be an integer for this target");
  expectInvalid("get_mongodb_document", {{"target", "a"}, {"id", {{"$ne", nullptr}}}},
                "arguments.id: must be a string or integer");
  expectInvalid("get_mongodb_document", {{"target", "zzz"}, {"id", "x"}},
                "arguments.target: must be one of: \"a\", \"b\"");
  expectInvalid("list_mongodb_documents", {{"target", "a"}, {"cursor", "garbage"}}, "");
  expectInvalid("search_b", {{"query", "q"}, {"filter", {{"lang", {{"$ne", nullptr}}}}}},
                "arguments.filter.lang: must be a string");
  expectInvalid("search_b", {{"query", "q"}, {"filter", {{"$where", "1"}}}}, "");
  expectInvalid("search_b", {{"query", "q"}, {"k", 21}}, "arguments.k: must be at most 20");
}

// JSON Schema counts 2.0 as an integer, so the handlers do too; 2.5 is refused by the schema and,
// past it, by the handler alike (list used to truncate it to 2).
TEST(MongoTools, IntegralFloatsAreIntegersLikeTheSchema) {
  ToolHarness h(kTwoTargets, kEnv);
  ASSERT_TRUE(h.ok());
  // Accepted: the call goes on to the (absent) server.
  auto list = h.call("list_mongodb_documents", {{"target", "a"}, {"limit", 2.0}});
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().code, Code::InvalidArgument) << list.error().message;
  auto get = h.call("get_mongodb_document", {{"target", "b"}, {"id", 7.0}});
  ASSERT_FALSE(get.ok());
  EXPECT_NE(get.error().code, Code::InvalidArgument) << get.error().message;
  auto id = convertId(Json(7.0), IdType::Int);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(std::get<std::int64_t>(id->value), 7);
  EXPECT_FALSE(convertId(Json(7.5), IdType::Int).ok());
  // Past the schema, the handlers refuse what is not integral.
  for (const auto& [tool, args] : std::vector<std::pair<std::string, Json>>{
           {"list_mongodb_documents", {{"target", "a"}, {"limit", 2.5}}},
           {"search_b", {{"query", "q"}, {"k", 2.5}}}}) {
    const protocol::Tool* t = h.registry().find(tool);
    ASSERT_NE(t, nullptr) << tool;
    protocol::CallContext ctx;
    ctx.limits = t->limits;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    auto r = t->handler(args, ctx);
    ASSERT_FALSE(r.ok()) << tool;
    EXPECT_EQ(r.error().code, Code::InvalidArgument) << tool << ": " << r.error().message;
  }
}

// The signing context of target a's cursors for the harness's client (stdio).
const std::string kListA = clientCursorContext("mongodb:list_mongodb_documents:a", "stdio");

TEST(MongoTools, CursorsAreSignedAndBoundToTheirTarget) {
  ToolHarness h(kTwoTargets, kEnv);
  ASSERT_TRUE(h.ok());
  CursorCodec codec("unit-test-cursor-key");
  // {"v": "k1"} as BSON, base64url: a well-formed position for target a.
  BsonPtr pos = newDoc();
  BSON_APPEND_UTF8(pos.get(), "v", "k1");
  const std::string bytes(reinterpret_cast<const char*>(bson_get_data(pos.get())), pos->len);
  const Json payload = {{"after", base64UrlEncode(bytes)}, {"desc", false}};
  const std::string for_a = codec.encode(kListA, payload);

  // Replayed against another target: refused before any I/O.
  auto other = h.call("list_mongodb_documents", {{"target", "b"}, {"cursor", for_a}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, Code::InvalidArgument);

  // Forged: one payload character changed, or signed with another key.
  std::string forged = for_a;
  forged[3] = forged[3] == 'A' ? 'B' : 'A';
  auto f1 = h.call("list_mongodb_documents", {{"target", "a"}, {"cursor", forged}});
  ASSERT_FALSE(f1.ok());
  EXPECT_EQ(f1.error().code, Code::InvalidArgument);
  const std::string other_key = CursorCodec("another-key").encode(kListA, payload);
  auto f2 = h.call("list_mongodb_documents", {{"target", "a"}, {"cursor", other_key}});
  ASSERT_FALSE(f2.ok());
  EXPECT_EQ(f2.error().code, Code::InvalidArgument);

  // Signed but not a position: refused.
  const std::string junk =
      codec.encode(kListA, {{"after", base64UrlEncode("xx")}, {"desc", false}});
  auto f3 = h.call("list_mongodb_documents", {{"target", "a"}, {"cursor", junk}});
  ASSERT_FALSE(f3.ok());
  EXPECT_EQ(f3.error().message, "arguments.cursor: malformed cursor");

  // The genuine cursor passes verification and only then reaches the (absent) server.
  auto ok = h.call("list_mongodb_documents", {{"target", "a"}, {"cursor", for_a}});
  ASSERT_FALSE(ok.ok());
  EXPECT_EQ(ok.error().code, Code::Unavailable) << ok.error().message;
}

}  // namespace
}  // namespace mcpdb::mongodb
