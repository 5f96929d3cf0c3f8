#include <gtest/gtest.h>

#include <set>

#include "config/config.hpp"
#include "transport/http/http_config.hpp"
#include "transport/http/policy.hpp"
#include "transport/http/session_table.hpp"

namespace mcpdb::transport::http {
namespace {

TEST(ListenAddress, Parses) {
  auto a = parseListenAddress("127.0.0.1:8080");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  EXPECT_TRUE(a->loopback);
  a = parseListenAddress("[::1]:0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_TRUE(a->loopback);
  EXPECT_EQ(a->display(), "[::1]:0");
  a = parseListenAddress("0.0.0.0:443");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->loopback);
  a = parseListenAddress(":9000");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  a = parseListenAddress("localhost:1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->loopback);
  EXPECT_FALSE(parseListenAddress("127.0.0.1:70000"));
  EXPECT_FALSE(parseListenAddress("127.0.0.1:"));
  EXPECT_FALSE(parseListenAddress("::1:80"));
  EXPECT_FALSE(parseListenAddress("host:8x"));
}

TEST(OriginPolicy, LoopbackDefaultsRejectRebinding) {
  OriginPolicy p({}, {}, "127.0.0.1", true);
  EXPECT_TRUE(p.hostAllowed("127.0.0.1:8080"));
  EXPECT_TRUE(p.hostAllowed("LOCALHOST:1"));
  EXPECT_TRUE(p.hostAllowed("[::1]:8080"));
  EXPECT_TRUE(p.hostAllowed("localhost"));
  EXPECT_FALSE(p.hostAllowed("evil.example.com"));
  EXPECT_FALSE(p.hostAllowed("evil.example.com:8080"));
  EXPECT_FALSE(p.hostAllowed("127.0.0.1.evil.example.com"));
  EXPECT_FALSE(p.hostAllowed(""));
  EXPECT_TRUE(p.originAllowed(std::nullopt));
  EXPECT_TRUE(p.originAllowed("http://127.0.0.1:8080"));
  EXPECT_TRUE(p.originAllowed("https://localhost"));
  EXPECT_FALSE(p.originAllowed("http://evil.example.com"));
  EXPECT_FALSE(p.originAllowed("http://localhost.evil.example.com"));
  EXPECT_FALSE(p.originAllowed("null"));
  EXPECT_FALSE(p.originAllowed("file://"));
}

TEST(OriginPolicy, ConfiguredLists) {
  OriginPolicy p({"mcp.internal.example", "api.example:8443"}, {"https://app.example"}, "0.0.0.0",
                 false);
  EXPECT_TRUE(p.hostAllowed("mcp.internal.example:9999"));
  EXPECT_TRUE(p.hostAllowed("api.example:8443"));
  EXPECT_FALSE(p.hostAllowed("api.example:8444"));
  EXPECT_FALSE(p.hostAllowed("localhost"));
  EXPECT_TRUE(p.originAllowed("https://APP.example"));
  EXPECT_FALSE(p.originAllowed("http://localhost"));  // the list replaces the loopback default
  OriginPolicy any({"*"}, {}, "0.0.0.0", false);
  EXPECT_TRUE(any.hostAllowed("whatever"));
}

TEST(ProtocolVersionHeader, SupportedOrAbsent) {
  EXPECT_TRUE(protocolVersionHeaderOk(std::nullopt));
  EXPECT_TRUE(protocolVersionHeaderOk("2025-11-25"));
  EXPECT_TRUE(protocolVersionHeaderOk("2025-03-26"));
  EXPECT_FALSE(protocolVersionHeaderOk("1999-01-01"));
  EXPECT_FALSE(protocolVersionHeaderOk(""));
}

TEST(Accept, Parses) {
  auto a = parseAccept("application/json, text/event-stream");
  EXPECT_TRUE(a.json && a.sse);
  a = parseAccept("text/event-stream");
  EXPECT_TRUE(a.sse && !a.json);
  a = parseAccept("*/*");
  EXPECT_TRUE(a.sse && a.json);
  a = parseAccept("text/html");
  EXPECT_FALSE(a.sse || a.json);
  a = parseAccept("application/json;q=0, text/event-stream;q=0.5");
  EXPECT_TRUE(a.sse && !a.json);
  a = parseAccept(std::nullopt);
  EXPECT_TRUE(a.json && !a.sse);
}

TEST(SessionTable, UnguessableIdsBoundToTheirOwner) {
  protocol::ServerOptions so;
  so.workers = 1;
  so.max_queue = 1;
  protocol::ServerCore core(so, std::make_shared<protocol::ToolRegistry>());
  SessionTable t(3);
  std::set<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto id = t.add(std::make_shared<protocol::Session>(core, protocol::Principal{"a"}), "a");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->size(), 64u);
    EXPECT_EQ(id->find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_TRUE(wellFormedSessionId(*id));
    ids.insert(*id);
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_FALSE(
      t.add(std::make_shared<protocol::Session>(core, protocol::Principal{"a"}), "a"));  // full
  const std::string id = *ids.begin();
  EXPECT_NE(t.find(id, "a"), nullptr);
  EXPECT_EQ(t.find(id, "b"), nullptr);    // another client cannot use it
  EXPECT_EQ(t.remove(id, "b"), nullptr);  // nor end it
  EXPECT_NE(t.remove(id, "a"), nullptr);
  EXPECT_EQ(t.find(id, "a"), nullptr);
  const auto later = SessionTable::Clock::now() + std::chrono::hours(1);
  EXPECT_EQ(t.expire(std::chrono::minutes(30), later).size(), 2u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(wellFormedSessionId("has space"));
  EXPECT_FALSE(wellFormedSessionId(""));
}

TEST(HttpSettings, ParsesTheSection) {
  const std::string text = R"(
http:
  allowed_hosts: [mcp.example]
  allowed_origins: ["https://app.example"]
  stateless: true
  max_body_bytes: 65536
  idle_timeout_ms: 5000
  tls: {cert_file: /etc/mcp/cert.pem, key_file: /etc/mcp/key.pem}
  metrics: {path: /m, listen: "127.0.0.1:9464", access: key}
  auth: api_key
  rate_limit: {rate: 2.5, burst: 5}
  clients: []
)";
  config::Diagnostics diag("t.yaml");
  auto cfg = config::parseConfig(text, "t.yaml", {"http"}, diag);
  HttpSettings s;
  parseHttpSettings(config::Node(cfg.root, "", diag).child("http"), s);
  ASSERT_TRUE(diag.ok()) << diag.errors()[0];
  EXPECT_TRUE(s.stateless);
  EXPECT_EQ(s.max_body_bytes, 65536u);
  EXPECT_EQ(s.idle_timeout.count(), 5000);
  EXPECT_TRUE(s.tls.enabled());
  EXPECT_EQ(s.metrics.path, "/m");
  EXPECT_TRUE(s.metrics.require_key);
  EXPECT_EQ(s.metrics.listen.value_or(""), "127.0.0.1:9464");
  EXPECT_DOUBLE_EQ(s.auth.defaults.rate, 2.5);

  config::Diagnostics bad("t.yaml");
  auto cfg2 = config::parseConfig(
      "http:\n  metrics: {path: /mcp}\n  max_body_bytes: 1\n  tls: {cert_file: x}\n  nope: 1\n",
      "t.yaml", {"http"}, bad);
  HttpSettings s2;
  parseHttpSettings(config::Node(cfg2.root, "", bad).child("http"), s2);
  EXPECT_GE(bad.errors().size(), 3u);
}

}  // namespace
}  // namespace mcpdb::transport::http
