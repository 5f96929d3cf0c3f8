#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/json.hpp"
#include "telemetry/otlp_json.hpp"
#include "telemetry/tracer.hpp"

namespace mcpdb::telemetry {
namespace {

using namespace std::chrono_literals;

// What the exporter was handed: each batch's body, parsed.
class Collector {
 public:
  ExportFn fn() {
    return [this](const std::string& body, std::chrono::milliseconds) -> Status {
      std::lock_guard<std::mutex> lock(mu_);
      bodies_.push_back(body);
      return {};
    };
  }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  // Every span of every batch.
  std::vector<Json> spans() {
    std::vector<Json> out;
    for (const auto& b : bodies()) {
      const Json j = Json::parse(b);
      for (const auto& s : j["resourceSpans"][0]["scopeSpans"][0]["spans"]) out.push_back(s);
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> bodies_;
};

TracerOptions options() {
  TracerOptions o;
  o.endpoint = "http://127.0.0.1:9/v1/traces";
  o.resource.service_name = "svc-under-test";
  o.resource.service_version = "1.2.3";
  o.schedule_delay = 10s;  // batches go out on flush() in these tests
  return o;
}

const Json* attribute(const Json& span, const std::string& key) {
  for (const auto& a : span["attributes"]) {
    if (a["key"] == key) return &a["value"];
  }
  return nullptr;
}

TEST(Tracer, ExportsOtlpJsonWithParentLinks) {
  Collector c;
  Tracer tracer(options(), c.fn());
  auto remote = extractContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                               "congo=t61rcWkgMzE");
  auto server = tracer.startServerSpan("tools/call", remote);
  ASSERT_TRUE(server);
  server->setString("gen_ai.tool.name", "search_docs");
  {
    ChildSpan db(server.get(), "postgresql SELECT");
    ASSERT_TRUE(db);
    db->setInt("mcpdb.attempts", 2);
    db->setBool("mcpdb.truncated", true);
    db->setError("TimedOut");
  }
  server->end();
  ASSERT_TRUE(tracer.flush(5s));
  const auto bodies = c.bodies();
  ASSERT_EQ(bodies.size(), 1u);
  const Json body = Json::parse(bodies[0]);
  const Json& rs = body["resourceSpans"][0];
  EXPECT_EQ(rs["resource"]["attributes"][0]["key"], "service.name");
  EXPECT_EQ(rs["resource"]["attributes"][0]["value"]["stringValue"], "svc-under-test");
  EXPECT_EQ(rs["scopeSpans"][0]["scope"]["name"], "mcp-dbserver");
  const Json& spans = rs["scopeSpans"][0]["spans"];
  ASSERT_EQ(spans.size(), 2u);
  const Json& db = spans[0];  // ended first
  const Json& srv = spans[1];
  EXPECT_EQ(srv["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(srv["parentSpanId"], "00f067aa0ba902b7");
  EXPECT_EQ(srv["traceState"], "congo=t61rcWkgMzE");
  EXPECT_EQ(srv["kind"], 2);
  EXPECT_EQ(db["kind"], 3);
  EXPECT_EQ(db["traceId"], srv["traceId"]);
  EXPECT_EQ(db["parentSpanId"], srv["spanId"]);
  EXPECT_NE(db["spanId"], srv["spanId"]);
  EXPECT_EQ(srv["spanId"].get<std::string>().size(), 16u);
  EXPECT_EQ(db["status"]["code"], 2);
  EXPECT_EQ(srv["status"]["code"], 0);
  EXPECT_EQ((*attribute(db, "mcpdb.attempts"))["intValue"], "2");
  EXPECT_EQ((*attribute(db, "mcpdb.truncated"))["boolValue"], true);
  EXPECT_EQ((*attribute(db, "error.type"))["stringValue"], "TimedOut");
  EXPECT_EQ((*attribute(srv, "gen_ai.tool.name"))["stringValue"], "search_docs");
  const auto start = std::stoull(srv["startTimeUnixNano"].get<std::string>());
  const auto end = std::stoull(srv["endTimeUnixNano"].get<std::string>());
  EXPECT_LE(start, end);
  EXPECT_GT(start, 1'600'000'000'000'000'000ull);  // nanoseconds of a plausible wall clock
  EXPECT_EQ(tracer.exportedSpans(), 2u);
}

TEST(Tracer, RootSpansGetFreshIdsAndNoParent) {
  Collector c;
  Tracer tracer(options(), c.fn());
  tracer.startServerSpan("ping", std::nullopt)->end();
  tracer.startServerSpan("ping", std::nullopt)->end();
  ASSERT_TRUE(tracer.flush(5s));
  const auto spans = c.spans();
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& s : spans) {
    EXPECT_FALSE(s.contains("parentSpanId"));
    EXPECT_EQ(s["traceId"].get<std::string>().size(), 32u);
    EXPECT_NE(s["traceId"], "00000000000000000000000000000000");
  }
  EXPECT_NE(spans[0]["traceId"], spans[1]["traceId"]);
}

TEST(Tracer, FollowsTheCallersSampledFlagAndTheRatio) {
  Collector c;
  auto unsampled = extractContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "");
  {
    Tracer tracer(options(), c.fn());
    EXPECT_EQ(tracer.startServerSpan("x", unsampled), nullptr);
  }
  {
    // Not accepting the caller's context: a new trace, sampled by ratio (1 here).
    auto o = options();
    o.accept_remote_context = false;
    Tracer tracer(o, c.fn());
    auto span = tracer.startServerSpan("x", unsampled);
    ASSERT_TRUE(span);
    EXPECT_NE(hex(span->context().trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_TRUE(allZero(span->data().parent_span_id));
    EXPECT_TRUE(span->data().trace_state.empty());
  }
  {
    auto o = options();
    o.sampling_ratio = 0;
    Tracer tracer(o, c.fn());
    EXPECT_EQ(tracer.startServerSpan("x", std::nullopt), nullptr);
    // A sampled caller's trace is recorded whatever the ratio (parent-based).
    auto sampled = extractContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "");
    EXPECT_NE(tracer.startServerSpan("x", sampled), nullptr);
  }
  {
    auto o = options();
    o.sampling_ratio = 0.5;
    Tracer tracer(o, c.fn());
    TraceId low{}, high{};
    low[15] = 1;
    high.fill(0xff);
    EXPECT_TRUE(tracer.sampleRoot(low));
    EXPECT_FALSE(tracer.sampleRoot(high));
    int kept = 0;
    for (int i = 0; i < 2000; ++i) kept += tracer.sampleRoot(tracer.newTraceId()) ? 1 : 0;
    EXPECT_GT(kept, 800);
    EXPECT_LT(kept, 1200);
  }
}

TEST(Tracer, SendsBatchesOfAtMostBatchSize) {
  Collector c;
  auto o = options();
  o.batch_size = 3;
  Tracer tracer(o, c.fn());
  for (int i = 0; i < 7; ++i) tracer.startServerSpan("s", std::nullopt)->end();
  ASSERT_TRUE(tracer.flush(5s));
  std::vector<std::size_t> sizes;
  for (const auto& b : c.bodies())
    sizes.push_back(Json::parse(b)["resourceSpans"][0]["scopeSpans"][0]["spans"].size());
  std::size_t total = 0;
  for (auto n : sizes) {
    EXPECT_LE(n, 3u);
    total += n;
  }
  EXPECT_EQ(total, 7u);
  EXPECT_GE(sizes.size(), 3u);
}

TEST(Tracer, AFullBatchGoesOutWithoutWaitingForTheInterval) {
  Collector c;
  auto o = options();
  o.batch_size = 2;
  Tracer tracer(o, c.fn());  // interval 10 s
  tracer.startServerSpan("a", std::nullopt)->end();
  tracer.startServerSpan("b", std::nullopt)->end();
  for (int i = 0; i < 200 && c.bodies().empty(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(c.bodies().size(), 1u);
}

TEST(Tracer, ASlowCollectorNeverBlocksAndAFullQueueDrops) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> exports{0};
  auto o = options();
  o.batch_size = 2;
  o.max_queue = 4;
  o.export_timeout = 200ms;
  {
    Tracer tracer(o, [&](const std::string&, std::chrono::milliseconds) -> Status {
      ++exports;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });  // a collector that hangs
      return makeError(Code::TimedOut, "collector timed out");
    });
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000; ++i) tracer.startServerSpan("s", std::nullopt)->end();
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, 2s);  // 1000 spans with a hung exporter: no span waited for it
    // One batch is with the hung exporter, at most max_queue wait; the rest were dropped.
    EXPECT_GE(tracer.droppedSpans(), 1000u - 2 - 4);
    EXPECT_LE(tracer.queuedSpans(), 4u);
    {
      std::lock_guard<std::mutex> lock(mu);
      release = true;
    }
    cv.notify_all();
  }
  EXPECT_GE(exports.load(), 1);
}

TEST(Tracer, FailedExportsAreCountedAndWarnedWithoutHeaderValues) {
  std::vector<std::string> warnings;
  auto o = options();
  o.headers = {{"authorization", "Bearer very-secret-token"}};
  {
    Tracer tracer(
        o,
        [](const std::string&, std::chrono::milliseconds) -> Status {
          return makeError(Code::Unavailable, "connection refused (http://127.0.0.1:9)");
        },
        [&](const std::string& w) { warnings.push_back(w); });
    tracer.startServerSpan("s", std::nullopt)->end();
    tracer.startServerSpan("s", std::nullopt)->end();
    tracer.flush(5s);
    EXPECT_EQ(tracer.failedSpans(), 2u);
    EXPECT_EQ(tracer.exportedSpans(), 0u);
  }
  ASSERT_EQ(warnings.size(), 1u);  // one warning a minute at most
  EXPECT_NE(warnings[0].find("connection refused"), std::string::npos);
  EXPECT_EQ(warnings[0].find("very-secret-token"), std::string::npos);
}

TEST(Tracer, ADeadCollectorFailsTheExportNotTheCaller) {
  // A real POST to a port nothing listens on (the discard port on loopback).
  auto o = options();
  o.export_timeout = 500ms;
  Tracer tracer(o);
  tracer.startServerSpan("s", std::nullopt)->end();
  EXPECT_TRUE(tracer.flush(5s));
  EXPECT_EQ(tracer.failedSpans(), 1u);
}

TEST(Tracer, ShutdownExportsWhatIsQueued) {
  Collector c;
  {
    Tracer tracer(options(), c.fn());  // interval 10 s: only the destructor sends it
    tracer.startServerSpan("last", std::nullopt)->end();
  }
  ASSERT_EQ(c.spans().size(), 1u);
  EXPECT_EQ(c.spans()[0]["name"], "last");
}

TEST(ChildSpan, WithoutAParentIsNothing) {
  ChildSpan none(nullptr, "postgresql SELECT");
  EXPECT_FALSE(none);
  EXPECT_EQ(none.get(), nullptr);
}

TEST(OtlpJson, EncodesEveryAttributeTypeAndOmitsEmptyFields) {
  SpanData s;
  s.trace_id.fill(0xab);
  s.span_id.fill(0x01);
  s.name = "n";
  s.kind = SpanKind::Client;
  s.start_unix_ns = 1;
  s.end_unix_ns = 18446744073709551615ull;  // a full 64-bit value survives as a string
  s.attributes = {{"s", std::string("v")}, {"i", std::int64_t{-5}}, {"b", false}};
  const Json j = Json::parse(encodeOtlpJson({"svc", ""}, {s}));
  const Json& span = j["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(span["traceId"], "abababababababababababababababab");
  EXPECT_EQ(span["spanId"], "0101010101010101");
  EXPECT_FALSE(span.contains("parentSpanId"));
  EXPECT_FALSE(span.contains("traceState"));
  EXPECT_EQ(span["endTimeUnixNano"], "18446744073709551615");
  EXPECT_EQ(span["attributes"][0]["value"]["stringValue"], "v");
  EXPECT_EQ(span["attributes"][1]["value"]["intValue"], "-5");
  EXPECT_EQ(span["attributes"][2]["value"]["boolValue"], false);
  EXPECT_EQ(j["resourceSpans"][0]["resource"]["attributes"].size(), 1u);  // no empty version
}

}  // namespace
}  // namespace mcpdb::telemetry
