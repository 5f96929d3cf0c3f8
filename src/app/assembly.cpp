// Loads and validates the config, configures every engine and registers its tools (every command).
#include <sys/random.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <ostream>

#include "app/app.hpp"
#include "app/config_keys.hpp"
#include "app/surface.hpp"
#include "common/cursor.hpp"
#include "common/suggest.hpp"
#include "embed/embedder.hpp"

namespace mcpdb::app {
namespace {

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
        std::lock_guard<std::mutex> lock(mu_);
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
  // OK once loaded; else what loading would open, checked without loading it.
  Status check() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (embedder_) return {};
    }
    return embed::checkEmbedderSetup(config_, env_);
  }

 private:
  embed::EmbedConfig config_;
  const Env& env_;
  std::once_flag once_;
  std::mutex mu_;  // embedder_ as check() reads it from another thread than get()'s
  std::shared_ptr<embed::Embedder> embedder_;
  Error error_{Code::Internal, ""};
};

}  // namespace

bool sameYaml(const YAML::Node& a, const YAML::Node& b) {
  const bool a_absent = !a.IsDefined() || a.IsNull();
  const bool b_absent = !b.IsDefined() || b.IsNull();
  if (a_absent || b_absent) return a_absent == b_absent;
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar: return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!sameYaml(a[i], b[i])) return false;
      }
      return true;
    case YAML::NodeType::Map:
      if (a.size() != b.size()) return false;
      for (const auto& kv : a) {
        if (!kv.first.IsScalar()) return false;  // a config's keys are scalars
        const YAML::Node other = b[kv.first.Scalar()];
        if (!other.IsDefined() || !sameYaml(kv.second, other)) return false;
      }
      return true;
    default: return false;
  }
}

bool sameSection(const YAML::Node& before, const YAML::Node& after, std::string_view key) {
  const std::string k(key);
  const YAML::Node b = before.IsDefined() && before.IsMap() ? before[k] : YAML::Node();
  const YAML::Node a = after.IsDefined() && after.IsMap() ? after[k] : YAML::Node();
  return sameYaml(b, a);
}

namespace {

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

// A config file that declares an engine's tools while its environment is unset would start and
// serve none of them, which a desktop client shows only as missing tools. With `refuse` (the
// serving paths: environmentRefusals) that is an error naming the variables, unless the section
// says `optional: true`; otherwise (check-config, doctor, and an optional section) a warning.
// The built-in allowlist serves whatever the environment enables. server.require_environment
// (once the opt-in to the refusal) is accepted and has no effect.
void reportUnsetEnvironment(const Assembly& a, const Env& env, const config::Node& root,
                            bool refuse) {
  if (!a.config_path) return;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    const auto& m = a.modules[i];
    if (a.enabled[i] || !m->declaresTools()) continue;
    const std::string name(m->name());
    std::string vars;
    for (const auto& v : m->unsetVariables(env)) vars += (vars.empty() ? "" : ", ") + v;
    const std::string declared = "the config declares " + name + " tools, but " +
                                 (vars.empty() ? std::string("its environment is not set")
                                               : "the environment does not set " + vars);
    if (m->optional()) {
      root.child(name).warning(declared + ", so they are not served (" + name +
                               ".optional is true; " + std::string(m->enableHint()) + ")");
    } else if (refuse) {
      root.child(name).error(declared + ": " + std::string(m->enableHint()) +
                             "; or, to start without them, set " + name + ".optional: true");
    } else {
      root.child(name).warning(declared + ": `serve` refuses to start (" +
                               std::string(m->enableHint()) + ", or set " + name +
                               ".optional: true)");
    }
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
  const std::vector<std::string> sections = appSections(a.modules);

  const std::optional<std::string> path =
      options.config_path ? options.config_path : env.get("MCPDB_CONFIG");
  config::Diagnostics diag(path.value_or("<built-in default>"));
  // Mistakes in the environment are reported against the variable, not the config file.
  std::vector<std::string> env_problems;
  if (const auto level = env.get("MCPDB_LOG_LEVEL"); level && !parseLogLevel(*level)) {
    env_problems.push_back(
        "MCPDB_LOG_LEVEL='" + level->substr(0, 32) +
        "' is not a log level (use trace, debug, info, warning, error, critical or off; any case)" +
        didYouMean(*level, {"trace", "debug", "info", "warning", "error", "critical", "off"}));
  }
  if (!env_problems.empty()) {
    err << "the environment is invalid (" << env_problems.size() << " problem"
        << (env_problems.size() == 1 ? "" : "s") << "):\n";
    for (const auto& p : env_problems) err << "  " << p << "\n";
  }
  a.config =
      path ? (options.config_text ? config::parseConfig(*options.config_text, *path, sections, diag)
                                  : config::loadConfigFile(*path, sections, diag))
           : config::readConfig(builtInConfigDocument(a.modules), "<built-in default>", sections,
                                diag);
  // Every section is read even when another has problems, so one run reports all of them.
  EmbeddingSettings embedding;
  if (a.config.root.IsMap()) {
    config::Node root(a.config.root, "", diag);
    for (auto& m : a.modules) m->configure(root.child(m->name()), a.config.limits);
    transport::http::parseHttpSettings(root.child("http"), a.http);
    observe::parseAuditSettings(root.child("audit"), a.audit);
    parseTelemetrySettings(root.child("telemetry"), a.telemetry);
    if (const auto e = root.child("embedding"); e.present())
      (void)embeddingSection().parse(e, embedding);
    a.preload_embedder = embedding.preload;
  }
  a.sections = sections;
  a.config_path = path;
  auto invalid = [&err](const std::vector<std::string>& errors) {
    err << "configuration is invalid (" << errors.size() << " problem"
        << (errors.size() == 1 ? "" : "s") << "):\n";
    for (const auto& e : errors) err << "  " << e << "\n";
  };
  if (!diag.ok()) invalid(diag.errors());
  if (!diag.ok() || !env_problems.empty()) return std::nullopt;

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
  a.services.cursor_key = options.inherit != nullptr
                              ? options.inherit->services.cursor_key
                              : env.get("MCPDB_CURSOR_KEY").value_or(randomKey());
  if (a.services.cursor_key.empty()) {
    err << "cannot make a cursor signing key: the system random generator failed\n";
    return std::nullopt;
  }
  if (options.inherit != nullptr &&
      sameSection(options.inherit->config.root, a.config.root, "embedding")) {
    a.services.embedder = options.inherit->services.embedder;
    a.services.embedder_check = options.inherit->services.embedder_check;
  } else {
    auto shared = std::make_shared<SharedEmbedder>(std::move(embedding.config), env);
    a.services.embedder = [shared]() { return shared->get(); };
    a.services.embedder_check = [shared]() { return shared->check(); };
  }

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
  checkCallsBySource(a, registered, root);
  const Surface surface = surfaceOf(a.modules, registered, *a.registry);
  for (const auto& c : a.http.auth.clients) {
    for (const auto& problem : scopeProblems(c.scope, surface)) {
      diag.error(c.scope_line, "http.clients." + c.name + ".scope", problem);
    }
  }
  reportUnsetEnvironment(a, env, root, /*refuse=*/false);
  if (!diag.ok()) {
    invalid(diag.errors());
    return std::nullopt;
  }
  a.warnings = diag.warnings();
  return a;
}

std::vector<std::string> environmentRefusals(const Assembly& a, const Env& env) {
  config::Diagnostics diag(a.config_path.value_or("<built-in default>"));
  const config::Node root(a.config.root, "", diag);
  reportUnsetEnvironment(a, env, root, /*refuse=*/true);
  return diag.errors();
}

std::optional<std::string> zeroToolsRefusal(const Assembly& a) {
  if (a.registry->size() > 0) return std::nullopt;
  if (!a.config_path) {
    std::string hints;
    for (const auto& m : a.modules)
      hints += "\n  " + std::string(m->name()) + ": " + std::string(m->enableHint());
    return "no tools to serve: no engine is enabled by the environment. Enable one (see "
           ".env.example):" +
           hints;
  }
  std::string disabled;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    if (!a.modules[i]->declaresTools()) continue;
    disabled += (disabled.empty() ? "" : ", ") + std::string(a.modules[i]->name());
  }
  if (disabled.empty()) {
    return "no tools to serve: " + *a.config_path +
           " declares no tools (add a tools: or targets: entry to an engine's section)";
  }
  return "no tools to serve: every engine " + *a.config_path + " declares tools for is disabled (" +
         disabled +
         ": optional, and its environment is unset); set the environment of at least one";
}

bool refuseUnservable(const Assembly& a, const Env& env, std::string_view who, std::ostream& err) {
  if (const auto refusals = environmentRefusals(a, env); !refusals.empty()) {
    err << who << " (" << refusals.size() << " problem" << (refusals.size() == 1 ? "" : "s")
        << "):\n";
    for (const auto& r : refusals) err << "  " << r << "\n";
    return true;
  }
  if (const auto none = zeroToolsRefusal(a)) {
    for (const auto& w : a.warnings) err << "warning: " << w << "\n";  // e.g. why disabled
    err << who << ": " << *none << "\n";
    return true;
  }
  return false;
}

}  // namespace mcpdb::app
