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
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "common/cursor.hpp"
#include "common/signals.hpp"
#include "common/suggest.hpp"
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

// The logger; MCPDB_LOG_LEVEL was validated by assemble() (an invalid one logs at info until
// assemble() refuses it, so that refusal is seen).
//
// The operator's log goes to stderr only, never to an MCP client as notifications/message: its
// lines name hosts, ports, roles, databases, objects and fixes (self-check findings, connection
// errors), which the MCP specification says log messages to a client must not carry.
void setupLogging(const Env& env) {
  auto logger = std::make_shared<spdlog::logger>(
      "mcp-dbserver",
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::never));
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  const auto level = parseLogLevel(env.get("MCPDB_LOG_LEVEL").value_or("info"));
  logger->set_level(level ? static_cast<spdlog::level::level_enum>(*level) : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// Every engine and the names of its registered tools (engines with no registered tool map to an
// empty set and `registered` false).
struct Surface {
  std::map<std::string, std::vector<std::string>> tools;  // engine -> tool names
  std::set<std::string> registered;                       // engines whose tools were registered
};

Surface surfaceOf(const std::vector<engines::EngineModulePtr>& modules,
                  const std::vector<bool>& registered, const protocol::ToolRegistry& registry) {
  Surface s;
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const std::string name(modules[i]->name());
    s.tools[name];
    if (registered[i]) s.registered.insert(name);
  }
  for (const auto& t : registry.tools()) s.tools[t->engine].push_back(t->name);
  return s;
}

// What in `scope` names no engine or tool this server has ("" when all is known). Tools of an
// engine whose tools were not registered (disabled, when serving) cannot be checked.
std::vector<std::string> scopeProblems(const auth::Scope& scope, const Surface& surface) {
  std::vector<std::string> out;
  if (scope.all()) return out;
  std::vector<std::string> engine_names;
  for (const auto& [engine, tools] : surface.tools) engine_names.push_back(engine);
  auto checkEngine = [&](const std::string& engine) {
    if (surface.tools.count(engine) != 0) return true;
    std::string list;
    for (const auto& e : engine_names) list += (list.empty() ? "" : ", ") + e;
    out.push_back("scope names engine '" + engine + "', which this server does not have" +
                  didYouMean(engine, engine_names) + " (engines: " + list + ")");
    return false;
  };
  for (const auto& e : scope.engines()) checkEngine(e);
  for (const auto& [engine, tools] : scope.tools()) {
    if (!checkEngine(engine) || surface.registered.count(engine) == 0) continue;
    const auto& known = surface.tools.at(engine);
    for (const auto& t : tools) {
      if (std::find(known.begin(), known.end(), t) != known.end()) continue;
      out.push_back("scope names tool '" + t + "' of engine '" + engine +
                    "', which the config does not define" + didYouMean(t, known) +
                    (known.empty() ? std::string(" (that engine has no tools)") : ""));
    }
  }
  return out;
}

// The tools `scope` lets a client see.
std::vector<std::string> visibleTools(const auth::Scope& scope,
                                      const protocol::ToolRegistry& registry) {
  std::vector<std::string> out;
  for (const auto& t : registry.tools()) {
    if (scope.allows(t->engine, t->name)) out.push_back(t->name);
  }
  return out;
}

// The config line of `engine.tools.<name>` (or 0), for messages about a tool.
int toolLine(const YAML::Node& root, std::string_view engine, const std::string& name) {
  if (!root.IsMap()) return 0;
  const YAML::Node section = root[std::string(engine)];
  if (!section.IsMap()) return 0;
  const YAML::Node tools = section["tools"];
  if (!tools.IsMap()) return 0;
  for (const auto& kv : tools) {
    if (kv.first.IsScalar() && kv.first.Scalar() == name) return kv.first.Mark().line + 1;
  }
  return 0;
}

// Each `server.max_calls_by_source` key must name a source some tool reads (a bulkhead the server
// makes), or the operator's limit would silently not apply; engines not registered are skipped.
void checkCallsBySource(const Assembly& a, const std::vector<bool>& registered,
                        const config::Node& root) {
  std::vector<std::string> known;
  for (const auto& t : a.registry->tools()) known.push_back(protocol::bulkheadKey(*t));
  for (const auto& entry : a.config.server.max_calls_by_source) {
    const std::string& key = entry.first;
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string engine = key.substr(0, key.find('/'));
    bool engine_registered = false;
    for (std::size_t i = 0; i < a.modules.size(); ++i) {
      if (a.modules[i]->name() == engine && registered[i]) engine_registered = true;
    }
    if (!engine_registered) continue;
    root.child("server")
        .child("max_calls_by_source")
        .child(key)
        .error("names no source any tool reads" + didYouMean(key, known) +
               " (a tool whose arguments pick the source counts as \"" + engine + "/*\")");
  }
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
  if (const auto level = env.get("MCPDB_LOG_LEVEL"); level && !parseLogLevel(*level)) {
    diag.error(
        0, "",
        "MCPDB_LOG_LEVEL='" + level->substr(0, 32) +
            "' is not a log level (use trace, debug, info, warning, error, "
            "critical or off; any case)" +
            didYouMean(*level, {"trace", "debug", "info", "warning", "error", "critical", "off"}));
  }
  a.config = path ? config::loadConfigFile(*path, sections, diag)
                  : config::readConfig(builtInConfigDocument(a.modules), "<built-in default>",
                                       sections, diag);
  // Every section is read even when another has problems, so one run reports all of them.
  embed::EmbedConfig embedding;
  if (a.config.root.IsMap()) {
    config::Node root(a.config.root, "", diag);
    for (auto& m : a.modules) m->configure(root.child(m->name()), a.config.limits);
    transport::http::parseHttpSettings(root.child("http"), a.http);
    observe::parseAuditSettings(root.child("audit"), a.audit);
    embedding = parseEmbedding(root.child("embedding"), a.preload_embedder);
  }
  a.sections = sections;
  a.config_path = path;
  auto invalid = [&err](const std::vector<std::string>& errors) {
    err << "configuration is invalid (" << errors.size() << " problem"
        << (errors.size() == 1 ? "" : "s") << "):\n";
    for (const auto& e : errors) err << "  " << e << "\n";
  };
  if (!diag.ok()) {
    invalid(diag.errors());
    return std::nullopt;
  }

  a.services.env = &env;
  a.services.defaults = a.config.limits;
  a.services.stopping = a.stopping.get_token();
  // A short signing key lets an agent forge cursors (positions in tables it may read anyway, but
  // also another client's); refused rather than used.
  if (const auto key = env.get("MCPDB_CURSOR_KEY"); key && key->size() < kMinCursorKeyBytes) {
    err << "MCPDB_CURSOR_KEY is too short (" << key->size() << " bytes; at least "
        << kMinCursorKeyBytes
        << " needed so cursors cannot be forged): set 32 or more random bytes, e.g. `openssl rand "
           "-base64 32`\n";
    return std::nullopt;
  }
  a.services.cursor_key = env.get("MCPDB_CURSOR_KEY").value_or(randomKey());
  if (a.services.cursor_key.empty()) {
    err << "cannot make a cursor signing key: the system random generator failed\n";
    return std::nullopt;
  }
  auto shared = std::make_shared<SharedEmbedder>(std::move(embedding), env);
  a.services.embedder = [shared]() { return shared->get(); };

  a.registry = std::make_shared<protocol::ToolRegistry>();
  std::vector<bool> registered;
  for (auto& m : a.modules) {
    const bool on = m->enabled(env);
    a.enabled.push_back(on);
    registered.push_back(on || all_engines);
    if (!on && !all_engines) continue;
    if (auto st = m->registerTools(*a.registry, a.services); !st) {
      // A clash names the tool: say where it is defined and which engine already has the name.
      int line = 0;
      std::string where;
      // The registry names the tool already there (exactly, or the same but for case).
      for (const auto& t : a.registry->tools()) {
        if (st.error().message.find("'" + t->name + "'") == std::string::npos) continue;
        const bool exact = st.error().message == "duplicate tool name '" + t->name + "'";
        const std::string engines[] = {t->engine, std::string(m->name())};
        for (const auto& e : engines) {
          if (line != 0) break;
          line = toolLine(a.config.root, e, t->name);
          if (line != 0) where = e + ".tools." + t->name;
        }
        where = ": the " + t->engine + " and " + std::string(m->name()) + " engines both have a " +
                (exact ? "tool named '" : "tool named like '") + t->name + "'" +
                (where.empty() ? "" : " (" + where + ")") + "; rename the configured one";
        break;
      }
      diag.error(line, std::string(m->name()), st.error().message + where);
    }
  }
  config::Node root(a.config.root, "", diag);
  for (const auto& [set, tools] : a.config.toolsets) {
    std::vector<std::string> known;
    for (const auto& t : a.registry->tools()) known.push_back(t->name);
    for (const auto& t : tools) {
      if (a.registry->find(t) == nullptr && all_engines) {
        root.child("toolsets")
            .child(set)
            .error("names unknown tool '" + t + "'" + didYouMean(t, known));
      }
    }
  }
  checkCallsBySource(a, registered, root);
  const Surface surface = surfaceOf(a.modules, registered, *a.registry);
  for (const auto& c : a.http.auth.clients) {
    for (const auto& problem : scopeProblems(c.scope, surface)) {
      diag.error(c.scope_line, "http.clients." + c.name + ".scope", problem);
    }
  }
  // An engine the config gives tools to but the environment does not enable serves nothing.
  for (std::size_t i = 0; path && i < a.modules.size(); ++i) {
    const auto& m = a.modules[i];
    if (a.enabled[i] || !m->declaresTools()) continue;
    const std::string msg = "the config declares " + std::string(m->name()) +
                            " tools, but its environment is not set, so they are not served (" +
                            std::string(m->enableHint()) + ", or remove the section)";
    if (a.config.server.require_environment) {
      root.child(m->name()).error(msg + "; server.require_environment is on");
    } else {
      root.child(m->name()).warning(msg);
    }
  }
  if (!diag.ok()) {
    invalid(diag.errors());
    return std::nullopt;
  }
  a.warnings = diag.warnings();
  return a;
}

std::optional<int> parseLogLevel(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (s == "trace") return spdlog::level::trace;
  if (s == "debug") return spdlog::level::debug;
  if (s == "info") return spdlog::level::info;
  if (s == "warn" || s == "warning") return spdlog::level::warn;
  if (s == "error" || s == "err") return spdlog::level::err;
  if (s == "critical") return spdlog::level::critical;
  if (s == "off") return spdlog::level::off;
  return std::nullopt;
}

Status checkScope(const AppOptions& options, const Env& env, const auth::Scope& scope,
                  std::ostream& err) {
  auto a = assemble(options, env, /*all_engines=*/true, err);
  if (!a) {
    return makeError(Code::FailedPrecondition,
                     "the config is invalid, so the scope cannot be checked (see above)");
  }
  std::vector<bool> registered(a->modules.size(), true);
  const auto problems = scopeProblems(scope, surfaceOf(a->modules, registered, *a->registry));
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += (text.empty() ? "" : "; ") + p;
    return makeError(Code::InvalidArgument, text + " (config: " + a->config.source + ")");
  }
  if (visibleTools(scope, *a->registry).empty()) {
    return makeError(Code::InvalidArgument,
                     "the scope lets the client see no tool of config " + a->config.source);
  }
  return {};
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
    Json clients = Json::array();
    for (const auto& c : a->http.auth.clients) {
      clients.push_back({{"name", c.name},
                         {"scope", c.scope.toString()},
                         {"tools", visibleTools(c.scope, *a->registry)}});
    }
    Json warnings = a->warnings;
    out << Json{{"config", a->config.source}, {"valid", true},  {"warnings", warnings},
                {"engines", engines},         {"tools", tools}, {"clients", clients}}
               .dump(2, ' ', false, Json::error_handler_t::replace)
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
  if (!a->http.auth.clients.empty()) out << "\nhttp clients (what each key can see and call):\n";
  for (const auto& c : a->http.auth.clients) {
    const auto visible = visibleTools(c.scope, *a->registry);
    out << "  - " << c.name << " (scope " << c.scope.toString() << "): " << visible.size()
        << " tool" << (visible.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < visible.size(); ++i) out << (i == 0 ? ": " : ", ") << visible[i];
    out << "\n";
  }
  out << "\n"
      << a->registry->size() << " tool" << (a->registry->size() == 1 ? "" : "s") << " in total\n";
  return kExitOk;
}

namespace {

using Severity = engines::Finding::Severity;

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Ok: return "ok";
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Violation: return "VIOLATION";
    case Severity::Inconclusive: return "INCONCLUSIVE";
    case Severity::Unusable: return "unusable";
  }
  return "info";
}

// Whether the config uses engine `i`: it declares tools for it (the built-in allowlist declares
// every engine's demo tools and serves those whose environment is set, so there "declares" means
// "enabled").
bool usesEngine(const Assembly& a, std::size_t i) {
  return a.modules[i]->declaresTools() && (a.enabled[i] || a.config_path.has_value());
}

// The three outcomes of a read-only proof; a verdict is never more confident than its evidence.
enum class Verdict { ProvedReadOnly, Violation, Inconclusive };

struct EngineReport {
  std::string name;
  std::string state;  // "checked", "not enabled", "not used"
  std::string hint;
  std::vector<engines::Finding> findings;
};

// The self-check (and, for doctor, the tool check) of every engine the config uses. An engine the
// config uses whose environment is unset could not be checked: inconclusive.
std::vector<EngineReport> checkEngines(Assembly& a, bool check_tools) {
  std::vector<EngineReport> reports;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    auto& m = *a.modules[i];
    EngineReport r{std::string(m.name()), "checked", "", {}};
    if (!usesEngine(a, i)) {
      r.state = a.enabled[i] ? "not used" : "not enabled";
      r.hint = a.enabled[i] ? "the config declares no " + r.name + " tools"
                            : std::string(m.enableHint());
    } else if (!a.enabled[i]) {
      r.state = "not enabled";
      r.hint = std::string(m.enableHint());
      r.findings.push_back(
          {Severity::Inconclusive, r.name + ".environment",
           "the config declares " + r.name +
               " tools but its environment is not set, so its credentials "
               "were not checked",
           std::string(m.enableHint()) + ", or remove the " + r.name + " section from the config"});
    } else {
      r.findings = m.selfCheck(a.services);
      if (check_tools) {
        auto tools = m.checkTools(a.services);
        r.findings.insert(r.findings.end(), tools.begin(), tools.end());
      }
    }
    reports.push_back(std::move(r));
  }
  return reports;
}

Verdict verdictOf(const std::vector<EngineReport>& reports) {
  bool checked = false;
  bool inconclusive = false;
  for (const auto& r : reports) {
    checked = checked || r.state == "checked";
    for (const auto& f : r.findings) {
      if (f.severity == Severity::Violation) return Verdict::Violation;
      inconclusive = inconclusive || f.severity == Severity::Inconclusive;
    }
  }
  return inconclusive || !checked ? Verdict::Inconclusive : Verdict::ProvedReadOnly;
}

Json findingJson(const engines::Finding& f) {
  Json j = {{"severity", severityName(f.severity)}, {"check", f.check}, {"message", f.message}};
  if (!f.fix.empty()) j["fix"] = f.fix;
  return j;
}

void printFinding(std::ostream& out, const Json& f) {
  out << "  [" << f["severity"].get<std::string>() << "] " << f["check"].get<std::string>() << ": "
      << f["message"].get<std::string>() << "\n";
  if (!f.contains("fix")) return;
  // A fix may be several statements, one per line: each gets the same indentation.
  std::string fix = f["fix"].get<std::string>();
  for (std::size_t at = fix.find('\n'); at != std::string::npos; at = fix.find('\n', at + 1)) {
    fix.insert(at + 1, "           ");
  }
  out << "      fix: " << fix << "\n";
}

}  // namespace

int runDoctor(const AppOptions& options, const Env& env, bool json, std::ostream& out,
              std::ostream& err) {
  auto a = assemble(options, env, /*all_engines=*/false, err);
  if (!a) return kExitConfig;
  Json report = {{"config", a->config.source}, {"engines", Json::array()}};
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
          "server.self_check is off: the server will start even with write-capable credentials"},
         {"fix", "server: {self_check: refuse}"}});
  }
  for (const auto& w : a->warnings)
    config_findings.push_back({{"severity", "warning"}, {"check", "config"}, {"message", w}});
  report["config_findings"] = config_findings;

  const auto engines = checkEngines(*a, /*check_tools=*/true);
  const Verdict verdict = verdictOf(engines);
  std::size_t tools_checked = 0;
  std::size_t tools_unusable = 0;
  for (const auto& r : engines) {
    Json e = {{"name", r.name},
              {"state", r.state},
              {"enabled", r.state != "not enabled"},
              {"findings", Json::array()}};
    if (!r.hint.empty()) e["hint"] = r.hint;
    for (const auto& f : r.findings) {
      e["findings"].push_back(findingJson(f));
      if (f.check.find(".tool.") != std::string::npos ||
          f.check.find(".target.") != std::string::npos) {
        ++tools_checked;
        tools_unusable += f.severity == Severity::Unusable ? 1 : 0;
      }
    }
    report["engines"].push_back(e);
  }
  report["verdict"] = verdict == Verdict::Violation      ? "write-capable"
                      : verdict == Verdict::Inconclusive ? "inconclusive"
                                                         : "read-only";
  report["tools"] = {{"checked", tools_checked}, {"unusable", tools_unusable}};
  if (json) {
    out << report.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    out << "mcp-dbserver doctor — config: " << a->config.source << "\n";
    for (const auto& f : report["config_findings"]) printFinding(out, f);
    for (const auto& e : report["engines"]) {
      out << "\n" << e["name"].get<std::string>() << ": " << e["state"].get<std::string>();
      if (e.contains("hint")) out << " (" << e["hint"].get<std::string>() << ")";
      out << "\n";
      for (const auto& f : e["findings"]) printFinding(out, f);
    }
    out << "\nverdict: ";
    switch (verdict) {
      case Verdict::Violation:
        out << "VIOLATION: the configured credentials can write; an agent with code execution "
               "could change data\n";
        break;
      case Verdict::Inconclusive:
        out << "INCONCLUSIVE: a check could not be made (see [INCONCLUSIVE] above), so nothing "
               "is proved; fix it and run doctor again\n";
        break;
      case Verdict::ProvedReadOnly:
        out << "proved read-only: no write capability found for any engine this config uses\n";
        break;
    }
    if (tools_unusable > 0) {
      out << "tools: " << tools_unusable << " of " << tools_checked
          << " cannot run as the configured principal (see [unusable] above)\n";
    } else if (tools_checked > 0) {
      out << "tools: all " << tools_checked << " can run as the configured principal\n";
    }
  }
  if (verdict == Verdict::Violation) return kExitDoctorViolation;
  if (verdict == Verdict::Inconclusive) return kExitDoctorInconclusive;
  return tools_unusable > 0 ? kExitDoctorToolsUnusable : kExitOk;
}

namespace {

// Logs the config warnings and engine states and runs the startup self-check (both transports).
// The credential self-check of every engine the config uses.
Verdict runSelfCheck(Assembly& a) {
  const auto reports = checkEngines(a, /*check_tools=*/false);
  if (a.stopping.stop_requested()) {
    spdlog::info("self-check: stopped with the server before it was complete");
    return Verdict::Inconclusive;
  }
  for (const auto& r : reports) {
    for (const auto& f : r.findings) {
      std::string fix = f.fix.empty() ? "" : " (fix: " + f.fix + ")";
      std::replace(fix.begin(), fix.end(), '\n', ' ');  // one log line per finding
      switch (f.severity) {
        case Severity::Violation:
        case Severity::Inconclusive:
        case Severity::Warning:
        case Severity::Unusable:
          spdlog::warn("self-check {} [{}]: {}{}", f.check, severityName(f.severity), f.message,
                       fix);
          break;
        default: spdlog::debug("self-check {}: {}", f.check, f.message); break;
      }
    }
  }
  const Verdict v = verdictOf(reports);
  if (v == Verdict::Inconclusive) {
    spdlog::warn("self-check inconclusive: nothing is proved about the credentials (see above)");
  }
  return v;
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
      switch (runSelfCheck(a)) {
        case Verdict::Violation:
          spdlog::error("refusing to start: the credentials can write (server.self_check: refuse)");
          return kExitSelfCheck;
        case Verdict::Inconclusive:
          spdlog::error(
              "refusing to start: the self-check could not prove the credentials read-only "
              "(server.self_check: refuse)");
          return kExitSelfCheck;
        case Verdict::ProvedReadOnly: break;
      }
      break;
    case config::SelfCheckMode::Warn:
      // Stopped with the server: a database that never answers does not hold the exit for the
      // check's connection timeouts.
      background.emplace([&a] { (void)runSelfCheck(a); }, kSelfCheckDelay, a.stopping);
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
  so.calls_per_source = a.config.server.max_calls_per_source;
  so.calls_by_source = a.config.server.max_calls_by_source;
  so.parse.max_bytes = a.config.server.max_message_bytes;
  so.max_result_memory = a.config.server.max_result_memory;
  so.fence = a.config.server.fence;
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
  setupLogging(env);
  auto a = assembleForServing(options, env);
  if (!a) return kExitConfig;
  // Destroyed before `a` on every return below: the check holds references into it.
  std::optional<DelayedTask> self_check;
  if (const int rc = startupChecks(*a, self_check); rc != kExitOk) return rc;

  protocol::ServerCore core(serverOptionsFor(*a, options), a->registry);
  if (auto audit = openAudit(*a)) core.addObserver(audit);
  auto session = std::make_shared<protocol::Session>(core, protocol::Principal{"stdio"});
  auto out = std::make_shared<transport::FdOutbox>(STDOUT_FILENO);
  session->setLogOutbox(out);

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
  core.pool().shutdown();
  preload.reset();
  return kExitOk;
}

int runServeHttp(const AppOptions& options, const Env& env, const HttpServeOptions& http) {
  setupLogging(env);
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
    // A reloaded client list is held to the same scope check as at start-up.
    p.reload = [path = *a->config_path, sections = a->sections,
                surface = surfaceOf(a->modules, a->enabled,
                                    *a->registry)]() -> std::optional<auth::AuthSettings> {
      auto loaded = transport::http::reloadAuthFromFile(path, sections);
      if (!loaded) return loaded;
      bool ok = true;
      for (const auto& c : loaded->clients) {
        for (const auto& problem : scopeProblems(c.scope, surface)) {
          spdlog::error("reload: {}:{}: http.clients.{}.scope: {}", path, c.scope_line, c.name,
                        problem);
          ok = false;
        }
      }
      if (!ok) {
        spdlog::error("reload: the config is invalid, keeping the current clients");
        return std::nullopt;
      }
      return loaded;
    };
  }
  spdlog::info("serving MCP over HTTP with {} tool(s)", a->registry->size());
  return transport::http::serveHttp(core, std::move(p));
}

}  // namespace mcpdb::app
