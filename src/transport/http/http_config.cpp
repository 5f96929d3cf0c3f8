#include "transport/http/http_config.hpp"

#include <charconv>

namespace mcpdb::transport::http {
namespace {

bool isLoopbackHost(std::string_view h) {
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

}  // namespace

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
  a.loopback = isLoopbackHost(a.host);
  return a;
}

void parseHttpSettings(const config::Node& s, HttpSettings& out) {
  if (!s.present()) return;
  if (!s.expectMap({"allowed_hosts", "allowed_origins", "stateless", "max_body_bytes",
                    "max_header_bytes", "idle_timeout_ms", "request_timeout_ms",
                    "session_idle_timeout_ms", "max_sessions", "max_connections", "threads", "tls",
                    "metrics", "auth", "rate_limit", "max_concurrent_calls", "clients"})) {
    return;
  }
  if (auto v = s.stringList("allowed_hosts")) out.allowed_hosts = *v;
  if (auto v = s.stringList("allowed_origins")) out.allowed_origins = *v;
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
  if (auto v = s.integer("max_connections", 1, 100000))
    out.max_connections = static_cast<std::size_t>(*v);
  if (auto v = s.integer("threads", 1, 64)) out.threads = static_cast<std::size_t>(*v);

  const config::Node tls = s.child("tls");
  if (tls.present() && tls.expectMap({"cert_file", "key_file"})) {
    auto cert = tls.string("cert_file", true);
    auto key = tls.string("key_file", true);
    if (cert && key) {
      out.tls.cert_file = *cert;
      out.tls.key_file = *key;
    }
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
