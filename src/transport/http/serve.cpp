#include "transport/http/serve.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>

#include "common/signals.hpp"
#include "config/config.hpp"
#include "transport/http/http_server.hpp"

namespace mcpdb::transport::http {

std::optional<auth::AuthSettings> reloadAuthFromFile(
    const std::string& path, const std::vector<std::string>& extra_sections) {
  config::Diagnostics diag(path);
  config::Config cfg = config::loadConfigFile(path, extra_sections, diag);
  HttpSettings hs;
  if (diag.ok()) parseHttpSettings(config::Node(cfg.root, "", diag).child("http"), hs);
  if (!diag.ok()) {
    spdlog::error("reload: the config is invalid, keeping the current clients ({} problem(s))",
                  diag.errors().size());
    for (const auto& e : diag.errors()) spdlog::error("reload: {}", e);
    return std::nullopt;
  }
  return hs.auth;
}

int serveHttp(protocol::ServerCore& core, ServeParams p) {
  const bool tls = p.settings.tls.enabled();
  if (!p.listen.loopback && !tls) {
    if (!p.allow_insecure_http) {
      spdlog::error(
          "refusing plain HTTP on the non-loopback address {}: configure http.tls (cert_file, "
          "key_file) or pass "
          "--allow-insecure-http",
          p.listen.display());
      return 2;
    }
    spdlog::warn(
        "serving PLAIN HTTP on non-loopback address {}: API keys and results cross the network "
        "unencrypted",
        p.listen.display());
  }
  if (p.settings.auth.required && p.settings.auth.clients.empty()) {
    spdlog::warn(
        "http: no clients are configured (http.clients): every request will be refused with 401");
  }
  if (!p.listen.loopback && p.settings.allowed_hosts.empty()) {
    spdlog::warn(
        "http.allowed_hosts is not set: only loopback names and {} are accepted in the Host header",
        p.listen.host);
  }
  if (p.metrics) {
    protocol::WorkerPool& pool = core.pool();
    p.metrics->addGauge("mcpdb_worker_threads", "Worker threads that run tool calls.",
                        [&pool] { return static_cast<double>(pool.threads()); });
    p.metrics->addGauge("mcpdb_worker_busy", "Worker threads running a tool call now.",
                        [&pool] { return static_cast<double>(pool.busy()); });
    p.metrics->addGauge("mcpdb_worker_queued", "Tool calls waiting for a free worker.",
                        [&pool] { return static_cast<double>(pool.queued()); });
  }
  // Before the server listens and says so: a supervisor (or a test) that sends SIGTERM as soon as
  // it reads "listening" must get the drain, not the default action (the process killed, 143).
  const int signal_fd = installSignalPipe();
  HttpServer server(core, p.settings, p.listen, p.audit, p.metrics);
  server.setReadiness(std::move(p.readiness));  // the server's only: a reload replaces it
  if (auto st = server.start(); !st) {
    spdlog::error("http: {}", st.error().message);
    return st.error().code == Code::FailedPrecondition ? 3 : 1;
  }
  ListenAddress shown = p.listen;
  shown.port = server.port();
  spdlog::info("listening on {}://{}/mcp ({} mode, {} client(s))", tls ? "https" : "http",
               shown.display(), p.settings.stateless ? "stateless" : "session",
               p.settings.auth.clients.size());
  if (auto mp = server.metricsPort()) spdlog::info("metrics on port {}", *mp);
  if (p.attach) p.attach(&server);

  for (;;) {
    pollfd pfd{signal_fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, 1000);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    char sig = 0;
    bool terminate = false;
    while (::read(signal_fd, &sig, 1) == 1) {
      if (sig == static_cast<char>(SignalKind::Reload)) {
        if (p.audit) p.audit->reopen();
        if (p.on_reload) {
          p.on_reload();
        } else if (p.reload) {
          if (auto a = p.reload()) {
            spdlog::info("reload: {} client(s) configured", a->clients.size());
            server.updateAuth(std::move(*a));
          }
        }
      } else {
        terminate = true;
      }
    }
    if (terminate) break;
  }
  if (p.attach) p.attach(nullptr);  // no reload reaches the server from here on
  spdlog::info("stopping: draining in-flight requests (up to {} ms)", p.drain.count());
  server.shutdown(p.drain);
  core.pool().shutdown();
  spdlog::info("stopped");
  return 0;
}

}  // namespace mcpdb::transport::http
