#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include "observe/audit_log.hpp"
#include "observe/metrics.hpp"
#include "protocol/session.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::observe {
namespace {

using protocol::CallRecord;

constexpr const char* kSecretArg = "hunter2-SECRET-arg-7f3a";
constexpr const char* kSecretRow = "row-value-CONFIDENTIAL-91c2";

class Collect : public protocol::Outbox {
 public:
  void send(const Json& m) override {
    std::lock_guard<std::mutex> lock(mu);
    got.push_back(m);
    cv.notify_all();
  }
  void waitFor(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(5), [&] { return got.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Json> got;
};

std::shared_ptr<protocol::ToolRegistry> registry() {
  auto reg = std::make_shared<protocol::ToolRegistry>();
  protocol::Tool t;
  t.name = "find_user";
  t.title = "Find user";
  t.description = "Finds a user by email.";
  t.engine = "postgres";
  t.input_schema = {{"type", "object"},
                    {"properties", {{"email", {{"type", "string"}}}}},
                    {"required", {"email"}},
                    {"additionalProperties", false}};
  t.output_schema = {{"type", "object"}};
  t.handler = [](const Json&, protocol::CallContext&) -> Result<protocol::ToolOutput> {
    return protocol::ToolOutput{Json{{"rows", Json::array({Json{{"secret_column", kSecretRow}}})}},
                                1};
  };
  EXPECT_TRUE(reg->add(t));
  return reg;
}

// Drives real calls through a Session (as the transports do) and checks what the audit log wrote.
TEST(AuditLog, LinesNeverContainArgumentValuesOrRows) {
  std::vector<std::string> lines;
  std::mutex mu;
  auto audit = std::make_shared<AuditLog>([&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.emplace_back(line);
  });
  protocol::ServerCore core(protocol::ServerOptions{}, registry());
  core.addObserver(audit);
  auto session = std::make_shared<protocol::Session>(core, protocol::Principal{"client-a"});
  auto out = std::make_shared<Collect>();
  session->handleText(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      out);
  session->handle(Json{{"jsonrpc", "2.0"},
                       {"id", "req-2"},
                       {"method", "tools/call"},
                       {"params", {{"name", "find_user"}, {"arguments", {{"email", kSecretArg}}}}}},
                  out);
  // Invalid arguments (the value is still secret-looking) and an unknown tool whose name is one.
  session->handle(
      Json{{"jsonrpc", "2.0"},
           {"id", 3},
           {"method", "tools/call"},
           {"params", {{"name", "find_user"}, {"arguments", {{"email", 5}, {"x", kSecretArg}}}}}},
      out);
  session->handle(Json{{"jsonrpc", "2.0"},
                       {"id", 4},
                       {"method", "tools/call"},
                       {"params", {{"name", kSecretArg}, {"arguments", {{"email", kSecretArg}}}}}},
                  out);
  out->waitFor(4);
  session->drain(std::chrono::milliseconds(2000));
  core.pool().shutdown();

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(lines.size(), 3u);
  bool saw_ok = false;
  std::set<std::string> ids;
  for (const auto& l : lines) {
    EXPECT_EQ(l.find(kSecretArg), std::string::npos) << l;
    EXPECT_EQ(l.find(kSecretRow), std::string::npos) << l;
    EXPECT_EQ(l.find("hunter2"), std::string::npos) << l;
    EXPECT_EQ(l.find('\n'), std::string::npos);
    const Json j = Json::parse(l);
    EXPECT_EQ(j["client"], "client-a");
    EXPECT_EQ(j["event"], "tool_call");
    EXPECT_TRUE(j.contains("time") && j.contains("duration_ms") && j.contains("rows") &&
                j.contains("bytes"));
    ASSERT_TRUE(j.contains("request_id") && j["request_id"].is_string()) << l;
    ids.insert(j["request_id"].get<std::string>());
    if (j["outcome"] == "ok") {
      saw_ok = true;
      EXPECT_EQ(j["request_id"], "req-2");  // the client's JSON-RPC id, a string
      EXPECT_EQ(j["tool"], "find_user");
      EXPECT_EQ(j["engine"], "postgres");
      EXPECT_EQ(j["rows"], 1);
      EXPECT_GT(j["bytes"].get<int>(), 0);
    }
    if (j["outcome"] == "unknown_tool") {
      EXPECT_EQ(j["tool"], "<unknown>");
      EXPECT_EQ(j["request_id"], "4");  // an integer id, in decimal
    }
    if (j["outcome"] == "invalid_arguments") {
      EXPECT_EQ(j["request_id"], "3");
    }
  }
  EXPECT_TRUE(saw_ok);
  EXPECT_EQ(ids, (std::set<std::string>{"req-2", "3", "4"}));
}

TEST(AuditLog, CallLineShape) {
  CallRecord r{"client-a", "find_user", "postgres", "ok", std::chrono::microseconds(1500),
               2,          300,         "abc-7"};
  const auto at = AuditLog::SystemClock::time_point{} + std::chrono::milliseconds(1700000000123LL);
  const Json j = Json::parse(AuditLog::formatCall(r, at));
  EXPECT_EQ(j, (Json{{"time", "2023-11-14T22:13:20.123Z"},
                     {"event", "tool_call"},
                     {"client", "client-a"},
                     {"tool", "find_user"},
                     {"engine", "postgres"},
                     {"outcome", "ok"},
                     {"duration_ms", 1.5},
                     {"rows", 2},
                     {"bytes", 300},
                     {"request_id", "abc-7"}}));
  // What an engine reported through the call context is added; nothing when it reported nothing.
  r.source = "reports";
  r.truncated = true;
  const Json k = Json::parse(AuditLog::formatCall(r, at));
  EXPECT_EQ(k["source"], "reports");
  EXPECT_EQ(k["truncated"], true);
  EXPECT_EQ(k.size(), j.size() + 2);
}

TEST(AuditLog, RefusalLineShape) {
  Refusal r{"", "rate_limited", 429, "POST", "0123456789abcdef", {}, 0};
  const auto at = AuditLog::SystemClock::time_point{} + std::chrono::milliseconds(1700000000123LL);
  const Json j = Json::parse(AuditLog::formatRefusal(r, at));
  EXPECT_EQ(j["time"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(j["event"], "refused");
  EXPECT_EQ(j["client"], "-");
  EXPECT_EQ(j["outcome"], "rate_limited");
  EXPECT_EQ(j["status"], 429);
  EXPECT_EQ(j["method"], "POST");
  EXPECT_EQ(j["request_id"], "0123456789abcdef");
}

TEST(AuditLog, SettingsParse) {
  config::Diagnostics diag("t");
  YAML::Node n = YAML::Load("{enabled: false, path: /tmp/audit.log}");
  AuditSettings s;
  parseAuditSettings(config::Node(n, "audit", diag), s);
  EXPECT_TRUE(diag.ok());
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.path, "/tmp/audit.log");
  YAML::Node bad = YAML::Load("{enabled: 3, where: x}");
  parseAuditSettings(config::Node(bad, "audit", diag), s);
  EXPECT_FALSE(diag.ok());
}

TEST(Metrics, ExpositionFormat) {
  Metrics m;
  m.onCall(
      CallRecord{"c", "find_user", "postgres", "ok", std::chrono::microseconds(3000), 2, 100, "1"});
  m.onCall(
      CallRecord{"c", "find_user", "postgres", "ok", std::chrono::microseconds(70000), 1, 50, "2"});
  m.onCall(CallRecord{"c", "find_user", "postgres", "timed_out",
                      std::chrono::microseconds(20000000), 0, 0, "3"});
  m.onCall(CallRecord{"c", "some agent text", "", "unknown_tool", {}, 0, 0, "4"});
  m.onCall(
      CallRecord{"c", "we\"ird\\na\nme", "mongodb", "ok", std::chrono::microseconds(1), 0, 0, "5"});
  m.onRefused("client-b", "rate_limited");
  m.onHttpResponse(200);
  m.callsStarted(3);
  m.callsFinished(1);
  m.addGauge("mcpdb_worker_threads", "Worker threads.", [] { return 8.0; });
  const std::string text = m.render();

  EXPECT_NE(text.find("# TYPE mcpdb_tool_calls_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE mcpdb_tool_call_duration_seconds histogram\n"), std::string::npos);
  EXPECT_NE(
      text.find(
          "mcpdb_tool_calls_total{tool=\"find_user\",engine=\"postgres\",outcome=\"ok\"} 2\n"),
      std::string::npos);
  EXPECT_NE(text.find("mcpdb_tool_errors_total{tool=\"find_user\",engine=\"postgres\",outcome="
                      "\"timed_out\"} 1\n"),
            std::string::npos);
  // Cumulative buckets: 3 ms lands in le=0.005, 70 ms in le=0.1, 20 s only in +Inf.
  EXPECT_NE(text.find("mcpdb_tool_call_duration_seconds_bucket{tool=\"find_user\",engine="
                      "\"postgres\",le=\"0.0025\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("mcpdb_tool_call_duration_seconds_bucket{tool=\"find_user\",engine="
                      "\"postgres\",le=\"0.005\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("mcpdb_tool_call_duration_seconds_bucket{tool=\"find_user\",engine="
                      "\"postgres\",le=\"0.1\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("mcpdb_tool_call_duration_seconds_bucket{tool=\"find_user\",engine="
                      "\"postgres\",le=\"10\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("mcpdb_tool_call_duration_seconds_bucket{tool=\"find_user\",engine="
                      "\"postgres\",le=\"+Inf\"} 3\n"),
            std::string::npos);
  EXPECT_NE(
      text.find(
          "mcpdb_tool_call_duration_seconds_count{tool=\"find_user\",engine=\"postgres\"} 3\n"),
      std::string::npos);
  EXPECT_NE(text.find("mcpdb_tool_rows_total{tool=\"find_user\",engine=\"postgres\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("tool=\"<unknown>\""), std::string::npos);
  EXPECT_EQ(text.find("some agent text"), std::string::npos);
  EXPECT_NE(text.find("tool=\"we\\\"ird\\\\na\\nme\""), std::string::npos);
  EXPECT_NE(text.find("mcpdb_http_refusals_total{client=\"client-b\",reason=\"rate_limited\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("mcpdb_tool_calls_in_flight 2\n"), std::string::npos);
  EXPECT_NE(text.find("mcpdb_worker_threads 8\n"), std::string::npos);

  // Every line is a comment or `name{labels} value` (text format 0.0.4).
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? [-+0-9.eEInfa]+$)");
  std::istringstream in(text);
  std::string line;
  int samples = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    ++samples;
  }
  EXPECT_GT(samples, 20);
  EXPECT_EQ(text.back(), '\n');
}

// Pool gauges (worker pool, engine connection pools) are sampled at render time, each with its
// HELP and TYPE lines.
TEST(Metrics, GaugesAreSampledAtRenderTime) {
  Metrics m;
  std::atomic<int> in_use{0};
  m.addGauge("mcpdb_postgres_pool_connections_in_use", "Connections leased.",
             [&in_use] { return static_cast<double>(in_use.load()); });
  m.addGauge("mcpdb_postgres_pool_connections_max", "Pool size.", [] { return 4.0; });
  m.addGauge("mcpdb_worker_busy", "Busy workers.", [] { return 0.5; });
  std::string text = m.render();
  EXPECT_NE(text.find("# HELP mcpdb_postgres_pool_connections_in_use Connections leased.\n"
                      "# TYPE mcpdb_postgres_pool_connections_in_use gauge\n"
                      "mcpdb_postgres_pool_connections_in_use 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nmcpdb_postgres_pool_connections_max 4\n"), std::string::npos);
  EXPECT_NE(text.find("\nmcpdb_worker_busy 0.5\n"), std::string::npos);
  in_use = 3;
  text = m.render();
  EXPECT_NE(text.find("\nmcpdb_postgres_pool_connections_in_use 3\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("mcpdb_postgres_pool_connections_in_use 0"), std::string::npos);
  // Re-registering a name replaces the sampler instead of duplicating the series.
  m.addGauge("mcpdb_worker_busy", "Busy workers.", [] { return 2.0; });
  text = m.render();
  EXPECT_EQ(text.find("mcpdb_worker_busy 0.5"), std::string::npos);
  std::size_t series = 0;
  for (std::size_t pos = 0; (pos = text.find("\nmcpdb_worker_busy ", pos)) != std::string::npos;
       ++pos)
    ++series;
  EXPECT_EQ(series, 1u);
}

// A gauge with a per-source sampler: the total keeps its own family and the sources get theirs,
// so a query summing a family never counts a connection twice.
TEST(Metrics, AGaugeBySourceIsItsOwnLabelledFamily) {
  Metrics m;
  m.addGauge(
      "mcpdb_mysql_pool_connections_open", "Connections open.", [] { return 3.0; },
      [] {
        return Metrics::SourceValues{{"main", 1.0}, {"re\"ports", 2.0}};
      });
  const std::string text = m.render();
  EXPECT_NE(text.find("\nmcpdb_mysql_pool_connections_open 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE mcpdb_mysql_pool_connections_open_by_source gauge\n"
                      "mcpdb_mysql_pool_connections_open_by_source{source=\"main\"} 1\n"
                      "mcpdb_mysql_pool_connections_open_by_source{source=\"re\\\"ports\"} 2\n"),
            std::string::npos)
      << text;
  // Without a per-source sampler, no second family.
  m.addGauge("mcpdb_worker_busy", "Busy workers.", [] { return 1.0; });
  EXPECT_EQ(m.render().find("mcpdb_worker_busy_by_source"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::observe

namespace mcpdb::observe {
namespace {

// The line as the Json form gives it (the format before lines were written directly).
std::string jsonFormCall(const protocol::CallRecord& r, const std::string& time) {
  Json j{
      {"time", time},
      {"event", "tool_call"},
      {"client", r.client_id},
      {"tool", r.outcome == "unknown_tool" ? "<unknown>" : r.tool},
      {"engine", r.engine},
      {"outcome", r.outcome},
      {"duration_ms", static_cast<double>(r.duration.count()) / 1000.0},
      {"rows", r.rows},
      {"bytes", r.bytes},
      {"request_id", r.request_id},
  };
  if (!r.source.empty()) j["source"] = r.source;
  if (r.truncated) j["truncated"] = true;
  return protocol::serialize(j);
}

TEST(AuditLog, DirectFormattingIsByteForByteTheJsonForm) {
  const auto at = AuditLog::SystemClock::time_point(std::chrono::milliseconds(1700000000123));
  protocol::CallRecord r{"client \"q\" caf\xc3\xa9 \xff",
                         "find_user",
                         "postgres",
                         "ok",
                         {},
                         3,
                         4096,
                         "id\\with\ncontrol"};
  for (std::int64_t us :
       {0LL, 1LL, 4LL, 10LL, 999LL, 1000LL, 1500LL, 12000LL, 123456LL, 86400000000LL}) {
    r.duration = std::chrono::microseconds(us);
    EXPECT_EQ(AuditLog::formatCall(r, at), jsonFormCall(r, "2023-11-14T22:13:20.123Z")) << us;
  }
  for (std::int64_t us = 0; us < 3000; ++us) {
    r.duration = std::chrono::microseconds(us);
    ASSERT_EQ(AuditLog::formatCall(r, at), jsonFormCall(r, "2023-11-14T22:13:20.123Z")) << us;
  }
  r.outcome = "unknown_tool";
  EXPECT_EQ(AuditLog::formatCall(r, at), jsonFormCall(r, "2023-11-14T22:13:20.123Z"));
  // The engine's facts (CallAudit), alone and together, escaped like every other field.
  r.outcome = "ok";
  r.source = "reports \"eu\"";
  EXPECT_EQ(AuditLog::formatCall(r, at), jsonFormCall(r, "2023-11-14T22:13:20.123Z"));
  r.truncated = true;
  EXPECT_EQ(AuditLog::formatCall(r, at), jsonFormCall(r, "2023-11-14T22:13:20.123Z"));
  r.source.clear();
  EXPECT_EQ(AuditLog::formatCall(r, at), jsonFormCall(r, "2023-11-14T22:13:20.123Z"));

  Refusal f{"", "rate_limited", 429, "POST", "0123456789abcdef", {}, 0};
  EXPECT_EQ(AuditLog::formatRefusal(f, at), protocol::serialize(Json{
                                                {"time", "2023-11-14T22:13:20.123Z"},
                                                {"event", "refused"},
                                                {"client", "-"},
                                                {"outcome", "rate_limited"},
                                                {"status", 429},
                                                {"method", "POST"},
                                                {"request_id", "0123456789abcdef"},
                                            }));
  // A failed-auth backoff line names the source and the failure count (never a key).
  Refusal t{"", "auth_throttled", 429, "POST", "0123456789abcdef", "198.51.100.7", 6};
  EXPECT_EQ(AuditLog::formatRefusal(t, at), protocol::serialize(Json{
                                                {"time", "2023-11-14T22:13:20.123Z"},
                                                {"event", "refused"},
                                                {"client", "-"},
                                                {"failures", 6},
                                                {"outcome", "auth_throttled"},
                                                {"status", 429},
                                                {"method", "POST"},
                                                {"request_id", "0123456789abcdef"},
                                                {"source", "198.51.100.7"},
                                            }));
}

}  // namespace
}  // namespace mcpdb::observe
