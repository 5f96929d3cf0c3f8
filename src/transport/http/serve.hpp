#pragma once
// `serve --http`: starts the HTTP server on a ServerCore and runs it until SIGINT/SIGTERM,
// reloading client keys on SIGHUP. Shared by the application and the integration-test server.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "auth/clients.hpp"
#include "observe/audit_log.hpp"
#include "observe/metrics.hpp"
#include "observe/readiness.hpp"
#include "protocol/session.hpp"
#include "transport/http/http_config.hpp"
#include "transport/http/http_server.hpp"

namespace mcpdb::transport::http {

struct ServeParams {
  ListenAddress listen;
  bool allow_insecure_http = false;  // plain HTTP on a non-loopback address
  HttpSettings settings;
  std::chrono::milliseconds drain{10000};
  std::shared_ptr<observe::AuditLog> audit;
  std::shared_ptr<observe::Metrics> metrics;
  std::shared_ptr<observe::Readiness> readiness;  // what /readyz reports; null: no sources
  // Re-reads the client list (SIGHUP); nullopt keeps the current one (errors already logged).
  // Used when on_reload is not set (the test server).
  std::function<std::optional<auth::AuthSettings>()> reload;
  // SIGHUP, after the audit log is reopened: asks for a whole-config reload (app/reload.hpp);
  // returns at once.
  std::function<void()> on_reload;
  // Called with the server once it listens, and with nullptr before it stops: a config reload
  // applies clients, sessions and readiness through it.
  std::function<void(HttpServer*)> attach;
};

// Exit codes as documented for the CLI: 0 ok, 1 runtime (bind), 2 usage (insecure plain HTTP),
// 3 configuration (TLS files, auth mode).
int serveHttp(protocol::ServerCore& core, ServeParams params);

// Parses just the `http:` section of a config file again (SIGHUP); logs problems.
std::optional<auth::AuthSettings> reloadAuthFromFile(
    const std::string& path, const std::vector<std::string>& extra_sections);

}  // namespace mcpdb::transport::http
