// The telemetry: section: off by default, strict about its endpoint (a credential never in the
// file), and the collector's headers read from the environment at start-up, never shown.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "app/telemetry.hpp"

namespace mcpdb::app {
namespace {

struct Parsed {
  TelemetrySettings settings;
  std::vector<std::string> errors;
};

Parsed parse(const std::string& yaml) {
  config::Diagnostics diag("t.yaml");
  const YAML::Node n = YAML::Load(yaml);
  Parsed p;
  parseTelemetrySettings(config::Node(n, "telemetry", diag), p.settings);
  p.errors = diag.errors();
  return p;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + "\n";
  return s;
}

TEST(TelemetryConfig, OffByDefault) {
  TelemetrySettings none;
  EXPECT_FALSE(none.enabled);
  auto tracer = makeTracer(none, Env::fromMap({}), "1");
  ASSERT_TRUE(tracer.ok());
  EXPECT_EQ(*tracer, nullptr);
}

TEST(TelemetryConfig, ReadsEveryKey) {
  auto p = parse(
      "{enabled: true, otlp_endpoint: 'https://otel.example:4318', service_name: api, "
      "sampling_ratio: 0.25, batch_size: 10, max_queue: 100, export_interval_ms: 200, "
      "export_timeout_ms: 300, headers_env: {authorization: OTLP_AUTH}, ca_file: /etc/ca.pem, "
      "accept_trace_context: false, postgres_application_name: true}");
  ASSERT_TRUE(p.errors.empty()) << joined(p.errors);
  const auto& s = p.settings;
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.otlp_endpoint, "https://otel.example:4318");
  EXPECT_EQ(s.sampling_ratio, 0.25);
  EXPECT_EQ(s.batch_size, 10);
  EXPECT_EQ(s.max_queue, 100);
  EXPECT_EQ(s.export_interval.count(), 200);
  EXPECT_EQ(s.export_timeout.count(), 300);
  ASSERT_EQ(s.headers_env.size(), 1u);
  EXPECT_EQ(s.headers_env[0].second, "OTLP_AUTH");
  EXPECT_FALSE(s.accept_trace_context);
  EXPECT_TRUE(s.postgres_application_name);
  auto tracer = makeTracer(s, Env::fromMap({{"OTLP_AUTH", "Bearer t0ken"}}), "9.9");
  ASSERT_TRUE(tracer.ok()) << tracer.error().message;
  const auto& o = (*tracer)->options();
  EXPECT_EQ(o.endpoint, "https://otel.example:4318/v1/traces");
  EXPECT_EQ(o.resource.service_name, "api");
  EXPECT_EQ(o.resource.service_version, "9.9");
  ASSERT_EQ(o.headers.size(), 1u);
  EXPECT_EQ(o.headers[0].second, "Bearer t0ken");
  EXPECT_FALSE(o.accept_remote_context);
  EXPECT_TRUE(o.postgres_application_name);
}

TEST(TelemetryConfig, RefusesEndpointsThatCouldHoldACredentialOrAreNotHttp) {
  for (const char* bad :
       {"ftp://collector:4318", "collector:4318", "http://", "http://user:pass@collector:4318",
        "https://collector:4318/v1/traces?api_key=x", "http://collector:4318/#frag",
        "http://coll ector:4318", "file:///etc/passwd"}) {
    auto p = parse(std::string("{enabled: true, otlp_endpoint: '") + bad + "'}");
    EXPECT_FALSE(p.errors.empty()) << bad;
    // The message names the key, never echoes a password-looking part.
    for (const auto& e : p.errors) EXPECT_EQ(e.find("pass@"), std::string::npos) << e;
  }
  EXPECT_EQ(tracesUrl("http://c:4318"), "http://c:4318/v1/traces");
  EXPECT_EQ(tracesUrl("http://c:4318/"), "http://c:4318/v1/traces");
  EXPECT_EQ(tracesUrl("http://c:4318/otlp/v1/traces"), "http://c:4318/otlp/v1/traces");
}

TEST(TelemetryConfig, EnabledNeedsAnEndpointAndLimitsAreBounded) {
  EXPECT_NE(joined(parse("{enabled: true}").errors).find("otlp_endpoint"), std::string::npos);
  EXPECT_FALSE(parse("{sampling_ratio: 1.5}").errors.empty());
  EXPECT_FALSE(parse("{sampling_ratio: -0.1}").errors.empty());
  EXPECT_FALSE(parse("{max_queue: 0}").errors.empty());
  EXPECT_FALSE(parse("{batch_size: 100, max_queue: 10}").errors.empty());
  EXPECT_FALSE(parse("{export_timeout_ms: 1}").errors.empty());
  EXPECT_FALSE(parse("{unknown_key: 1}").errors.empty());
}

TEST(TelemetryConfig, HeadersComeOnlyFromTheEnvironment) {
  // A header name must be a token and not one the exporter sets; the value names a variable.
  EXPECT_FALSE(parse("{headers_env: {'bad header': X}}").errors.empty());
  EXPECT_FALSE(parse("{headers_env: {content-type: X}}").errors.empty());
  EXPECT_FALSE(parse("{headers_env: {authorization: 'Bearer abc'}}").errors.empty());
  EXPECT_FALSE(parse("{headers_env: [a, b]}").errors.empty());
  auto p = parse("{enabled: true, otlp_endpoint: 'http://c:4318', headers_env: {x-key: MISSING}}");
  ASSERT_TRUE(p.errors.empty()) << joined(p.errors);
  auto missing = makeTracer(p.settings, Env::fromMap({}), "1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("MISSING is not set"), std::string::npos);
  auto injected = makeTracer(p.settings, Env::fromMap({{"MISSING", "v\r\nX-Injected: 1"}}), "1");
  ASSERT_FALSE(injected.ok());
  EXPECT_EQ(injected.error().message.find("X-Injected"), std::string::npos)
      << "the value is never shown";
}

}  // namespace
}  // namespace mcpdb::app
