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

class MysqlModule final : public engines::kit::Module<Runtime> {
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
    auto rt = runtime(services);
    if (auto st = mysql::registerTools(registry, settings_, rt); !st) return st;
    // A schema resource per tool; reading one describes its statement (never at registration).
    return registerResources(registry, rt);
  }

  bool declaresTools() const override { return !settings_.tools.empty(); }
  bool optional() const override { return settings_.optional; }
  std::vector<std::string> unsetVariables(const Env& env) const override {
    if (enabled(env)) return {};
    return engines::kit::unsetOf(sourceEnvNames(settings_), env);
  }

  // Each source's account, checked on its own connection.
  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    const auto rt = runtime(services);
    const auto pools = rt->pools();
    std::vector<engines::Finding> out;
    for (SourcePool* p : pools) {
      addFindings(out, p->source().name, pools.size() > 1, rt->checkPrivileges(*p, {}));
    }
    return out;
  }

  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    return runtime(services)->checkTools(services.stopping);  // doctor: never requested
  }

  // A probe per source a tool reads, on that source's pool (Runtime::probe).
  std::vector<engines::SourceProbe> probes(engines::EngineServices& services) override {
    const auto rt = runtime(services);
    std::vector<engines::SourceProbe> out;
    for (const SourcePool* p : rt->pools()) {
      const std::string source = p->source().name;
      const bool read =
          std::any_of(settings_.tools.begin(), settings_.tools.end(), [&](const QueryTool& t) {
            const Source* s = settings_.sourceOf(t);
            return s != nullptr && s->name == source;
          });
      if (!read) continue;
      out.push_back({source, [rt, source](std::chrono::steady_clock::time_point deadline,
                                          const std::stop_token& stop) {
                       return rt->probe(source, deadline, stop);
                     }});
    }
    return out;
  }

 protected:
  std::shared_ptr<Runtime> makeRuntime(engines::EngineServices& services) override {
    return std::make_shared<Runtime>(settings_,
                                     services.env != nullptr ? *services.env : Env::process());
  }

  std::vector<engines::kit::GaugeSpec> gaugeSpecs() const override {
    return {
        {"pool_connections_open", "MySQL connections open (idle or leased), all sources."},
        {"pool_connections_in_use", "MySQL connections leased to a running call."},
        {"pool_connections_max", "MySQL pool size (mysql.pool.size per source)."},
    };
  }

  engines::kit::Sampler<Runtime> sampler() const override {
    return [](const Runtime& rt, std::vector<engines::kit::SourceSample>& out) {
      for (const auto& [name, s] : rt.stats()) {
        out.push_back({name,
                       {static_cast<double>(s.open), static_cast<double>(s.in_use),
                        static_cast<double>(s.max)}});
      }
    };
  }

 private:
  config::Diagnostics diag_{"<unconfigured>"};  // before settings_: it is read by its initializer
  Settings settings_ = parseSettings(config::Node(YAML::Node(), "mysql", diag_), Limits{});
};

}  // namespace

engines::EngineModulePtr makeModule() {
  return std::make_unique<MysqlModule>();
}

}  // namespace mcpdb::mysql
