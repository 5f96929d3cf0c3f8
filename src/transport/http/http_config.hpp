#pragma once
// The `http:` config section and the listen address of `serve --http ADDR:PORT`.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/clients.hpp"
#include "common/result.hpp"
#include "config/node.hpp"

namespace mcpdb::transport::http {

struct ListenAddress {
  std::string host;  // IP literal or name, without brackets
  std::uint16_t port = 0;
  bool loopback = false;        // 127.0.0.0/8, ::1 or localhost
  std::string display() const;  // host:port with brackets for IPv6
};

// "ADDR:PORT", "[V6]:PORT" or ":PORT"/"PORT" (loopback). Port 0 picks a free port.
Result<ListenAddress> parseListenAddress(std::string_view text);

struct TlsSettings {
  std::string cert_file;  // PEM certificate chain
  std::string key_file;   // PEM private key
  bool enabled() const { return !cert_file.empty(); }
};

struct MetricsSettings {
  bool enabled = true;
  std::string path = "/metrics";
  std::optional<std::string> listen;  // a separate ADDR:PORT; same listener when absent
  bool require_key = false;           // false: loopback peers only; true: any configured client key
};

struct HttpSettings {
  std::vector<std::string>
      allowed_hosts;  // Host header names (optionally name:port); defaults by bind
  std::vector<std::string>
      allowed_origins;     // exact scheme://host[:port]; defaults to loopback origins
  bool stateless = false;  // no Mcp-Session-Id; every POST stands alone
  std::size_t max_body_bytes = std::size_t{1024} * 1024;
  std::size_t max_header_bytes = std::size_t{16} * 1024;
  std::chrono::milliseconds idle_timeout{30000};  // wait for (and receipt of) a request's headers
  std::chrono::milliseconds request_timeout{30000};  // receipt of a request's body
  std::chrono::milliseconds session_idle_timeout{30 * 60 * 1000};
  std::size_t max_sessions = 1000;
  std::size_t max_connections = 256;
  std::size_t threads = 2;
  TlsSettings tls;
  MetricsSettings metrics;
  auth::AuthSettings auth;
};

// Parses the whole section (absent: defaults). Problems go to the node's diagnostics.
void parseHttpSettings(const config::Node& section, HttpSettings& out);

}  // namespace mcpdb::transport::http
