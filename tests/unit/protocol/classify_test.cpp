// protocol::classify: the one reading of a message that the HTTP transport asks and the session
// reuses. Each property is checked over several shapes, including the ones a transport must not
// misread (a response, a notification, an unusable id, a batch, a modern header on a bare body).

#include <gtest/gtest.h>

#include "protocol/classify.hpp"
#include "protocol/session.hpp"

namespace mcpdb::protocol {
namespace {

Json modernMeta(std::string version = "2026-07-28") {
  return Json{{std::string(meta_key::kProtocolVersion), version},
              {std::string(meta_key::kClientCapabilities), Json::object()}};
}

TEST(Classify, EraFromTheMetadataOrTheTransportVersion) {
  const Json legacy = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}};
  EXPECT_EQ(classify(legacy).era, Era::Legacy);
  EXPECT_FALSE(classify(legacy).meta.has_value());
  EXPECT_EQ(classify(legacy, "2025-11-25").era, Era::Legacy);
  EXPECT_EQ(classify(legacy, "2026-07-28").era, Era::Modern);  // the header alone places it
  const Json modern = {{"jsonrpc", "2.0"},
                       {"id", 1},
                       {"method", "tools/list"},
                       {"params", {{"_meta", modernMeta()}}}};
  EXPECT_EQ(classify(modern).era, Era::Modern);
  // A batch is placed by the transport's version only.
  EXPECT_EQ(classify(Json::array({modern})).era, Era::Legacy);
  EXPECT_TRUE(classify(Json::array({modern})).batch);
  EXPECT_EQ(classify(Json::array({modern}), "2026-07-28").era, Era::Modern);
  // _meta without any per-request field (a progress token only) stays legacy.
  const Json progress_only = {{"jsonrpc", "2.0"},
                              {"id", 1},
                              {"method", "tools/call"},
                              {"params", {{"_meta", {{"progressToken", 1}}}}}};
  EXPECT_EQ(classify(progress_only).era, Era::Legacy);
}

TEST(Classify, ModernMetadataCheckedOnceWithItsVerdict) {
  auto request = [](Json meta, std::string method = "tools/list") {
    return Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", {{"_meta", meta}}}};
  };
  const Classified ok = classify(request(modernMeta()));
  ASSERT_TRUE(ok.meta.has_value());
  ASSERT_TRUE(std::holds_alternative<ModernMeta>(*ok.meta));
  EXPECT_EQ(std::get<ModernMeta>(*ok.meta).version, "2026-07-28");
  EXPECT_TRUE(ok.known_method);
  Json no_caps = modernMeta();
  no_caps.erase(std::string(meta_key::kClientCapabilities));
  const Classified missing = classify(request(no_caps));
  ASSERT_TRUE(std::holds_alternative<MetaError>(*missing.meta));
  EXPECT_EQ(std::get<MetaError>(*missing.meta).code, rpc::kInvalidParams);
  const Classified old = classify(request(modernMeta("2025-11-25")));
  EXPECT_EQ(std::get<MetaError>(*old.meta).code, rpc::kUnsupportedProtocolVersion);
  EXPECT_FALSE(classify(request(modernMeta(), "initialize")).known_method);
  EXPECT_FALSE(classify(request(modernMeta(), "ping")).known_method);
  // A modern header on a body without metadata: the metadata is refused, not skipped.
  const Classified bare =
      classify(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}}, "2026-07-28");
  ASSERT_TRUE(bare.meta.has_value());
  EXPECT_EQ(std::get<MetaError>(*bare.meta).code, rpc::kInvalidParams);
}

TEST(Classify, IdMethodAndAnswer) {
  EXPECT_EQ(classify(Json{{"jsonrpc", "2.0"}, {"id", "a"}, {"method", "ping"}}).id, "a");
  EXPECT_EQ(classify(Json{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "ping"}}).id, 7);
  for (const Json& bad_id : {Json(1.5), Json(nullptr), Json::object(), Json(true)}) {
    const Classified c = classify(Json{{"jsonrpc", "2.0"}, {"id", bad_id}, {"method", "ping"}});
    EXPECT_TRUE(c.id.is_null()) << bad_id;
    EXPECT_TRUE(c.answered) << bad_id;  // answered with id null
  }
  const Classified notification = classify(Json{{"jsonrpc", "2.0"}, {"method", "x"}});
  EXPECT_FALSE(notification.answered);
  EXPECT_EQ(notification.method, "x");
  const Classified response = classify(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", {}}});
  EXPECT_FALSE(response.answered);
  EXPECT_FALSE(response.method.has_value());
  EXPECT_FALSE(classify(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", 3}}).method.has_value());
  EXPECT_TRUE(classify(Json(5)).answered);  // no object: one error
  EXPECT_TRUE(classify(Json{{"jsonrpc", "2.0"}, {"method", "initialize"}}).initialize);
}

TEST(Classify, ToolCallsNamesAndProgress) {
  auto call = [](Json params, Json id = 1) {
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}};
  };
  const Classified named =
      classify(call(Json{{"name", "pg_lookup"}, {"_meta", {{"progressToken", "t"}}}}));
  EXPECT_TRUE(named.tool_call);
  EXPECT_EQ(named.name, "pg_lookup");
  EXPECT_TRUE(named.wants_progress);
  // Any progress token asks for a stream (the session ignores unusable ones).
  EXPECT_TRUE(classify(call(Json{{"name", "x"}, {"_meta", {{"progressToken", Json::object()}}}}))
                  .wants_progress);
  EXPECT_FALSE(classify(call(Json{{"name", "x"}})).wants_progress);
  EXPECT_FALSE(classify(call(Json{{"name", 5}})).name.has_value());
  EXPECT_FALSE(classify(call(Json{{"name", "x"}}, 1.5)).tool_call);  // no usable id
  EXPECT_EQ(isToolCall(call(Json{{"name", "x"}}, 1.5)), false);
  const Classified read =
      classify(Json{{"jsonrpc", "2.0"},
                    {"id", 1},
                    {"method", "resources/read"},
                    {"params", {{"uri", "mcpdb://a/b"}, {"name", "not this"}}}});
  EXPECT_EQ(read.name, "mcpdb://a/b");
  EXPECT_FALSE(read.tool_call);
  EXPECT_FALSE(classify(Json{{"jsonrpc", "2.0"},
                             {"id", 1},
                             {"method", "tools/list"},
                             {"params", {{"name", "x"}}}})
                   .name.has_value());
  EXPECT_TRUE(classify(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "subscriptions/listen"}})
                  .subscription);
}

TEST(Classify, NameMemberPerMethod) {
  EXPECT_STREQ(nameMember("tools/call"), "name");
  EXPECT_STREQ(nameMember("prompts/get"), "name");
  EXPECT_STREQ(nameMember("resources/read"), "uri");
  EXPECT_EQ(nameMember("tools/list"), nullptr);
  EXPECT_EQ(nameMember("Tools/Call"), nullptr);
}

// Keeps what the session sends (synchronous here: no call runs on a worker).
class KeepingOutbox : public Outbox {
 public:
  void send(const Json& message) override { sent.push_back(message); }
  std::vector<Json> sent;
};

// The metadata is judged once: a session handed a classification uses its verdicts instead of
// checking the message again (a verdict that differs from the message's shows which one it read).
TEST(Classify, SessionReusesTheClassificationsVerdicts) {
  ServerCore core(ServerOptions{}, std::make_shared<ToolRegistry>());
  const Json request = {{"jsonrpc", "2.0"},
                        {"id", 4},
                        {"method", "tools/list"},
                        {"params", {{"_meta", modernMeta()}}}};
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<KeepingOutbox>();
  Classified refused = classify(request);
  refused.meta = MetaError{rpc::kInvalidParams, "verdict of the classification", nullptr};
  session->handleClassified(request, refused, out);
  ASSERT_EQ(out->sent.size(), 1u);
  EXPECT_EQ(out->sent[0]["error"]["message"], "verdict of the classification");
  Classified unknown = classify(request);
  unknown.known_method = false;
  session->handleClassified(request, unknown, out);
  ASSERT_EQ(out->sent.size(), 2u);
  EXPECT_EQ(out->sent[1]["error"]["code"], rpc::kMethodNotFound);
  session->handleClassified(request, classify(request), out);
  ASSERT_EQ(out->sent.size(), 3u);
  EXPECT_TRUE(out->sent[2]["result"]["tools"].is_array());
}

TEST(Classify, StatelessSessionStartsAtTheNegotiatedVersion) {
  auto registry = std::make_shared<ToolRegistry>();
  ServerCore core(ServerOptions{}, registry);
  for (const auto& [asked, runs] : std::vector<std::pair<std::string, std::string>>{
           {"2025-03-26", "2025-03-26"},
           {"2025-06-18", "2025-06-18"},
           {"1999-01-01", std::string(kLatestProtocolVersion)}}) {
    auto session = std::make_shared<Session>(core, Principal{});
    EXPECT_FALSE(session->initialized());
    session->startStateless(asked);
    EXPECT_TRUE(session->initialized());
    EXPECT_EQ(session->protocolVersion(), runs) << asked;
  }
}

}  // namespace
}  // namespace mcpdb::protocol
