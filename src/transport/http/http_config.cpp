#include "transport/http/http_config.hpp"

#include <algorithm>
#include <charconv>

#include "transport/http/policy.hpp"

namespace mcpdb::transport::http {

std::string ListenAddress::display() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

Result<ListenAddress> parseListenAddress(std::string_view text) {
  ListenAddress a;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return makeError(Code::InvalidArgument, "expected [IPV6]:PORT");
    }
    a.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      a.host = "127.0.0.1";
      port_text = text;
    } else {
      a.host = std::string(text.substr(0, colon));
      if (a.host.find(':') != std::string::npos)
        return makeError(Code::InvalidArgument, "write IPv6 addresses as [ADDR]:PORT");
      if (a.host.empty()) a.host = "127.0.0.1";
      port_text = text.substr(colon + 1);
    }
  }
  unsigned port = 0;
  const auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() ||
      port > 65535) {
    return makeError(Code::InvalidArgument, "expected ADDR:PORT with a port of 0-65535");
  }
  if (a.host.empty() || a.host.size() > 253)
    return makeError(Code::InvalidArgument, "expected ADDR:PORT");
  a.port = static_cast<std::uint16_t>(port);
  a.loopback = isLoopbackName(a.host);
  return a;
}

namespace {

std::string hostProblem(std::string_view h) {
  return h == "*" || parseAuthority(h)
             ? ""
             : "'" + std::string(h) + "' is not a host name, IP literal or name:port";
}

std::string originProblem(std::string_view o) {
  return o == "*" || parseOrigin(o) ? ""
                                    : "'" + std::string(o) +
                                          "' is not an origin (http:// or https:// host[:port], "
                                          "no path)";
}

std::string proxyProblem(std::string_view p) {
  return validProxyEntry(std::string(p))
             ? ""
             : "'" + std::string(p) + "' is not an IP address or CIDR block";
}

std::string listenProblem(std::string_view l) {
  auto a = parseListenAddress(l);
  return a ? "" : a.error().message;
}

const config::Section<ConnectionRate>& connectionRateSection() {
  static const auto s =
      config::Section<ConnectionRate>("new connections per second per source (a token bucket)")
          .number("rate", &ConnectionRate::rate, 0, 1e6,
                  "new connections per second from one source (above 0)", config::kRequired)
          .number("burst", &ConnectionRate::burst, 1, 1e9,
                  "new connections one source may open at once")
          .byDefault("twice the rate (at least 1)")
          .check([](ConnectionRate& c, const config::Node& node) {
            if (!(c.rate > 0)) {
              node.child("rate").error("must be > 0 (new connections per second)");
              return false;
            }
            if (!node.child("burst").present()) c.burst = std::max(1.0, 2 * c.rate);
            return true;
          });
  return s;
}

const config::Section<auth::AuthThrottleSettings>& authThrottleSection() {
  using A = auth::AuthThrottleSettings;
  static const auto s =
      config::Section<A>("the backoff of a source that sends wrong keys")
          .integer("free_failures", &A::free_failures, 1, 1000,
                   "wrong keys a source may send before it must wait")
          .millis("base_backoff_ms", &A::base_backoff, 10, 3600000,
                  "the first wait; it doubles with each further wrong key")
          .millis("max_backoff_ms", &A::max_backoff, 10, 24LL * 3600000LL, "the longest wait")
          .integer("max_sources", &A::max_sources, 16, 10000000,
                   "sources tracked at once (the least recently seen are forgotten first)")
          .check([](A& t, const config::Node& node) {
            if (t.max_backoff >= t.base_backoff) return true;
            node.child("max_backoff_ms").error("must be >= base_backoff_ms");
            return false;
          });
  return s;
}

const config::Section<TlsSettings>& tlsSection() {
  static const auto s =
      config::Section<TlsSettings>("TLS on the MCP listener")
          .string("cert_file", &TlsSettings::cert_file, "the PEM certificate chain",
                  config::kRequired)
          .string("key_file", &TlsSettings::key_file,
                  "the PEM private key (readable by the server's user only)", config::kRequired)
          .choice("min_version", &TlsSettings::min_version, {{"1.2", "1.2"}, {"1.3", "1.3"}},
                  "the oldest TLS version accepted")
          // Checked by OpenSSL when the server starts (an unknown or empty list refuses to start).
          .string("ciphers", &TlsSettings::ciphers,
                  "TLS 1.2 cipher suites (an OpenSSL cipher list): forward secret AEAD only by "
                  "default")
          .string("ciphersuites", &TlsSettings::ciphersuites,
                  "TLS 1.3 cipher suites (an OpenSSL list)");
  return s;
}

const config::Section<MetricsSettings>& metricsSection() {
  using M = MetricsSettings;
  static const auto s =
      config::Section<M>("the Prometheus metrics endpoint")
          .boolean("enabled", &M::enabled, "serve the metrics")
          .string("path", &M::path, "the metrics path", config::kOptional,
                  [](std::string_view p) {
                    return !p.empty() && p.front() == '/' && p != "/mcp"
                               ? ""
                               : "must start with / and differ from /mcp";
                  })
          .string("listen", &M::listen,
                  "a listener of its own (ADDR:PORT) for the operations endpoints, apart from "
                  "MCP's",
                  config::kOptional, listenProblem)
          .byDefault("the MCP listener")
          .example("127.0.0.1:9464")
          .choice("access", &M::require_key, {{"loopback", false}, {"key", true}},
                  "who may read them: `loopback` peers only, or any configured client's `key`");
  return s;
}

}  // namespace

const config::Section<HttpSettings>& httpSection() {
  using H = HttpSettings;
  static const auto s =
      config::Section<H>("Streamable HTTP (`serve --http ADDR:PORT`)")
          .strings("allowed_hosts", &H::allowed_hosts,
                   "Host header values accepted (names, IP literals, name:port; `*` any), "
                   "against DNS rebinding",
                   config::kOptional, hostProblem)
          .byDefault("the loopback names when bound to loopback, else the bound address")
          .strings("allowed_origins", &H::allowed_origins,
                   "Origin header values accepted (scheme://host[:port]; `*` any), against "
                   "browser pages",
                   config::kOptional, originProblem)
          .byDefault("the loopback origins")
          .boolean("stateless", &H::stateless,
                   "no Mcp-Session-Id: every POST stands alone (2025-11-25 clients too)")
          .integer("max_body_bytes", &H::max_body_bytes, 1024, 64LL << 20,
                   "the largest request body (server.max_message_bytes caps it too)")
          .integer("max_header_bytes", &H::max_header_bytes, 1024, 1 << 20,
                   "the largest request head")
          .millis("idle_timeout_ms", &H::idle_timeout, 100, 3600000,
                  "how long a connection may wait for (and send) a request's head")
          .millis("request_timeout_ms", &H::request_timeout, 100, 3600000,
                  "how long a request's body may take to arrive")
          .millis("session_idle_timeout_ms", &H::session_idle_timeout, 1000, 7LL * 24 * 3600000LL,
                  "a session without requests this long is ended")
          .integer("max_sessions", &H::max_sessions, 1, 1000000, "sessions at once")
          .integer("max_sessions_per_client", &H::max_sessions_per_client, 1, 1000000,
                   "sessions one client (key) may hold; at the cap its least recently used idle "
                   "one is ended")
          .integer("max_connections", &H::max_connections, 1, 100000, "connections at once")
          .integer("max_connections_per_client", &H::max_connections_per_client, 1, 100000,
                   "connections one client (key) may hold (at most max_connections)")
          .byDefault("half of max_connections (at least 1)")
          .integer("reserved_connections", &H::reserved_connections, 0, 100000,
                   "slots of max_connections that connections without a valid key yet may never "
                   "take (less than max_connections)")
          .byDefault("a quarter of max_connections")
          .millis("unauthenticated_timeout_ms", &H::unauthenticated_timeout, 100, 3600000,
                  "how long a connection without a valid key may take to send its head")
          .integer("max_unauthenticated_per_source", &H::max_unauthenticated_per_source, 1, 100000,
                   "connections without a valid key one source may hold (past it its oldest is "
                   "closed)")
          .object("connection_rate", &H::connection_rate, connectionRateSection(),
                  "new connections per second per source")
          .integer("threads", &H::threads, 1, 64, "threads that read and write connections")
          .strings("trusted_proxies", &H::trusted_proxies,
                   "proxies (IP addresses or CIDR blocks) whose X-Forwarded-For names the "
                   "client; empty: the header is never read",
                   config::kOptional, proxyProblem)
          .object("auth_throttle", &H::auth_throttle, authThrottleSection(),
                  "the backoff of a source that sends wrong keys")
          .object("shared_limits", &H::shared_limits, auth::sharedLimitsSection(),
                  "rate limits and failed-key backoff shared by several replicas through one "
                  "Redis or Valkey store")
          .byDefault("none: every limit is per replica")
          .object("tls", &H::tls, tlsSection(),
                  "TLS (required off loopback, unless "
                  "--allow-insecure-http)")
          .object("metrics", &H::metrics, metricsSection(), "the metrics endpoint")
          .inlined(&H::auth, auth::authSection())
          .check([](H& h, const config::Node& node) {
            bool ok = true;
            if (h.max_connections_per_client && *h.max_connections_per_client > h.max_connections) {
              node.child("max_connections_per_client").error("must be at most max_connections");
              h.max_connections_per_client.reset();
              ok = false;
            }
            if (h.reserved_connections && *h.reserved_connections >= h.max_connections) {
              node.child("reserved_connections").error("must be less than max_connections");
              h.reserved_connections.reset();
              ok = false;
            }
            return ok;
          })
          .exampleYaml(
              "http:\n  allowed_hosts: [mcp.internal.example]\n  tls:\n    cert_file: "
              "/etc/mcp-dbserver/tls/cert.pem\n    key_file: /etc/mcp-dbserver/tls/key.pem\n  "
              "clients:\n    - name: reporting-agent\n      key_sha256: "
              "\"d60646a7c5f5e28ebce6974030d9e5d2246e9a354edfe8c7ec4d6ad749a41e26\"\n      "
              "scope: postgres\n");
  return s;
}

void parseHttpSettings(const config::Node& s, HttpSettings& out) {
  if (s.present()) (void)httpSection().parse(s, out);
}

}  // namespace mcpdb::transport::http
