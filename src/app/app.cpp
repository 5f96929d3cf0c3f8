#include "app/app.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "common/signals.hpp"
#include "embed/embedder.hpp"
#include "protocol/session.hpp"
#include "transport/http/serve.hpp"
#include "transport/stdio/stdio_transport.hpp"

namespace mcpdb::app {
namespace {

const std::vector<std::string>& otherSections() {
  static const std::vector<std::string> kSections = {"embedding", "http", "audit"};
  return kSections;
}

// 32 bytes from the kernel's CSPRNG. Not RAND_bytes: its first call sets up OpenSSL's DRBG and
// providers (~8 M instructions) on the way to the first answer (docs/BENCHMARKS.md "Startup
// profile").
std::string randomKey() {
  unsigned char buf[32];
  std::size_t got = 0;
  while (got < sizeof buf) {
    const ssize_t n = getrandom(buf + got, sizeof buf - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    got += static_cast<std::size_t>(n);
  }
  return std::string(reinterpret_cast<const char*>(buf), sizeof buf);
}

// The `embedding:` section. Environment variables fill what it leaves empty (see EmbedConfig).
embed::EmbedConfig parseEmbedding(const config::Node& node, bool& preload) {
  embed::EmbedConfig cfg;
  preload = true;
  if (!node.present()) return cfg;
  if (!node.expectMap({"provider", "model_dir", "url", "model", "dimension", "timeout_ms",
                       "max_retries", "preload", "verify_model"})) {
    return cfg;
  }
  if (auto v = node.choice("provider", {"use-lite", "openai"})) cfg.provider = *v;
  if (auto v = node.string("model_dir")) cfg.model_dir = *v;
  if (auto v = node.string("url")) cfg.url = *v;
  if (auto v = node.string("model")) cfg.model = *v;
  if (auto v = node.integer("dimension", 1, 65536)) cfg.dimension = static_cast<std::size_t>(*v);
  if (auto v = node.integer("timeout_ms", 100, 600000)) cfg.timeout = std::chrono::milliseconds(*v);
  if (auto v = node.integer("max_retries", 0, 10)) cfg.max_retries = static_cast<int>(*v);
  if (auto v = node.boolean("verify_model")) cfg.verify_model = *v;
  if (auto v = node.boolean("preload")) preload = *v;
  return cfg;
}

// One embedder for the whole process, created on first use (or by the preload thread), shared by
// every engine so pgvector and MongoDB search embed queries identically.
class SharedEmbedder {
 public:
  SharedEmbedder(embed::EmbedConfig config, const Env& env)
      : config_(std::move(config)), env_(env) {}
  Result<std::shared_ptr<embed::Embedder>> get() {
    std::call_once(once_, [this] {
      const auto t0 = std::chrono::steady_clock::now();
      auto made = embed::makeEmbedder(config_, env_);
      if (made) {
        embedder_ = std::shared_ptr<embed::Embedder>(std::move(*made));
        spdlog::info("embedding model {} ({}-d) ready in {} ms", embedder_->modelId(),
                     embedder_->dimension(),
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - t0)
                         .count());
      } else {
        error_ = made.error();
        spdlog::warn("embedding model unavailable: {}", error_.message);
      }
    });
    if (embedder_) return embedder_;
    return error_;
  }

 private:
  embed::EmbedConfig config_;
  const Env& env_;
  std::once_flag once_;
  std::shared_ptr<embed::Embedder> embedder_;
  Error error_{Code::Internal, ""};
};

std::string instructionsFor(const Assembly& a) {
  std::string engines;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    if (a.enabled[i]) engines += (engines.empty() ? "" : ", ") + std::string(a.modules[i]->name());
  }
  if (engines.empty()) engines = "none";
  return "Read-only access to operator-approved database operations (engines: " + engines +
         "). Every tool is a fixed, named operation with typed arguments; there is no way to run "
         "arbitrary queries or change data. Results are capped in rows and bytes; when a result "
         "says "
         "truncated, narrow the request or use the returned cursor.";
}

// Forwards server log lines to the stdio client once it asked for them (logging/setLevel).
class ClientLogSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void attach(std::weak_ptr<protocol::Session> session) {
    std::lock_guard<std::mutex> lock(attach_mu_);
    session_ = std::move(session);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::shared_ptr<protocol::Session> s;
    {
      std::lock_guard<std::mutex> lock(attach_mu_);
      s = session_.lock();
    }
    if (!s) return;
    std::string_view level = "info";
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug: level = "debug"; break;
      case spdlog::level::warn: level = "warning"; break;
      case spdlog::level::err: level = "error"; break;
      case spdlog::level::critical: level = "critical"; break;
      default: break;
    }
    s->log(level, "mcp-dbserver", std::string(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  std::mutex attach_mu_;
  std::weak_ptr<protocol::Session> session_;
};

void setupLogging(const Env& env, const std::shared_ptr<ClientLogSink>& client_sink) {
  auto stderr_sink =
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::never);
  std::vector<spdlog::sink_ptr> sinks{stderr_sink};
  if (client_sink) sinks.push_back(client_sink);
  auto logger = std::make_shared<spdlog::logger>("mcp-dbserver", sinks.begin(), sinks.end());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  const std::string level = env.get("MCPDB_LOG_LEVEL").value_or("info");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

}  // namespace

std::string builtInConfigText(const std::vector<engines::EngineModulePtr>& modules) {
  std::string text(builtInHeaderText());
  for (const auto& m : modules) {
    text += std::string(m->defaultSection());
    if (!text.empty() && text.back() != '\n') text += '\n';
  }
  return text;
}

YAML::Node builtInConfigDocument(const std::vector<engines::EngineModulePtr>& modules) {
  YAML::Node root = builtInHeaderDocument();
  for (const auto& m : modules) {
    const YAML::Node section = m->defaultSectionDocument();
    for (const auto& kv : section) root.force_insert(kv.first, kv.second);
  }
  return root;
}

std::optional<Assembly> assemble(const AppOptions& options, const Env& env, bool all_engines,
                                 std::ostream& err) {
  Assembly a;
  a.modules = engines::allEngineModules();
  std::vector<std::string> sections = otherSections();
  for (const auto& m : a.modules) sections.emplace_back(m->name());

  const std::optional<std::string> path =
      options.config_path ? options.config_path : env.get("MCPDB_CONFIG");
  config::Diagnostics diag(path.value_or("<built-in default>"));
  a.config = path ? config::loadConfigFile(*path, sections, diag)
                  : config::readConfig(builtInConfigDocument(a.modules), "<built-in default>",
                                       sections, diag);
  if (diag.ok()) {
    config::Node root(a.config.root, "", diag);
    for (auto& m : a.modules) m->configure(root.child(m->name()), a.config.limits);
    transport::http::parseHttpSettings(root.child("http"), a.http);
    observe::parseAuditSettings(root.child("audit"), a.audit);
  }
  a.sections = sections;
  a.config_path = path;
  if (!diag.ok()) {
    err << "configuration is invalid (" << diag.errors().size() << " problem"
        << (diag.errors().size() == 1 ? "" : "s") << "):\n";
    for (const auto& e : diag.errors()) err << "  " << e << "\n";
    return std::nullopt;
  }
  a.warnings = diag.warnings();

  a.services.env = &env;
  a.services.defaults = a.config.limits;
  a.services.cursor_key = env.get("MCPDB_CURSOR_KEY").value_or(randomKey());
  {
    config::Diagnostics ediag(a.config.source);
    config::Node root(a.config.root, "", ediag);
    auto shared = std::make_shared<SharedEmbedder>(
        parseEmbedding(root.child("embedding"), a.preload_embedder), env);
    if (!ediag.ok()) {
      err << "configuration is invalid:\n";
      for (const auto& e : ediag.errors()) err << "  " << e << "\n";
      return std::nullopt;
    }
    a.services.embedder = [shared]() { return shared->get(); };
  }

  a.registry = std::make_shared<protocol::ToolRegistry>();
  for (auto& m : a.modules) {
    const bool on = m->enabled(env);
    a.enabled.push_back(on);
    if (!on && !all_engines) continue;
    if (auto st = m->registerTools(*a.registry, a.services); !st) {
      err << "configuration is invalid: " << st.error().message << "\n";
      return std::nullopt;
    }
  }
  for (const auto& [set, tools] : a.config.toolsets) {
    for (const auto& t : tools) {
      if (a.registry->find(t) == nullptr && all_engines) {
        err << "configuration is invalid: toolset '" << set << "' names unknown tool '" << t
            << "'\n";
        return std::nullopt;
      }
    }
  }
  return a;
}

int runCheckConfig(const AppOptions& options, const Env& env, bool json, std::ostream& out,
                   std::ostream& err) {
  auto a = assemble(options, env, /*all_engines=*/true, err);
  if (!a) return kExitConfig;
  if (json) {
    Json tools = Json::array();
    for (const auto& t : a->registry->tools()) {
      Json d = protocol::ToolRegistry::describe(*t);
      d["engine"] = t->engine;
      tools.push_back(std::move(d));
    }
    Json engines = Json::array();
    for (std::size_t i = 0; i < a->modules.size(); ++i) {
      engines.push_back({{"name", a->modules[i]->name()},
                         {"enabled", static_cast<bool>(a->enabled[i])},
                         {"enable_hint", a->modules[i]->enableHint()}});
    }
    out << Json{{"config", a->config.source},
                {"valid", true},
                {"engines", engines},
                {"tools", tools}}
               .dump(2)
        << "\n";
    return kExitOk;
  }
  out << "config: " << a->config.source << " (valid)\n";
  out << "limits: max_rows=" << a->config.limits.max_rows
      << " max_bytes=" << a->config.limits.max_bytes
      << " timeout_ms=" << a->config.limits.timeout.count() << "\n";
  for (const auto& w : a->warnings) out << "warning: " << w << "\n";
  for (std::size_t i = 0; i < a->modules.size(); ++i) {
    const auto& m = a->modules[i];
    std::size_t count = 0;
    for (const auto& t : a->registry->tools()) count += t->engine == m->name() ? 1 : 0;
    out << "\nengine " << m->name() << ": " << count << " tool" << (count == 1 ? "" : "s") << ", "
        << (a->enabled[i] ? "enabled by the environment"
                          : "disabled (" + std::string(m->enableHint()) + ")")
        << "\n";
    out << "  read-only: " << m->securityPosture() << "\n";
    for (const auto& t : a->registry->tools()) {
      if (t->engine != m->name()) continue;
      out << "  - " << t->name << ": " << t->title << "\n";
      const Json& props = t->input_schema.value("properties", Json::object());
      for (const auto& [pname, p] : props.items()) {
        out << "      " << pname << " (" << p.value("type", Json("any")).dump() << ")";
        if (p.contains("minimum") || p.contains("maximum")) {
          out << " " << p.value("minimum", Json("")).dump() << ".."
              << p.value("maximum", Json("")).dump();
        }
        out << "\n";
      }
      out << "      limits: max_rows=" << t->limits.max_rows << " max_bytes=" << t->limits.max_bytes
          << " timeout_ms=" << t->limits.timeout.count() << "\n";
    }
  }
  if (a->modules.empty()) out << "\n(no engines in this build)\n";
  out << "\n"
      << a->registry->size() << " tool" << (a->registry->size() == 1 ? "" : "s") << " in total\n";
  return kExitOk;
}

namespace {

std::string_view severityName(engines::Finding::Severity s) {
  switch (s) {
    case engines::Finding::Severity::Ok: return "ok";
    case engines::Finding::Severity::Info: return "info";
    case engines::Finding::Severity::Warning: return "warning";
    case engines::Finding::Severity::Violation: return "VIOLATION";
  }
  return "info";
}

}  // namespace

int runDoctor(const AppOptions& options, const Env& env, bool json, std::ostream& out,
              std::ostream& err) {
  auto a = assemble(options, env, /*all_engines=*/false, err);
  if (!a) return kExitConfig;
  Json report = {{"config", a->config.source}, {"engines", Json::array()}};
  bool violation = false;
  std::size_t enabled = 0;
  // Config-level checks (engine templates were already guard-checked while assembling).
  Json config_findings = Json::array();
  config_findings.push_back(
      {{"severity", "ok"},
       {"check", "config.valid"},
       {"message", "config is valid; every allowlisted statement passed the guardrail"}});
  if (a->config.server.self_check == config::SelfCheckMode::Off) {
    config_findings.push_back(
        {{"severity", "warning"},
         {"check", "config.self_check"},
         {"message",
          "server.self_check is off: the server will start even with write-capable credentials"}});
  }
  for (const auto& w : a->warnings)
    config_findings.push_back({{"severity", "warning"}, {"check", "config"}, {"message", w}});
  report["config_findings"] = config_findings;
  for (std::size_t i = 0; i < a->modules.size(); ++i) {
    auto& m = a->modules[i];
    Json e = {{"name", m->name()},
              {"enabled", static_cast<bool>(a->enabled[i])},
              {"findings", Json::array()}};
    if (!a->enabled[i]) {
      e["hint"] = m->enableHint();
      report["engines"].push_back(e);
      continue;
    }
    ++enabled;
    for (const auto& f : m->selfCheck(a->services)) {
      violation = violation || f.severity == engines::Finding::Severity::Violation;
      e["findings"].push_back(
          {{"severity", severityName(f.severity)}, {"check", f.check}, {"message", f.message}});
    }
    report["engines"].push_back(e);
  }
  report["verdict"] = violation ? "write-capable" : "read-only";
  if (json) {
    out << report.dump(2) << "\n";
  } else {
    out << "mcp-dbserver doctor — config: " << a->config.source << "\n";
    for (const auto& f : report["config_findings"]) {
      out << "  [" << f["severity"].get<std::string>() << "] " << f["check"].get<std::string>()
          << ": " << f["message"].get<std::string>() << "\n";
    }
    for (const auto& e : report["engines"]) {
      out << "\n" << e["name"].get<std::string>() << ": ";
      if (!e["enabled"].get<bool>()) {
        out << "not enabled (" << e["hint"].get<std::string>() << ")\n";
        continue;
      }
      out << "enabled\n";
      for (const auto& f : e["findings"]) {
        out << "  [" << f["severity"].get<std::string>() << "] " << f["check"].get<std::string>()
            << ": " << f["message"].get<std::string>() << "\n";
      }
    }
    if (enabled == 0)
      out << "\nno engine is enabled by the environment: nothing to check (see .env.example)\n";
    out << "\nverdict: "
        << (violation ? "VIOLATION: the configured credentials can write; an agent with code "
                        "execution could change data"
                      : "no write capability found")
        << "\n";
  }
  return violation ? kExitDoctorViolation : kExitOk;
}

namespace {

// Logs the config warnings and engine states and runs the startup self-check (both transports).
// The credential self-check of every enabled engine; true when a principal can write.
bool runSelfCheck(Assembly& a) {
  bool violation = false;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    if (!a.enabled[i]) continue;
    for (const auto& f : a.modules[i]->selfCheck(a.services)) {
      if (f.severity == engines::Finding::Severity::Violation) {
        violation = true;
        spdlog::warn("self-check {}: {}", f.check, f.message);
      } else if (f.severity == engines::Finding::Severity::Warning) {
        spdlog::warn("self-check {}: {}", f.check, f.message);
      } else {
        spdlog::debug("self-check {}: {}", f.check, f.message);
      }
    }
  }
  return violation;
}

// Runs `task` on a background thread after `delay`, unless destroyed first (then it does not
// start; a task already running is waited for). For start-up work that must not take the CPU from
// the first answers (docs/BENCHMARKS.md "Startup profile"); see kPreloadDelay, kSelfCheckDelay.
class DelayedTask {
 public:
  DelayedTask(std::function<void()> task, std::chrono::milliseconds delay)
      : thread_([this, task = std::move(task), delay] {
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
    thread_.join();
  }

 private:
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
// start on a violation); `warn` (default) checks on `background`, kSelfCheckDelay after the server
// starts answering, so `initialize` does not wait for database round trips nor share the CPU with
// them; `off` skips it.
int startupChecks(Assembly& a, std::optional<DelayedTask>& background) {
  for (const auto& w : a.warnings) spdlog::warn("config: {}", w);
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    if (a.enabled[i]) {
      spdlog::info("engine {} enabled", a.modules[i]->name());
    } else {
      spdlog::info("engine {} disabled: {}", a.modules[i]->name(), a.modules[i]->enableHint());
    }
  }
  if (a.registry->size() == 0) {
    spdlog::warn("no tools: no engine is enabled by the environment (see .env.example)");
  }
  switch (a.config.server.self_check) {
    case config::SelfCheckMode::Off: break;
    case config::SelfCheckMode::Refuse:
      if (runSelfCheck(a)) {
        spdlog::error("refusing to start: the credentials can write (server.self_check: refuse)");
        return kExitSelfCheck;
      }
      break;
    case config::SelfCheckMode::Warn:
      background.emplace([&a] { (void)runSelfCheck(a); }, kSelfCheckDelay);
      break;
  }
  return kExitOk;
}

// The audit log of the config's `audit:` section, as a call observer (both transports).
std::shared_ptr<observe::AuditLog> openAudit(const Assembly& a) {
  if (!a.audit.enabled) return nullptr;
  auto log = observe::AuditLog::open(a.audit);
  if (!log) {
    spdlog::error("audit: {}", log.error().message);
    return nullptr;
  }
  return *log;
}

protocol::ServerOptions serverOptionsFor(const Assembly& a, const AppOptions& options) {
  protocol::ServerOptions so;
  so.version = options.version;
  so.instructions = instructionsFor(a);
  so.page_size = a.config.server.page_size;
  so.workers = a.config.server.workers;
  so.max_queue = a.config.server.max_queue;
  so.parse.max_bytes = a.config.server.max_message_bytes;
  return so;
}

}  // namespace

// assemble() for the serving paths: config problems go to stderr.
std::optional<Assembly> assembleForServing(const AppOptions& options, const Env& env) {
  std::ostringstream err;
  auto a = assemble(options, env, /*all_engines=*/false, err);
  if (!a) std::cerr << err.str();
  return a;
}

int runServeStdio(const AppOptions& options, const Env& env) {
  auto client_sink = std::make_shared<ClientLogSink>();
  setupLogging(env, client_sink);
  auto a = assembleForServing(options, env);
  if (!a) return kExitConfig;
  // Destroyed before `a` on every return below: the check holds references into it.
  std::optional<DelayedTask> self_check;
  if (const int rc = startupChecks(*a, self_check); rc != kExitOk) return rc;

  protocol::ServerOptions so;
  so.version = options.version;
  so.instructions = instructionsFor(*a);
  so.page_size = a->config.server.page_size;
  so.workers = a->config.server.workers;
  so.max_queue = a->config.server.max_queue;
  so.parse.max_bytes = a->config.server.max_message_bytes;
  protocol::ServerCore core(so, a->registry);
  if (auto audit = openAudit(*a)) core.addObserver(audit);
  auto session = std::make_shared<protocol::Session>(core, protocol::Principal{"stdio"});
  auto out = std::make_shared<transport::FdOutbox>(STDOUT_FILENO);
  session->setLogOutbox(out);
  client_sink->attach(session);

  // Load the embedding model in the background so the first semantic search does not pay for it,
  // but only after kPreloadDelay.
  std::optional<DelayedTask> preload;
  if (a->preload_embedder && a->services.embedder_requested && a->services.embedder) {
    preload.emplace([embedder = a->services.embedder] { (void)embedder(); }, kPreloadDelay);
  }

  transport::StdioOptions io;
  io.signal_fd = installSignalPipe();
  io.max_line_bytes = a->config.server.max_message_bytes;
  io.on_stop = [&](transport::StopReason reason) {
    spdlog::info("stopping ({}); waiting for {} in-flight call(s)",
                 reason == transport::StopReason::Signal ? "signal" : "end of input",
                 session->inFlight());
    session->drain(std::chrono::milliseconds(a->config.server.drain_ms));
  };
  spdlog::info("serving MCP on stdio with {} tool(s)", a->registry->size());
  (void)transport::runStdio(*session, out, io);
  client_sink->attach({});
  core.pool().shutdown();
  preload.reset();
  return kExitOk;
}

int runServeHttp(const AppOptions& options, const Env& env, const HttpServeOptions& http) {
  setupLogging(env, nullptr);
  auto listen = transport::http::parseListenAddress(http.listen);
  if (!listen) {
    std::cerr << "serve --http " << http.listen << ": " << listen.error().message << "\n";
    return kExitUsage;
  }
  auto a = assembleForServing(options, env);
  if (!a) return kExitConfig;
  // Destroyed before `a` on every return below: the check holds references into it.
  std::optional<DelayedTask> self_check;
  if (const int rc = startupChecks(*a, self_check); rc != kExitOk) return rc;
  protocol::ServerCore core(serverOptionsFor(*a, options), a->registry);
  transport::http::ServeParams p;
  p.listen = *listen;
  p.allow_insecure_http = http.allow_insecure;
  p.settings = a->http;
  p.settings.max_body_bytes =
      std::min<std::size_t>(p.settings.max_body_bytes, a->config.server.max_message_bytes);
  p.drain = std::chrono::milliseconds(a->config.server.drain_ms);
  p.audit = openAudit(*a);
  if (a->audit.enabled && !p.audit) return kExitConfig;
  p.metrics = std::make_shared<observe::Metrics>();
  for (const auto& m : a->modules) {
    for (auto& g : m->gauges()) {
      p.metrics->addGauge("mcpdb_" + std::string(m->name()) + "_" + g.name, std::move(g.help),
                          std::move(g.sample));
    }
  }
  if (p.audit) core.addObserver(p.audit);
  core.addObserver(p.metrics);
  if (a->config_path) {
    p.reload = [path = *a->config_path, sections = a->sections]() {
      return transport::http::reloadAuthFromFile(path, sections);
    };
  }
  spdlog::info("serving MCP over HTTP with {} tool(s)", a->registry->size());
  return transport::http::serveHttp(core, std::move(p));
}

}  // namespace mcpdb::app
