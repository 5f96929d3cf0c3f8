// `serve`: stdio or Streamable HTTP, with the start-up checks, the audit log and the preload.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "app/app.hpp"
#include "app/checks.hpp"
#include "app/logging.hpp"
#include "app/readiness.hpp"
#include "app/reload.hpp"
#include "app/server_options.hpp"
#include "app/surface.hpp"
#include "common/signals.hpp"
#include "protocol/session.hpp"
#include "transport/http/serve.hpp"
#include "transport/stdio/stdio_transport.hpp"

namespace mcpdb::app {
namespace {

// The start-up self-check: the credential check of every engine the config uses and, as doctor
// does, the proof that each tool can run (a missing table, column or privilege is logged with the
// object it names and its fix). `tools_unusable` counts the tools that cannot run.
struct SelfCheckResult {
  Verdict verdict = Verdict::Inconclusive;
  std::size_t tools_unusable = 0;
};

// One log line per finding worth the operator's attention; counts the unusable tools.
void logFindings(const EngineReport& r, SelfCheckResult& result) {
  for (const auto& f : r.findings) {
    std::string fix = f.fix.empty() ? "" : " (fix: " + f.fix + ")";
    std::replace(fix.begin(), fix.end(), '\n', ' ');  // one log line per finding
    switch (f.severity) {
      case Severity::Unusable: ++result.tools_unusable; [[fallthrough]];
      case Severity::Violation:
      case Severity::Inconclusive:
      case Severity::Warning:
        spdlog::warn("self-check {} [{}]: {}{}", f.check, severityName(f.severity), f.message, fix);
        break;
      default: spdlog::debug("self-check {}: {}", f.check, f.message); break;
    }
  }
}

SelfCheckResult selfCheck(Assembly& a) {
  SelfCheckResult result;
  // Each engine's findings are logged as soon as it is checked: a server stopped before the last
  // engine still leaves what was found in the log.
  const auto reports = checkEngines(a, /*check_tools=*/true,
                                    [&result](const EngineReport& r) { logFindings(r, result); });
  if (a.stopping.stop_requested()) {
    spdlog::info(
        "self-check: stopped before it was complete (the server is stopping, or a reload replaced "
        "its config)");
    return {};
  }
  result.verdict = verdictOf(reports);
  if (result.verdict == Verdict::Inconclusive) {
    spdlog::warn("self-check inconclusive: nothing is proved about the credentials (see above)");
  }
  if (result.tools_unusable > 0) {
    spdlog::warn(
        "self-check: {} tool(s) cannot run as the configured principal (see [unusable] "
        "above; `mcp-dbserver doctor` reports the same)",
        result.tools_unusable);
  }
  publishSelfCheck(a, result.verdict);  // readiness (/readyz): the one hook of app/readiness.hpp
  return result;
}

// The verdict on the credentials (the tools' check is logged: selfCheck).
Verdict runSelfCheck(Assembly& a) {
  return selfCheck(a).verdict;
}

// Runs `task` on a background thread after `delay`, unless destroyed first (then it does not
// start; a task already running is asked to stop through `stop`, then waited for). For start-up
// work that must not take the CPU from the first answers (docs/BENCHMARKS.md "Startup profile");
// see kPreloadDelay, kSelfCheckDelay.
class DelayedTask {
 public:
  DelayedTask(std::function<void()> task, std::chrono::milliseconds delay,
              std::stop_source stop = std::stop_source(std::nostopstate))
      : stop_(std::move(stop)), thread_([this, task = std::move(task), delay] {
          std::unique_lock<std::mutex> lock(mu_);
          if (cv_.wait_for(lock, delay, [this] { return stopping_; })) return;
          lock.unlock();
          task();
        }) {}
  DelayedTask(const DelayedTask&) = delete;
  DelayedTask& operator=(const DelayedTask&) = delete;
  ~DelayedTask() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (stop_.stop_possible()) stop_.request_stop();
    thread_.join();
  }

 private:
  std::stop_source stop_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// The embedding model preload: loading it right away (OpenBLAS, 32 MB of weights, the check
// sentence) competed for the CPU with the initialize answer and the self-check, and took the
// process from ~18 MB to ~55 MB before a client had listed the tools. A semantic search before
// the delay loads it itself.
constexpr std::chrono::milliseconds kPreloadDelay{1000};

// The `warn`-mode self-check: connecting right away (loading libpq and its dependencies, SCRAM's
// 4096 PBKDF2 rounds, the privilege queries) took the CPU from the initialize answer, 11.4 against
// 8.1 ms median cold start with it off, on 2 shared cores. A server stopped before the delay
// (having answered little more than initialize) skips it.
constexpr std::chrono::milliseconds kSelfCheckDelay{200};

// Startup logs and the self-check, by config: `refuse` checks before serving (and refuses to
// start, exit 4, on a violation, an inconclusive check or a tool that cannot run); `warn` (default)
// checks on `background`, kSelfCheckDelay after the server starts answering, so `initialize` does
// not wait for database round trips nor share the CPU with them; `off` skips it.
// `who` starts the refusal's log line ("refusing to start", or a reload's "refusing the new
// config").
int startupChecks(Assembly& a, std::optional<DelayedTask>& background,
                  std::string_view who = "refusing to start") {
  for (const auto& w : a.warnings) spdlog::warn("config: {}", w);
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    if (a.enabled[i]) {
      spdlog::info("engine {} enabled", a.modules[i]->name());
    } else {
      spdlog::info("engine {} disabled: {}", a.modules[i]->name(), a.modules[i]->enableHint());
    }
  }
  switch (a.config.server.self_check) {
    case config::SelfCheckMode::Off: break;
    case config::SelfCheckMode::Refuse: {
      const SelfCheckResult checked = selfCheck(a);
      switch (checked.verdict) {
        case Verdict::Violation:
          spdlog::error("{}: the credentials can write (server.self_check: refuse)", who);
          return kExitSelfCheck;
        case Verdict::Inconclusive:
          spdlog::error(
              "{}: the self-check could not prove the credentials read-only "
              "(server.self_check: refuse)",
              who);
          return kExitSelfCheck;
        case Verdict::ProvedReadOnly: break;
      }
      if (checked.tools_unusable > 0) {
        spdlog::error(
            "{}: {} tool(s) cannot run as the configured principal "
            "(server.self_check: refuse)",
            who, checked.tools_unusable);
        return kExitSelfCheck;
      }
      break;
    }
    case config::SelfCheckMode::Warn:
      // Stopped with the server: a database that never answers does not hold the exit for the
      // check's connection timeouts.
      background.emplace([&a] { (void)runSelfCheck(a); }, kSelfCheckDelay, a.stopping);
      break;
  }
  return kExitOk;
}

// assemble() for the serving paths: config problems go to stderr. The log is set up first in the
// command line's format (so start-up lines are in it), then in the config's when only it has one.
std::optional<Assembly> assembleForServing(const AppOptions& options, const Env& env) {
  const auto cli_format = options.log_format ? parseLogFormat(*options.log_format) : std::nullopt;
  setupLogging(env, cli_format.value_or(LogFormat::Text));
  std::ostringstream err;
  auto a = assemble(options, env, /*all_engines=*/false, err);
  if (!a) {
    std::cerr << err.str();
    return a;
  }
  if (refuseUnservable(*a, env, "refusing to start", std::cerr)) return std::nullopt;
  if (!cli_format && !a->config.server.log_format.empty()) {
    setupLogging(env, parseLogFormat(a->config.server.log_format).value_or(LogFormat::Text));
  }
  return a;
}

// The tracer of `telemetry:` on `core` (none when it is off); false when it cannot be made (a
// header's variable unset: logged, naming the variable, never a value).
bool startTracing(const Assembly& a, const Env& env, const AppOptions& options,
                  protocol::ServerCore& core) {
  auto tracer = makeTracer(a.telemetry, env, options.version);
  if (!tracer) {
    spdlog::error("refusing to start: {}", tracer.error().message);
    return false;
  }
  if (*tracer) {
    spdlog::info("telemetry: exporting traces to {} (sampling ratio {})",
                 redactUrl(a.telemetry.otlp_endpoint), a.telemetry.sampling_ratio);
  }
  core.setTracer(std::move(*tracer));
  return true;
}

// The reloader's hooks shared by both transports: the start-up checks, as at start-up.
Reloader::Hooks reloadHooks() {
  Reloader::Hooks hooks;
  hooks.check = [](Assembly& next, std::shared_ptr<void>& background) {
    auto task = std::make_shared<std::optional<DelayedTask>>();
    const bool ok = startupChecks(next, *task, "reload: refusing the new config") == kExitOk;
    background = std::move(task);
    return ok;
  };
  return hooks;
}

Reloader::Settings reloadSettings(const Assembly& a) {
  Reloader::Settings s;
  s.watch = a.config.server.watch_config && a.config_path.has_value();
  if (s.watch) spdlog::info("watching {} for changes (server.watch_config)", *a.config_path);
  return s;
}

}  // namespace

int runServeStdio(const AppOptions& options, const Env& env) {
  auto made = assembleForServing(options, env);
  if (!made) return kExitConfig;
  // Released below once serving starts: from then on the core and the reloader own it, so a
  // reload that replaces it frees it (and its engines' pools) with its last call.
  auto a = std::make_shared<Assembly>(std::move(*made));
  // Destroyed before `a` on every return below: the check holds references into it.
  auto self_check = std::make_shared<std::optional<DelayedTask>>();
  if (const int rc = startupChecks(*a, *self_check); rc != kExitOk) return rc;

  protocol::ServerCore core(serverOptionsFor(*a, options), a->registry, a);
  if (auto audit = openAudit(*a)) core.addObserver(audit);
  if (!startTracing(*a, env, options, core)) return kExitConfig;
  auto session = std::make_shared<protocol::Session>(core, protocol::Principal{"stdio"});
  auto out = std::make_shared<transport::FdOutbox>(STDOUT_FILENO);
  session->setLogOutbox(out);
  // stdout carries unsolicited messages: a reload's list changes reach the client.
  session->setNotificationOutbox(out);
  session->enableListChanged();

  // Load the embedding model in the background so the first semantic search does not pay for it,
  // but only after kPreloadDelay.
  std::optional<DelayedTask> preload;
  if (a->preload_embedder && a->services.embedder_requested && a->services.embedder) {
    preload.emplace([embedder = a->services.embedder] { (void)embedder(); }, kPreloadDelay);
  }

  Reloader::Hooks hooks = reloadHooks();
  hooks.notify = [session](ListChanges c) { session->notifyListChanged(c.tools, c.resources); };
  Reloader reloader(options, env, core, a, std::move(self_check), std::move(hooks),
                    reloadSettings(*a));

  transport::StdioOptions io;
  io.signal_fd = installSignalPipe();
  io.max_line_bytes = a->config.server.max_message_bytes;
  io.on_stop = [&session, drain = std::chrono::milliseconds(a->config.server.drain_ms)](
                   transport::StopReason reason) {
    spdlog::info("stopping ({}); waiting for {} in-flight call(s)",
                 reason == transport::StopReason::Signal ? "signal" : "end of input",
                 session->inFlight());
    session->drain(drain);
  };
  spdlog::info("serving MCP on stdio with {} tool(s)", a->registry->size());
  a.reset();
  (void)transport::runStdio(*session, out, io, [&reloader] { reloader.request(); });
  core.pool().shutdown();
  preload.reset();
  return kExitOk;
}

int runServeHttp(const AppOptions& options, const Env& env, const HttpServeOptions& http) {
  setupLogging(env);  // the text format until the config is read: a listen error is logged
  auto listen = transport::http::parseListenAddress(http.listen);
  if (!listen) {
    std::cerr << "serve --http " << http.listen << ": " << listen.error().message << "\n";
    return kExitUsage;
  }
  auto made = assembleForServing(options, env);
  if (!made) return kExitConfig;
  // Released once serving starts (as in runServeStdio).
  auto a = std::make_shared<Assembly>(std::move(*made));
  a->readiness = makeReadiness(*a);  // before the self-check, which publishes its verdict to it
  // Destroyed before `a` on every return below: the check holds references into it.
  auto self_check = std::make_shared<std::optional<DelayedTask>>();
  if (const int rc = startupChecks(*a, *self_check); rc != kExitOk) return rc;
  protocol::ServerCore core(serverOptionsFor(*a, options), a->registry, a);
  transport::http::ServeParams p;
  p.readiness = a->readiness;
  p.listen = *listen;
  p.allow_insecure_http = http.allow_insecure;
  p.settings = a->http;
  p.settings.max_body_bytes =
      std::min<std::size_t>(p.settings.max_body_bytes, a->config.server.max_message_bytes);
  p.drain = std::chrono::milliseconds(a->config.server.drain_ms);
  p.audit = openAudit(*a);
  if (a->audit.enabled && !p.audit) return kExitConfig;
  p.metrics = std::make_shared<observe::Metrics>();
  auto addEngineGauges = [metrics = p.metrics](Assembly& from) {
    for (const auto& m : from.modules) {
      // The same names replace the gauges of the assembly before (a reload).
      for (auto& g : m->gauges()) {
        metrics->addGauge("mcpdb_" + std::string(m->name()) + "_" + g.name, std::move(g.help),
                          std::move(g.sample), std::move(g.by_source));
      }
    }
  };
  addEngineGauges(*a);
  if (p.audit) core.addObserver(p.audit);
  core.addObserver(p.metrics);
  if (!startTracing(*a, env, options, core)) return kExitConfig;
  addTelemetryMetrics(*p.metrics, core.sharedTracer());

  Reloader::Hooks hooks = reloadHooks();
  // The new config's readiness before its checks, which publish their verdict to it.
  hooks.check = [check = std::move(hooks.check)](Assembly& next,
                                                 std::shared_ptr<void>& background) {
    next.readiness = makeReadiness(next);
    return check(next, background);
  };
  // What a reload changes in the listener: set once it listens, cleared before it stops.
  std::mutex server_mu;
  transport::http::HttpServer* server = nullptr;
  hooks.notify = [&server_mu, &server](ListChanges c) {
    std::lock_guard<std::mutex> lock(server_mu);
    if (server != nullptr) server->notifyListChanged(c.tools, c.resources);
  };
  Reloader reloader(options, env, core, a, std::move(self_check), std::move(hooks),
                    reloadSettings(*a));
  reloader.addMetrics(*p.metrics);
  reloader.setApply([&server_mu, &server, addEngineGauges](Assembly& next, const Assembly&) {
    addEngineGauges(next);
    std::lock_guard<std::mutex> lock(server_mu);
    if (server == nullptr) return;
    server->setReadiness(next.readiness);
    if (const std::size_t ended = server->applyClients(next.http.auth, *next.registry)) {
      spdlog::info("reload: ended {} session(s) of removed, rotated or narrowed client key(s)",
                   ended);
    }
    spdlog::info("reload: {} client(s) configured", next.http.auth.clients.size());
  });
  p.on_reload = [&reloader] { reloader.request(); };
  p.attach = [&server_mu, &server](transport::http::HttpServer* s) {
    std::lock_guard<std::mutex> lock(server_mu);
    server = s;
  };
  spdlog::info("serving MCP over HTTP with {} tool(s)", a->registry->size());
  a.reset();
  return transport::http::serveHttp(core, std::move(p));
}

}  // namespace mcpdb::app
