#pragma once
// The `http:` config section and the listen address of `serve --http ADDR:PORT`.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/auth_throttle.hpp"
#include "auth/clients.hpp"
#include "auth/shared_limits.hpp"
#include "common/result.hpp"
#include "config/section.hpp"

namespace mcpdb::transport::http {

struct ListenAddress {
  std::string host;  // IP literal or name, without brackets
  std::uint16_t port = 0;
  bool loopback = false;        // 127.0.0.0/8, ::1 or localhost
  std::string display() const;  // host:port with brackets for IPv6
};

// "ADDR:PORT", "[V6]:PORT" or ":PORT"/"PORT" (loopback). Port 0 picks a free port.
Result<ListenAddress> parseListenAddress(std::string_view text);

// TLS 1.2 suites of the default policy: forward secret (ECDHE) and AEAD (AES-GCM, ChaCha20-
// Poly1305) only; no CBC, no RSA key exchange, no DHE (Mozilla "intermediate" without DHE).
inline constexpr std::string_view kDefaultTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
// TLS 1.3 suites (all of them are forward secret and AEAD): OpenSSL's default list.
inline constexpr std::string_view kDefaultTls13Ciphersuites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

struct TlsSettings {
  std::string cert_file;                                // PEM certificate chain
  std::string key_file;                                 // PEM private key
  std::string min_version = "1.2";                      // "1.2" or "1.3"
  std::string ciphers{kDefaultTls12Ciphers};            // TLS 1.2 (OpenSSL cipher list)
  std::string ciphersuites{kDefaultTls13Ciphersuites};  // TLS 1.3
  bool enabled() const { return !cert_file.empty(); }
};

struct MetricsSettings {
  bool enabled = true;
  std::string path = "/metrics";
  std::optional<std::string> listen;  // a separate ADDR:PORT; same listener when absent
  bool require_key = false;           // false: loopback peers only; true: any configured client key
};

struct ConnectionRate {
  double rate = 100;   // new connections per second per source
  double burst = 200;  // the bucket's size
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
  // Sessions one client (key) may hold; at the cap its least recently used idle session is ended
  // to make room, and a new one is refused (429) only when all of them have calls in flight.
  std::size_t max_sessions_per_client = 64;
  std::size_t max_connections = 256;
  // Connections without a valid key yet (issue #18): their header-read timeout, their cap per
  // source (past it the source's oldest is closed), the slots of max_connections they may never
  // take (default: a quarter), and new connections per second per source (token bucket).
  std::chrono::milliseconds unauthenticated_timeout{5000};
  std::size_t max_unauthenticated_per_source = 32;
  std::optional<std::size_t> reserved_connections;  // default max_connections / 4
  ConnectionRate connection_rate;
  std::size_t reservedConnections() const {
    return reserved_connections.value_or(max_connections / 4);
  }
  // Authenticated connections one client (key) may hold (issue #28; default: half of
  // max_connections, at least 1). At the cap, and when every slot is taken, idle connections of
  // the key holding the most are closed to make room (admission.hpp).
  std::optional<std::size_t> max_connections_per_client;
  std::size_t connectionsPerClient() const {
    return max_connections_per_client.value_or(std::max<std::size_t>(1, max_connections / 2));
  }
  std::size_t threads = 2;
  // Proxies (IP literals or CIDR blocks) whose X-Forwarded-For names the client; empty: the
  // header is never read.
  std::vector<std::string> trusted_proxies;
  auth::AuthThrottleSettings auth_throttle;  // wrong keys per source (`auth_throttle:`)
  // Rate limits and the failed-key count shared by replicas through one store (`shared_limits:`);
  // absent: every limit is per process.
  std::optional<auth::SharedLimitsSettings> shared_limits;
  TlsSettings tls;
  MetricsSettings metrics;
  auth::AuthSettings auth;
};

// The section's one declaration: parsing, JSON Schema, reference.
const config::Section<HttpSettings>& httpSection();
// Parses the whole section (absent: defaults). Problems go to the node's diagnostics.
void parseHttpSettings(const config::Node& section, HttpSettings& out);

}  // namespace mcpdb::transport::http
