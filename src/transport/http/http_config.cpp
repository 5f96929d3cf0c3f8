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

void parseHttpSettings(const config::Node& s, HttpSettings& out) {
  if (!s.present()) return;
  if (!s.expectMap({"allowed_hosts",
                    "allowed_origins",
                    "stateless",
                    "max_body_bytes",
                    "max_header_bytes",
                    "idle_timeout_ms",
                    "request_timeout_ms",
                    "session_idle_timeout_ms",
                    "max_sessions",
                    "max_connections",
                    "threads",
                    "tls",
                    "metrics",
                    "auth",
                    "rate_limit",
                    "max_concurrent_calls",
                    "clients",
                    "trusted_proxies",
                    "auth_throttle",
                    "unauthenticated_timeout_ms",
                    "max_unauthenticated_per_source",
                    "reserved_connections",
                    "connection_rate",
                    "max_sessions_per_client",
                    "max_connections_per_client"})) {
    return;
  }
  if (auto v = s.stringList("allowed_hosts")) {
    for (const auto& h : *v) {
      if (h != "*" && !parseAuthority(h)) {
        s.child("allowed_hosts").error("'" + h + "' is not a host name, IP literal or name:port");
      }
    }
    out.allowed_hosts = *v;
  }
  if (auto v = s.stringList("allowed_origins")) {
    for (const auto& o : *v) {
      if (o != "*" && !parseOrigin(o)) {
        s.child("allowed_origins")
            .error("'" + o + "' is not an origin (http:// or https:// host[:port], no path)");
      }
    }
    out.allowed_origins = *v;
  }
  if (auto v = s.boolean("stateless")) out.stateless = *v;
  if (auto v = s.integer("max_body_bytes", 1024, 64LL << 20))
    out.max_body_bytes = static_cast<std::size_t>(*v);
  if (auto v = s.integer("max_header_bytes", 1024, 1 << 20))
    out.max_header_bytes = static_cast<std::size_t>(*v);
  if (auto v = s.integer("idle_timeout_ms", 100, 3600000))
    out.idle_timeout = std::chrono::milliseconds(*v);
  if (auto v = s.integer("request_timeout_ms", 100, 3600000))
    out.request_timeout = std::chrono::milliseconds(*v);
  if (auto v = s.integer("session_idle_timeout_ms", 1000, 7LL * 24 * 3600000LL)) {
    out.session_idle_timeout = std::chrono::milliseconds(*v);
  }
  if (auto v = s.integer("max_sessions", 1, 1000000))
    out.max_sessions = static_cast<std::size_t>(*v);
  if (auto v = s.integer("max_sessions_per_client", 1, 1000000))
    out.max_sessions_per_client = static_cast<std::size_t>(*v);
  if (auto v = s.integer("max_connections", 1, 100000))
    out.max_connections = static_cast<std::size_t>(*v);
  if (auto v = s.integer("threads", 1, 64)) out.threads = static_cast<std::size_t>(*v);
  if (auto v = s.integer("unauthenticated_timeout_ms", 100, 3600000))
    out.unauthenticated_timeout = std::chrono::milliseconds(*v);
  if (auto v = s.integer("max_unauthenticated_per_source", 1, 100000))
    out.max_unauthenticated_per_source = static_cast<std::size_t>(*v);
  if (auto v = s.integer("max_connections_per_client", 1, 100000)) {
    if (static_cast<std::size_t>(*v) > out.max_connections) {
      s.child("max_connections_per_client").error("must be at most max_connections");
    } else {
      out.max_connections_per_client = static_cast<std::size_t>(*v);
    }
  }
  if (auto v = s.integer("reserved_connections", 0, 100000)) {
    if (static_cast<std::size_t>(*v) >= out.max_connections) {
      s.child("reserved_connections").error("must be less than max_connections");
    } else {
      out.reserved_connections = static_cast<std::size_t>(*v);
    }
  }
  const config::Node cr = s.child("connection_rate");
  if (cr.present() && cr.expectMap({"rate", "burst"})) {
    auto rate = cr.number("rate", true);
    auto burst = cr.number("burst");
    if (rate && !(*rate > 0)) cr.child("rate").error("must be > 0 (new connections per second)");
    if (burst && !(*burst >= 1)) cr.child("burst").error("must be >= 1");
    if (rate && *rate > 0) {
      out.connection_rate = *rate;
      out.connection_burst = burst && *burst >= 1 ? *burst : std::max(1.0, 2 * *rate);
    }
  }

  if (auto v = s.stringList("trusted_proxies")) {
    for (const auto& p : *v) {
      if (!validProxyEntry(p)) {
        s.child("trusted_proxies").error("'" + p + "' is not an IP address or CIDR block");
      }
    }
    out.trusted_proxies = *v;
  }
  const config::Node at = s.child("auth_throttle");
  if (at.present() &&
      at.expectMap({"free_failures", "base_backoff_ms", "max_backoff_ms", "max_sources"})) {
    auto& t = out.auth_throttle;
    if (auto v = at.integer("free_failures", 1, 1000))
      t.free_failures = static_cast<std::size_t>(*v);
    if (auto v = at.integer("base_backoff_ms", 10, 3600000))
      t.base_backoff = std::chrono::milliseconds(*v);
    if (auto v = at.integer("max_backoff_ms", 10, 24LL * 3600000LL))
      t.max_backoff = std::chrono::milliseconds(*v);
    if (auto v = at.integer("max_sources", 16, 10000000))
      t.max_sources = static_cast<std::size_t>(*v);
    if (t.max_backoff < t.base_backoff)
      at.child("max_backoff_ms").error("must be >= base_backoff_ms");
  }
  const config::Node tls = s.child("tls");
  if (tls.present() &&
      tls.expectMap({"cert_file", "key_file", "min_version", "ciphers", "ciphersuites"})) {
    auto cert = tls.string("cert_file", true);
    auto key = tls.string("key_file", true);
    if (cert && key) {
      out.tls.cert_file = *cert;
      out.tls.key_file = *key;
    }
    if (auto v = tls.choice("min_version", {"1.2", "1.3"})) out.tls.min_version = *v;
    // Checked by OpenSSL when the server starts (an unknown or empty list refuses to start).
    if (auto v = tls.string("ciphers")) out.tls.ciphers = *v;
    if (auto v = tls.string("ciphersuites")) out.tls.ciphersuites = *v;
  }
  const config::Node m = s.child("metrics");
  if (m.present() && m.expectMap({"enabled", "path", "listen", "access"})) {
    if (auto v = m.boolean("enabled")) out.metrics.enabled = *v;
    if (auto v = m.string("path")) {
      if (v->empty() || v->front() != '/' || *v == "/mcp") {
        m.child("path").error("must start with / and differ from /mcp");
      } else {
        out.metrics.path = *v;
      }
    }
    if (auto v = m.string("listen")) {
      if (auto a = parseListenAddress(*v); !a) {
        m.child("listen").error(a.error().message);
      } else {
        out.metrics.listen = *v;
      }
    }
    if (auto v = m.choice("access", {"loopback", "key"})) out.metrics.require_key = *v == "key";
  }
  auth::parseAuthSettings(s, out.auth);
}

}  // namespace mcpdb::transport::http
