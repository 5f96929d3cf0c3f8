#pragma once
// MCP Streamable HTTP transport (protocol 2025-11-25) on Boost.Beast: one /mcp endpoint (POST,
// GET: a session's stream of list changes, DELETE), optional /metrics, /healthz and /readyz,
// TLS 1.2+, per-client API keys and rate limits. This header includes no Boost: the Beast
// dependency lives in this folder's sources (server_impl.hpp, connection.hpp and its steps).
//
// POST response policy: a JSON body (application/json) for every request, except a tools/call
// that carries a progress token from a client that accepts text/event-stream: that one is
// answered as an SSE stream (progress notifications, then the response).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/result.hpp"
#include "observe/audit_log.hpp"
#include "observe/metrics.hpp"
#include "observe/readiness.hpp"
#include "protocol/session.hpp"
#include "transport/http/http_config.hpp"

namespace mcpdb::transport::http {

class HttpServer {
 public:
  // `audit` and `metrics` may be null.
  HttpServer(protocol::ServerCore& core, HttpSettings settings, ListenAddress listen,
             std::shared_ptr<observe::AuditLog> audit, std::shared_ptr<observe::Metrics> metrics);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // What /readyz reports (before start(); none: ready, no sources). /healthz needs nothing.
  void setReadiness(std::shared_ptr<observe::Readiness> readiness);

  // Loads TLS files, binds and starts the I/O threads.
  Status start();
  std::uint16_t port() const;
  std::optional<std::uint16_t> metricsPort() const;
  bool tls() const;

  // Replaces the client table and rate settings (SIGHUP); open sessions of clients that remain
  // keep working, sessions of removed clients stop authenticating.
  void updateAuth(auth::AuthSettings auth);
  // A config reload's client table (as updateAuth), ending the sessions it no longer admits:
  // those of a key that is gone or now has another digest (revoked: their calls are cancelled and
  // their next request is told the session does not exist), and those of a key whose scope lost
  // a tool of `tools` (closed; calls in flight finish). Returns how many sessions ended.
  std::size_t applyClients(auth::AuthSettings auth, const protocol::ToolRegistry& tools);
  // Tells every open session (its listen streams) that the tool and/or resource list changed.
  void notifyListChanged(bool tools, bool resources);

  // Stops accepting, answers new requests 503, waits up to `grace` for in-flight requests, cancels
  // what is left, then stops the I/O threads. Call ServerCore's pool shutdown after this and
  // before destroying the server.
  void shutdown(std::chrono::milliseconds grace);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpdb::transport::http
