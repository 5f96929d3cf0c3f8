// Trace context passed to PostgreSQL (telemetry.postgres_application_name): the round trip's
// traceparent as application_name, set with SET LOCAL inside the call's own pipelined
// transaction, so the statement sees it, it costs no round trip, the prepared statements are
// untouched and it is gone once the transaction ends. Off by default.
#include <gtest/gtest.h>

#include <mutex>

#include "integration/postgres/fixture.hpp"
#include "telemetry/span.hpp"
#include "telemetry/tracer.hpp"

namespace mcpdb::postgres::itest {
namespace {

using namespace std::chrono_literals;

constexpr const char* kYaml = R"(
postgres:
  pool: {size: 1}
  tools:
    app_name:
      description: The session's application_name and its backend.
      statement: SELECT current_setting('application_name') AS app, pg_backend_pid() AS pid
    echo:
      description: Echoes a value.
      statement: SELECT $1::text AS v
      parameters: [{name: v, type: string, description: V}]
)";

struct Traced {
  explicit Traced(bool application_name) {
    telemetry::TracerOptions o;
    o.endpoint = "http://127.0.0.1:9/v1/traces";
    o.schedule_delay = 10s;
    o.postgres_application_name = application_name;
    tracer = std::make_unique<telemetry::Tracer>(
        o, [this](const std::string& body, std::chrono::milliseconds) -> Status {
          std::lock_guard<std::mutex> lock(mu);
          bodies += body;
          return {};
        });
  }
  // Calls `tool` under a new request span; the span's context.
  Result<protocol::ToolOutput> callTraced(Runtime& rt, const std::string& tool, const Json& args,
                                          telemetry::SpanContext& context) {
    auto span = tracer->startServerSpan("tools/call", std::nullopt);
    context = span->context();
    protocol::CallContext ctx;
    ctx.span = span.get();
    for (const auto& t : rt.section().tools) {
      if (t.name != tool) continue;
      ctx.limits = t.limits;
      ctx.deadline = Clock::now() + ctx.limits.timeout;
      return rt.callQuery(t, args, ctx);
    }
    return makeError(Code::NotFound, "no such tool");
  }
  std::string exported() {
    tracer->flush(5s);
    std::lock_guard<std::mutex> lock(mu);
    return bodies;
  }
  std::mutex mu;
  std::string bodies;
  std::unique_ptr<telemetry::Tracer> tracer;
};

TEST(PostgresTelemetry, TheRoundTripsTraceparentIsTheApplicationNameForThatCallOnly) {
  ensureTestSchema();
  auto rt = makeRuntime(kYaml);
  // Untraced first: the connection's own application_name.
  auto plain = call(*rt, "app_name", Json::object());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  const std::string own = plain->structured["rows"][0]["app"].get<std::string>();
  const auto pid = plain->structured["rows"][0]["pid"];

  Traced traced(/*application_name=*/true);
  telemetry::SpanContext request;
  auto r = traced.callTraced(*rt, "app_name", Json::object(), request);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string app = r->structured["rows"][0]["app"].get<std::string>();
  EXPECT_EQ(r->structured["rows"][0]["pid"], pid) << "the same pooled connection";
  auto seen = telemetry::parseTraceparent(app);
  ASSERT_TRUE(seen) << "application_name was '" << app << "'";
  EXPECT_EQ(seen->trace_id, request.trace_id);
  // It names the database span (a child of the request span), not the request span itself.
  EXPECT_NE(seen->span_id, request.span_id);
  const std::string body = traced.exported();
  EXPECT_NE(body.find("\"spanId\":\"" + telemetry::hex(seen->span_id) + "\""), std::string::npos)
      << "the span named in application_name is the exported database span";
  EXPECT_NE(body.find("\"parentSpanId\":\"" + telemetry::hex(request.span_id) + "\""),
            std::string::npos);

  // SET LOCAL ended with the transaction: the next untraced call sees the connection's own.
  auto after = call(*rt, "app_name", Json::object());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->structured["rows"][0]["app"], own);
  EXPECT_EQ(after->structured["rows"][0]["pid"], pid);
}

TEST(PostgresTelemetry, OffByDefaultAndNeverCarriesValues) {
  ensureTestSchema();
  auto rt = makeRuntime(kYaml);
  auto plain = call(*rt, "app_name", Json::object());
  ASSERT_TRUE(plain.ok());
  Traced traced(/*application_name=*/false);
  telemetry::SpanContext request;
  auto r = traced.callTraced(*rt, "app_name", Json::object(), request);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["rows"][0]["app"], plain->structured["rows"][0]["app"]);
  // A traced call with a value: the database span exists, the value is in no span.
  auto echo = traced.callTraced(*rt, "echo", Json{{"v", "pg-canary-5531"}}, request);
  ASSERT_TRUE(echo.ok()) << echo.error().message;
  const std::string body = traced.exported();
  EXPECT_NE(body.find("postgresql SELECT"), std::string::npos);
  EXPECT_NE(body.find("\"db.system.name\""), std::string::npos);
  EXPECT_EQ(body.find("pg-canary-5531"), std::string::npos);
  EXPECT_EQ(body.find("SELECT $1"), std::string::npos) << "no statement text";
}

// The executor writes only a well-formed traceparent into the SET (the value is in the
// statement's text: SET takes no parameters). Anything else is not sent at all.
TEST(PostgresTelemetry, OnlyATraceparentIsEverWrittenIntoTheSet) {
  ensureTestSchema();
  auto rt = makeRuntime(kYaml);
  auto plain = call(*rt, "app_name", Json::object());
  ASSERT_TRUE(plain.ok());
  const Json own = plain->structured["rows"][0]["app"];
  auto run = [&](std::string_view application_name) -> Result<ExecResult> {
    Limits limits;
    limits.timeout = 10s;
    const Clock::time_point deadline = Clock::now() + limits.timeout;
    std::stop_source never;
    auto lease = rt->pool().acquire(deadline, never.get_token());
    if (!lease) return lease.error();
    ExecOutcome outcome;
    auto r = executeReadOnly(lease->conn(), lease->cancel(),
                             {.sql = "SELECT current_setting('application_name') AS app",
                              .params = BoundParams{},
                              .limits = limits,
                              .stop = never.get_token(),
                              .deadline = deadline,
                              .types = rt->pool().types(),
                              .application_name = application_name},
                             outcome);
    if (outcome.broken) lease->markBroken();
    return r;
  };
  for (const char* hostile :
       {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'; SET x = 'y",
        "x'; SELECT pg_sleep(1); --", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"}) {
    auto r = run(hostile);
    ASSERT_TRUE(r.ok()) << hostile << ": " << r.error().message;
    EXPECT_EQ(r->rows[0]["app"], own) << hostile;
  }
  auto good = run("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->rows[0]["app"], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
}

}  // namespace
}  // namespace mcpdb::postgres::itest
