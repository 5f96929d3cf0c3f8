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

// The health endpoints accept an IP-literal Host (an orchestrator's probe sends the pod's
// address); every shape of a name, however IP-like, stays refused (DNS rebinding sends names).
TEST(HealthHost, OnlyIpLiteralsPass) {
  for (const char* ok : {"10.244.3.17", "10.244.3.17:9464", "192.168.0.1:80", "[fd00::17]",
                         "[fd00::17]:9464", "[::ffff:10.0.0.1]:1", "127.0.0.1", " 10.0.0.1 "}) {
    EXPECT_TRUE(isIpLiteralHost(ok)) << ok;
  }
  for (const char* bad : {"",
                          "evil.example",
                          "evil.example:9464",
                          "10.244.3.17.evil.example",
                          "10.244.3",
                          "10.244.3.17.5",
                          "0x0a.0.0.1",
                          "4294967295",
                          "fd00::17",
                          "[fd00::17",
                          "[evil.example]",
                          "user@10.0.0.1",
                          "10.0.0.1/x",
                          "10.0.0.1:0",
                          "10.0.0.1:65536",
                          "10.0.0.1:80:80",
                          "10.0.0.1%2e",
                          "localhost",
                          "[::1]x",
                          "10.0.0.1, evil.example"}) {
    EXPECT_FALSE(isIpLiteralHost(bad)) << bad;
  }
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

// Issue #18: names that merely start like a loopback name are other hosts (an attacker can
// register them and point them at 127.0.0.1: DNS rebinding).
TEST(OriginPolicy, LoopbackLookalikesAreRefused) {
  OriginPolicy p({}, {}, "127.0.0.1", true);
  for (const char* host : {"127.0.0.1.evil.example",
                           "127.evil.com",
                           "127.0.0.1.nip.io:8080",
                           "localhost.attacker.tld",
                           "localhost.attacker.tld:80",
                           "127.0.0",
                           "127.0.0.1.1",
                           "127.0.0.256",
                           "127.0.0.01x",
                           "[::1].evil",
                           "[::1]evil",
                           "127.0.0.1:",
                           "127.0.0.1:0",
                           "127.0.0.1:65536",
                           "127.0.0.1:80:80",
                           "user@127.0.0.1",
                           "127.0.0.1/x",
                           "127.0.0.1 evil",
                           "local host",
                           "localhost%2e",
                           "::1"}) {
    EXPECT_FALSE(p.hostAllowed(host)) << host;
  }
  for (const char* host : {"127.0.0.1", "127.1.2.3:9", "127.255.255.255", "localhost.", "[::1]",
                           "LocalHost:65535", " 127.0.0.1:80 "}) {
    EXPECT_TRUE(p.hostAllowed(host)) << host;
  }
  for (const char* origin : {"http://127.0.0.1.evil.example", "http://127.evil.com:8080",
                             "https://localhost.attacker.tld", "http://localhost:80/path",
                             "http://user@localhost", "ftp://localhost", "http://",
                             "http://[::1].evil", "null", "HTTP://127.0.0.1.EVIL.EXAMPLE"}) {
    EXPECT_FALSE(p.originAllowed(origin)) << origin;
  }
  for (const char* origin : {"http://127.0.0.1", "http://127.9.9.9:3000", "https://[::1]:443",
                             "HTTP://LOCALHOST:6274"}) {
    EXPECT_TRUE(p.originAllowed(origin)) << origin;
  }
}

TEST(OriginPolicy, ConfiguredOriginsMatchSchemeHostAndPort) {
  OriginPolicy p({"app.example"}, {"https://app.example", "http://app.example:8080"}, "0.0.0.0",
                 false);
  EXPECT_TRUE(p.originAllowed("https://app.example:443"));  // the default port is the same origin
  EXPECT_TRUE(p.originAllowed("http://app.example:8080"));
  EXPECT_FALSE(p.originAllowed("http://app.example"));        // another scheme
  EXPECT_FALSE(p.originAllowed("https://app.example:8443"));  // another port
  EXPECT_FALSE(p.originAllowed("https://app.example.evil.example"));
  EXPECT_FALSE(p.originAllowed("https://evil-app.example"));
  EXPECT_FALSE(p.hostAllowed("app.example.evil.example"));
  EXPECT_FALSE(p.hostAllowed("127.0.0.1"));  // a configured list replaces the loopback default
}

TEST(Authority, ParsesStrictly) {
  auto a = parseAuthority("Example.COM:8080");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "example.com");
  EXPECT_EQ(a->port, 8080u);
  a = parseAuthority("[::1]");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "[::1]");
  EXPECT_EQ(a->port, 0u);
  for (const char* bad : {"", ":80", "[", "[]", "[::1", "a b", "a_b", "-a", ".a", "a..b", "a:x",
                          "a:-1", "a:123456", "[zz::1]", "\x00"}) {
    EXPECT_FALSE(parseAuthority(bad)) << bad;
  }
  const auto o = parseOrigin("https://a.example");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->authority.port, 443u);
  EXPECT_FALSE(parseOrigin("https://a.example/"));
  EXPECT_FALSE(parseOrigin("null"));
}

TEST(ListenAddress, LoopbackOnlyForLoopbackLiterals) {
  auto a = parseListenAddress("127.evil.example:8080");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->loopback);
  a = parseListenAddress("localhost.evil.example:8080");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->loopback);
  a = parseListenAddress("127.0.0.2:8080");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->loopback);
}

TEST(SourcePolicy, ForwardedForOnlyFromTrustedProxies) {
  const SourcePolicy none({});
  EXPECT_EQ(none.source("198.51.100.7", "203.0.113.9"), "198.51.100.7");
  const SourcePolicy p({"10.0.0.0/8", "::1", "192.0.2.1"});
  EXPECT_TRUE(p.trusted("10.1.2.3"));
  EXPECT_TRUE(p.trusted("::ffff:10.1.2.3"));
  EXPECT_FALSE(p.trusted("11.0.0.1"));
  // An untrusted peer's header is ignored.
  EXPECT_EQ(p.source("198.51.100.7", "203.0.113.9"), "198.51.100.7");
  // From a trusted proxy: the rightmost address that is not a trusted proxy itself; what the
  // client wrote further left does not count.
  EXPECT_EQ(p.source("10.0.0.1", "1.1.1.1, 203.0.113.9, 192.0.2.1"), "203.0.113.9");
  EXPECT_EQ(p.source("10.0.0.1", "garbage"), "10.0.0.1");
  // Padding on the client's side of the list cannot push the proxies' entries out of view.
  std::string padded;
  for (int i = 0; i < 2000; ++i) padded += "6.6.6.6, ";
  EXPECT_EQ(p.source("10.0.0.1", padded + "203.0.113.9, 10.2.3.4"), "203.0.113.9");
  EXPECT_EQ(p.source("10.0.0.1", std::nullopt), "10.0.0.1");
  // IPv6 sources are grouped by /64.
  EXPECT_EQ(sourceKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  EXPECT_EQ(sourceKey("2001:db8:1:2:bbbb::7"), "2001:db8:1:2::/64");
  EXPECT_EQ(sourceKey("::ffff:198.51.100.7"), "198.51.100.7");
  EXPECT_TRUE(validProxyEntry("10.0.0.0/8"));
  EXPECT_TRUE(validProxyEntry("2001:db8::/32"));
  EXPECT_FALSE(validProxyEntry("10.0.0.0/33"));
  EXPECT_FALSE(validProxyEntry("proxy.example"));
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
    auto id = t.add(std::make_shared<protocol::Session>(core, protocol::Principal{"a"}), "a").id;
    ASSERT_TRUE(id);
    EXPECT_EQ(id->size(), 64u);
    EXPECT_EQ(id->find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_TRUE(wellFormedSessionId(*id));
    ids.insert(*id);
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(t.add(std::make_shared<protocol::Session>(core, protocol::Principal{"a"}), "a").refused,
            SessionTable::Added::Refused::TableFull);
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

// Issue #18: one key cannot fill the table: at its cap its least recently used idle session
// makes room, and other clients still get sessions.
TEST(SessionTable, PerClientCapEvictsThatClientsOldestIdleSession) {
  protocol::ServerOptions so;
  so.workers = 1;
  protocol::ServerCore core(so, std::make_shared<protocol::ToolRegistry>());
  SessionTable t(10, 2);
  const auto t0 = SessionTable::Clock::now();
  auto mk = [&core](const char* who) {
    return std::make_shared<protocol::Session>(core, protocol::Principal{who});
  };
  const auto first = t.add(mk("a"), "a", t0).id;
  const auto second = t.add(mk("a"), "a", t0 + std::chrono::seconds(1)).id;
  ASSERT_TRUE(first && second);
  EXPECT_NE(t.find(*first, "a", t0 + std::chrono::seconds(2)), nullptr);  // now second is older
  const auto third = t.add(mk("a"), "a", t0 + std::chrono::seconds(3));
  ASSERT_TRUE(third.id);
  EXPECT_NE(third.evicted, nullptr);
  EXPECT_EQ(t.find(*second, "a"), nullptr);
  EXPECT_NE(t.find(*first, "a"), nullptr);
  EXPECT_EQ(t.countOf("a"), 2u);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(t.add(mk("a"), "a").id);
  EXPECT_EQ(t.countOf("a"), 2u);
  EXPECT_TRUE(t.add(mk("b"), "b").id);
  EXPECT_EQ(t.size(), 3u);
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

// Issue #18: the hostile-input limits have defaults and are configurable; entries that could
// never match (a Host with a path, an origin without a scheme, a proxy that is no address) are
// config errors, not silently dead entries.
TEST(HttpSettings, HostileInputLimits) {
  HttpSettings d;
  EXPECT_EQ(d.unauthenticated_timeout.count(), 5000);
  EXPECT_EQ(d.max_unauthenticated_per_source, 32u);
  EXPECT_EQ(d.reservedConnections(), 64u);
  EXPECT_EQ(d.max_sessions_per_client, 64u);
  EXPECT_EQ(d.connectionsPerClient(), 128u);  // half of max_connections
  EXPECT_EQ(d.auth_throttle.free_failures, 5u);
  EXPECT_TRUE(d.trusted_proxies.empty());
  EXPECT_EQ(d.tls.min_version, "1.2");
  EXPECT_EQ(d.tls.ciphers.find("CBC"), std::string::npos);

  const std::string text = R"(
http:
  trusted_proxies: ["10.0.0.0/8", "::1"]
  unauthenticated_timeout_ms: 2000
  max_unauthenticated_per_source: 8
  reserved_connections: 10
  connection_rate: {rate: 5}
  max_sessions_per_client: 3
  max_connections_per_client: 20
  auth_throttle: {free_failures: 2, base_backoff_ms: 500, max_backoff_ms: 4000, max_sources: 100}
  tls: {cert_file: c.pem, key_file: k.pem, min_version: "1.3"}
)";
  config::Diagnostics diag("t.yaml");
  auto cfg = config::parseConfig(text, "t.yaml", {"http"}, diag);
  HttpSettings s;
  parseHttpSettings(config::Node(cfg.root, "", diag).child("http"), s);
  ASSERT_TRUE(diag.ok()) << diag.errors()[0];
  EXPECT_EQ(s.trusted_proxies.size(), 2u);
  EXPECT_EQ(s.unauthenticated_timeout.count(), 2000);
  EXPECT_EQ(s.max_unauthenticated_per_source, 8u);
  EXPECT_EQ(s.reservedConnections(), 10u);
  EXPECT_DOUBLE_EQ(s.connection_rate.rate, 5);
  EXPECT_DOUBLE_EQ(s.connection_rate.burst, 10);
  EXPECT_EQ(s.max_sessions_per_client, 3u);
  EXPECT_EQ(s.connectionsPerClient(), 20u);
  EXPECT_EQ(s.auth_throttle.free_failures, 2u);
  EXPECT_EQ(s.auth_throttle.max_backoff.count(), 4000);
  EXPECT_EQ(s.tls.min_version, "1.3");

  config::Diagnostics bad("t.yaml");
  auto cfg2 = config::parseConfig(
      "http:\n  allowed_hosts: [\"mcp.example/path\"]\n  allowed_origins: [mcp.example]\n"
      "  trusted_proxies: [proxy.example]\n  reserved_connections: 999\n",
      "t.yaml", {"http"}, bad);
  HttpSettings s2;
  parseHttpSettings(config::Node(cfg2.root, "", bad).child("http"), s2);
  ASSERT_EQ(bad.errors().size(), 4u);
  EXPECT_NE(bad.errors()[0].find("allowed_hosts"), std::string::npos) << bad.errors()[0];
}

}  // namespace
}  // namespace mcpdb::transport::http

namespace mcpdb::transport::http {
namespace {

TEST(McpHeaders, ValuesAreTrimmedAndBase64SentinelsDecoded) {
  EXPECT_EQ(decodeMcpHeaderValue("  pg_lookup\t"), "pg_lookup");
  EXPECT_EQ(decodeMcpHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?="),
            "Hello, \xe4\xb8\x96\xe7\x95\x8c");
  EXPECT_EQ(decodeMcpHeaderValue("=?base64?IHBhZGRlZCA=?="), " padded ");
  EXPECT_EQ(decodeMcpHeaderValue("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="), "=?base64?literal?=");
  EXPECT_EQ(decodeMcpHeaderValue("=?base64?"
                                 "?="),
            "");  // split: not a trigraph
  // Malformed base64 (bad length, bad characters, padding in the middle) and bytes outside
  // visible ASCII are refused, never guessed at.
  for (std::string_view bad :
       {"=?base64?abc?=", "=?base64?ab!d?=", "=?base64?a=bc?=", "=?base64?====?=", "caf\xc3\xa9",
        "a\x01"
        "b"}) {
    EXPECT_FALSE(decodeMcpHeaderValue(bad)) << bad;
  }
  // The markers are case-sensitive: anything else is a plain value.
  EXPECT_EQ(decodeMcpHeaderValue("=?BASE64?YQ==?="), "=?BASE64?YQ==?=");
}

TEST(McpHeaders, MustMirrorTheBodyExactlyOnce) {
  const Json call = {{"name", "pg_lookup"}};
  McpHeaders h{{"2026-07-28"}, {"tools/call"}, {"pg_lookup"}};
  EXPECT_FALSE(mcpHeaderMismatch(h, "2026-07-28", "tools/call", call));
  // Whitespace around a value is not part of it.
  EXPECT_FALSE(mcpHeaderMismatch({{" 2026-07-28"}, {"tools/call "}, {" pg_lookup"}}, "2026-07-28",
                                 "tools/call", call));
  EXPECT_TRUE(
      mcpHeaderMismatch({{}, {"tools/call"}, {"pg_lookup"}}, "2026-07-28", "tools/call", call));
  EXPECT_TRUE(mcpHeaderMismatch({{"2026-07-28", "2026-07-28"}, {"tools/call"}, {"pg_lookup"}},
                                "2026-07-28", "tools/call", call));
  EXPECT_TRUE(mcpHeaderMismatch({{"2026-07-28"}, {"Tools/Call"}, {"pg_lookup"}}, "2026-07-28",
                                "tools/call", call));
  EXPECT_TRUE(mcpHeaderMismatch({{"2026-07-28"}, {"tools/call"}, {"pg_Lookup"}}, "2026-07-28",
                                "tools/call", call));
  EXPECT_TRUE(
      mcpHeaderMismatch({{"2026-07-28"}, {"tools/call"}, {}}, "2026-07-28", "tools/call", call));
  EXPECT_TRUE(mcpHeaderMismatch({{"2026-07-28"}, {"tools/call"}, {"pg_lookup"}}, "2026-07-28",
                                "tools/call", Json{{"name", 5}}));
  // resources/read mirrors the URI; other methods need no Mcp-Name and ignore one.
  EXPECT_FALSE(mcpHeaderMismatch({{"2026-07-28"}, {"resources/read"}, {"mcpdb://x/y"}},
                                 "2026-07-28", "resources/read", Json{{"uri", "mcpdb://x/y"}}));
  EXPECT_FALSE(
      mcpHeaderMismatch({{"2026-07-28"}, {"tools/list"}, {}}, "2026-07-28", "tools/list", {}));
  // A long hostile value is echoed bounded.
  const std::string huge(10000, 'x');
  auto m = mcpHeaderMismatch({{"2026-07-28"}, {huge}, {}}, "2026-07-28", "tools/list", {});
  ASSERT_TRUE(m);
  EXPECT_LT(m->size(), 300u);
}

}  // namespace
}  // namespace mcpdb::transport::http
