#include "engines/mysql/module.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "engines/kit/module.hpp"
#include "engines/mysql/config.hpp"
#include "engines/mysql/resources.hpp"
#include "engines/mysql/runtime.hpp"
#include "engines/mysql/tools.hpp"

namespace mcpdb::mysql {
namespace {

class MysqlModule final : public engines::kit::Module<Runtimes> {
 public:
  std::string_view name() const override { return "mysql"; }
  config::TopLevelKey configKey() const override {
    return config::topLevelKey("mysql", settingsSection());
  }

  std::string_view enableHint() const override {
    return "set MYSQL_DSN (mysql://user:password@host:port/db), or the dsn_env of each "
           "mysql.sources entry";
  }

  bool enabled(const Env& env) const override {
    for (const auto& name : sourceEnvNames(settings_)) {
      if (env.has(name)) return true;
    }
    return false;
  }

  std::string_view securityPosture() const override {
    return "every tool is a fixed SQL template judged by a MySQL-dialect guard (exactly one "
           "SELECT; no INTO, locking read, variable, executable comment, optimizer hint or "
           "sql_mode-dependent quoting; denylisted functions such as SLEEP, GET_LOCK and LOAD_FILE "
           "refused; stored functions only when allowlisted) with ? placeholders bound as "
           "server-side prepared statements (binary protocol, multi-statements off, LOCAL INFILE "
           "off); each session is READ ONLY with a fixed sql_mode, each call runs in START "
           "TRANSACTION READ ONLY under a server-side time limit, rows and bytes are capped while "
           "fetching, and the session is reset after each call. The real boundary is the "
           "account: grant it SELECT only.";
  }

  std::string_view defaultSection() const override { return defaultSectionText(); }
  YAML::Node defaultSectionDocument() const override { return mysql::defaultSectionDocument(); }

  void configure(const config::Node& section, const Limits& defaults) override {
    settings_ = parseSettings(section, defaults);
  }

  Status registerTools(protocol::ToolRegistry& registry,
                       engines::EngineServices& services) override {
    // Every declared source's runtime, in config order (none connects): the pool gauges count
    // each source, as they did before any call.
    for (const Source& s : settings_.sources) runtime(s, services);
    const RuntimeOf runtimeOf = [this, &services](const QueryTool& t) {
      const Source* s = settings_.sourceOf(t);
      return s == nullptr ? nullptr : runtime(*s, services);
    };
    if (auto st = mysql::registerTools(registry, settings_, runtimeOf); !st) return st;
    // A schema resource per tool; reading one describes its statement (never at registration).
    return registerResources(registry, settings_, runtimeOf);
  }

  bool declaresTools() const override { return !settings_.tools.empty(); }
  bool optional() const override { return settings_.optional; }
  std::vector<std::string> unsetVariables(const Env& env) const override {
    if (enabled(env)) return {};
    return engines::kit::unsetOf(sourceEnvNames(settings_), env);
  }

  // Each source's account, checked on its own connection.
  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    const auto sources = sourcesByName();
    std::vector<engines::Finding> out;
    for (const Source* s : sources) {
      addFindings(out, s->name, sources.size() > 1, runtime(*s, services)->checkPrivileges({}));
    }
    return out;
  }

  // Each tool, in config order, on its source (doctor: never requested).
  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    std::vector<engines::Finding> out;
    for (const QueryTool& t : settings_.tools) {
      const Source* s = settings_.sourceOf(t);
      if (s != nullptr) out.push_back(runtime(*s, services)->checkTool(t, services.stopping));
    }
    return out;
  }

  // A probe per source a tool reads, on that source's pool (Runtime::probe).
  std::vector<engines::SourceProbe> probes(engines::EngineServices& services) override {
    std::vector<engines::SourceProbe> out;
    for (const Source* s : sourcesByName()) {
      const bool read = std::any_of(settings_.tools.begin(), settings_.tools.end(),
                                    [&](const QueryTool& t) { return settings_.sourceOf(t) == s; });
      if (!read) continue;
      out.push_back(
          {s->name, [rt = runtime(*s, services)](std::chrono::steady_clock::time_point deadline,
                                                 const std::stop_token& stop) {
             return rt->probe(deadline, stop);
           }});
    }
    return out;
  }

 protected:
  std::shared_ptr<Runtimes> makeRuntime(engines::EngineServices&) override {
    return std::make_shared<Runtimes>();
  }

  std::vector<engines::kit::GaugeSpec> gaugeSpecs() const override {
    return {
        {"pool_connections_open", "MySQL connections open (idle or leased), all sources."},
        {"pool_connections_in_use", "MySQL connections leased to a running call."},
        {"pool_connections_max", "MySQL pool size (mysql.pool.size per source)."},
    };
  }

  // By source name, as the sources were listed before runtimes were made per source.
  engines::kit::Sampler<Runtimes> sampler() const override {
    return [](const Runtimes& all, std::vector<engines::kit::SourceSample>& out) {
      auto made = all.made();
      std::sort(made.begin(), made.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [name, rt] : made) {
        const PoolStats s = rt->stats();
        out.push_back({name,
                       {static_cast<double>(s.open), static_cast<double>(s.in_use),
                        static_cast<double>(s.max)}});
      }
    };
  }

 private:
  // The runtime of `source`, made on first use; it connects only when a call or a check needs it.
  std::shared_ptr<Runtime> runtime(const Source& source, engines::EngineServices& services) {
    return runtime(services)->get(source.name, [&] {
      return std::make_shared<Runtime>(settings_, source,
                                       services.env != nullptr ? *services.env : Env::process());
    });
  }
  using engines::kit::Module<Runtimes>::runtime;

  // The declared sources by name: the order findings and probes were always listed in.
  std::vector<const Source*> sourcesByName() const {
    std::vector<const Source*> out;
    for (const Source& s : settings_.sources) out.push_back(&s);
    std::sort(out.begin(), out.end(),
              [](const Source* a, const Source* b) { return a->name < b->name; });
    return out;
  }

  config::Diagnostics diag_{"<unconfigured>"};  // before settings_: it is read by its initializer
  Settings settings_ = parseSettings(config::Node(YAML::Node(), "mysql", diag_), Limits{});
};

}  // namespace

engines::EngineModulePtr makeModule() {
  return std::make_unique<MysqlModule>();
}

}  // namespace mcpdb::mysql
