// The session's spans (protocol/request_trace.hpp): one per request, its parent the caller's
// traceparent (params._meta first, then the transport's headers), the engine's round trip as its
// child, and nothing of the call's arguments in any of them.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "protocol/request_trace.hpp"
#include "protocol/session.hpp"
#include "telemetry/span.hpp"
#include "telemetry/tracer.hpp"

#include "fake_tools.hpp"

namespace mcpdb::protocol {
namespace {

using namespace std::chrono_literals;

constexpr const char* kParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
constexpr const char* kSecret = "s3cr3t-VALUE-in-args";

using testing::CollectingOutbox;

// A tool that does what an engine does: a child span around its "round trip".
std::shared_ptr<ToolRegistry> registry(std::atomic<bool>& saw_span) {
  auto reg = std::make_shared<ToolRegistry>();
  Tool t;
  t.name = "lookup";
  t.title = "Lookup";
  t.description = "Looks a thing up.";
  t.engine = "fake";
  t.input_schema = {{"type", "object"},
                    {"properties", {{"key", {{"type", "string"}}}}},
                    {"additionalProperties", false}};
  t.output_schema = {{"type", "object"}};
  t.handler = [&saw_span](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    saw_span = ctx.span != nullptr;
    ctx.audit.source = "primary";
    telemetry::ChildSpan db(ctx.span, "fake SELECT");
    if (db) db->setString("db.system.name", "fake");
    return ToolOutput{Json{{"ok", true}}, 3};
  };
  (void)reg->add(t);
  Tool f = t;
  f.name = "failing";
  f.handler = [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    telemetry::ChildSpan db(ctx.span, "fake SELECT");
    return makeError(Code::Unavailable, std::string("down: ") + kSecret);
  };
  (void)reg->add(f);
  return reg;
}

struct Exported {
  std::mutex mu;
  std::vector<std::string> bodies;
  telemetry::ExportFn fn() {
    return [this](const std::string& body, std::chrono::milliseconds) -> Status {
      std::lock_guard<std::mutex> lock(mu);
      bodies.push_back(body);
      return {};
    };
  }
  std::vector<Json> spans() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<Json> out;
    for (const auto& b : bodies) {
      const Json body = Json::parse(b);
      for (const auto& s : body["resourceSpans"][0]["scopeSpans"][0]["spans"]) out.push_back(s);
    }
    return out;
  }
  std::string all() {
    std::lock_guard<std::mutex> lock(mu);
    std::string s;
    for (const auto& b : bodies) s += b;
    return s;
  }
};

std::string attr(const Json& span, const std::string& key) {
  for (const auto& a : span["attributes"]) {
    if (a["key"] == key) return a["value"].dump();
  }
  return {};
}

struct Fixture {
  Fixture() : core(ServerOptions{}, registry(saw_span)) {
    telemetry::TracerOptions o;
    o.endpoint = "http://127.0.0.1:9/v1/traces";
    o.schedule_delay = 10s;
    tracer = std::make_shared<telemetry::Tracer>(o, exported.fn());
    core.setTracer(tracer);
    session = std::make_shared<Session>(core, Principal{});
    session->handleText(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
        out);
  }
  // The spans exported once at least `n` are (a call's span ends just after its answer is sent).
  std::vector<Json> flushed(std::size_t n = 1) {
    const auto until = std::chrono::steady_clock::now() + 5s;
    std::vector<Json> spans;
    do {
      EXPECT_TRUE(tracer->flush(5s));
      spans = exported.spans();
    } while (spans.size() < n && std::chrono::steady_clock::now() < until);
    return spans;
  }
  std::atomic<bool> saw_span{false};
  Exported exported;
  ServerCore core;
  std::shared_ptr<telemetry::Tracer> tracer;
  std::shared_ptr<Session> session;
  std::shared_ptr<CollectingOutbox> out = std::make_shared<CollectingOutbox>();
};

const Json* find(const std::vector<Json>& spans, const std::string& name) {
  for (const auto& s : spans) {
    if (s["name"] == name) return &s;
  }
  return nullptr;
}

TEST(RequestTrace, ACallsSpanContinuesTheCallersTraceAndParentsTheRoundTrip) {
  Fixture f;
  f.session->handleText(std::string(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{)") +
                            R"("name":"lookup","arguments":{"key":")" + kSecret +
                            R"("},"_meta":{"traceparent":")" + kParent +
                            R"(","tracestate":"vendor=abc"}}})",
                        f.out);
  f.out->waitFor(2);
  const auto spans = f.flushed(3);  // initialize, the call, its round trip
  EXPECT_TRUE(f.saw_span);
  const Json* call = find(spans, "tools/call lookup");
  const Json* db = find(spans, "fake SELECT");
  ASSERT_NE(call, nullptr);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ((*call)["traceId"], "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(call->value("parentSpanId", ""), "b7ad6b7169203331");
  EXPECT_EQ(call->value("traceState", ""), "vendor=abc");
  EXPECT_EQ((*call)["kind"], 2);
  EXPECT_EQ((*db)["traceId"], (*call)["traceId"]);
  EXPECT_EQ(db->value("parentSpanId", ""), (*call)["spanId"]);
  EXPECT_EQ(attr(*call, "gen_ai.tool.name"), R"({"stringValue":"lookup"})");
  EXPECT_EQ(attr(*call, "mcp.method.name"), R"({"stringValue":"tools/call"})");
  EXPECT_EQ(attr(*call, "mcp.protocol.version"), R"({"stringValue":"2025-11-25"})");
  EXPECT_EQ(attr(*call, "mcpdb.engine"), R"({"stringValue":"fake"})");
  EXPECT_EQ(attr(*call, "mcpdb.source"), R"({"stringValue":"primary"})");
  EXPECT_EQ(attr(*call, "mcpdb.outcome"), R"({"stringValue":"ok"})");
  EXPECT_EQ(f.exported.all().find(kSecret), std::string::npos);
}

TEST(RequestTrace, TheTransportsHeadersAreTheParentWhenMetaHasNone) {
  Fixture f;
  Json message = {{"jsonrpc", "2.0"},
                  {"id", 8},
                  {"method", "tools/call"},
                  {"params", {{"name", "lookup"}, {"arguments", {{"key", "x"}}}}}};
  Classified c = classify(message);
  c.traceparent = kParent;
  f.session->handleClassified(message, c, f.out);
  f.out->waitFor(2);
  const auto spans = f.flushed(3);
  const Json* call = find(spans, "tools/call lookup");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->value("parentSpanId", ""), "b7ad6b7169203331");

  // _meta's context wins over the header's.
  Json again = message;
  again["id"] = 9;
  again["params"]["_meta"] = {
      {"traceparent", "00-11111111111111111111111111111111-2222222222222222-01"}};
  Classified c2 = classify(again);
  c2.traceparent = kParent;
  f.session->handleClassified(again, c2, f.out);
  f.out->waitFor(3);
  bool found = false;
  for (const auto& s : f.flushed(5)) {
    if (s["traceId"] == "11111111111111111111111111111111" && s["name"] == "tools/call lookup") {
      found = true;
      EXPECT_EQ(s.value("parentSpanId", ""), "2222222222222222");
    }
  }
  EXPECT_TRUE(found);
}

TEST(RequestTrace, AnInvalidTraceparentStartsATraceOfItsOwn) {
  Fixture f;
  f.session->handleText(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"traceparent":"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"}}})",
      f.out);
  const auto spans = f.flushed();
  const Json* list = find(spans, "tools/list");
  ASSERT_NE(list, nullptr);
  EXPECT_FALSE(list->contains("parentSpanId"));
  EXPECT_NE((*list)["traceId"], "0af7651916cd43dd8448eb211c80319c");
}

TEST(RequestTrace, FailuresAndUnknownNamesKeepTheirTextOut) {
  Fixture f;
  f.session->handleText(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"failing","arguments":{}}})",
      f.out);
  f.session->handleText(
      std::string(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":")") + kSecret +
          R"(","arguments":{}}})",
      f.out);
  f.session->handleText(
      std::string(R"({"jsonrpc":"2.0","id":4,"method":")") + kSecret + R"(","params":{}})", f.out);
  f.out->waitFor(4);
  const auto spans = f.flushed(5);  // initialize, failing and its round trip, unknown, _OTHER
  const Json* failing = find(spans, "tools/call failing");
  ASSERT_NE(failing, nullptr);
  EXPECT_EQ((*failing)["status"]["code"], 2);
  EXPECT_EQ(attr(*failing, "error.type"), R"({"stringValue":"unavailable"})");
  const Json* unknown = find(spans, "tools/call");  // an unknown tool's name is not written
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(attr(*unknown, "mcpdb.outcome"), R"({"stringValue":"unknown_tool"})");
  EXPECT_NE(find(spans, "_OTHER"), nullptr);  // an unknown method's name is not written either
  EXPECT_EQ(f.exported.all().find(kSecret), std::string::npos);
}

TEST(RequestTrace, WithoutATracerTheCallHasNoSpan) {
  std::atomic<bool> saw{true};
  ServerCore core(ServerOptions{}, registry(saw));
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<CollectingOutbox>();
  session->handleText(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      out);
  session->handleText(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{}}})",
      out);
  out->waitFor(2);
  EXPECT_FALSE(saw);
  EXPECT_EQ(currentRequestSpan(), nullptr);
}

}  // namespace
}  // namespace mcpdb::protocol
