#include <chrono>
#include <memory>

#include "engines/dynamodb/module.hpp"
#include "engines/dynamodb/config.hpp"
#include "engines/dynamodb/resources.hpp"
#include "engines/dynamodb/doctor.hpp"
#include "engines/dynamodb/tools.hpp"
#include "engines/kit/module.hpp"

namespace mcpdb::dynamodb {
namespace {

class DynamoModule final : public engines::kit::Module<const Routes> {
 public:
  explicit DynamoModule(BackendOptions options) : options_(std::move(options)) {}

  std::string_view name() const override { return "dynamodb"; }
  config::TopLevelKey configKey() const override {
    return config::topLevelKey("dynamodb", settingsSection());
  }
  std::string_view enableHint() const override {
    return "set AWS_REGION and AWS credentials (AWS_ENDPOINT_URL_DYNAMODB for a local server), or "
           "the variables each dynamodb.sources entry names";
  }
  // Without `sources:` today's rule (AWS_REGION); with declared sources, any source usable.
  bool enabled(const Env& env) const override {
    if (!settings_) return env.has("AWS_REGION");
    for (const auto& s : settings_->sources) {
      if (sourceUsable(s, env)) return true;
    }
    return false;
  }
  std::string_view securityPosture() const override {
    return "only GetItem, Scan (no filters) and DescribeTable on the tables named in the config; "
           "keys are typed "
           "by the registry and names are placeholders, never spliced; scan cursors are signed and "
           "bound to their "
           "target; the serving binary contains no DynamoDB write operation (checked by a test). "
           "The real "
           "boundary is IAM: grant only dynamodb:GetItem, dynamodb:Scan and dynamodb:DescribeTable "
           "on these "
           "tables. The self-check sends a conditional update that can never match and reports a "
           "violation "
           "unless IAM denies it.";
  }
  std::string_view defaultSection() const override { return defaultSectionYaml(); }
  YAML::Node defaultSectionDocument() const override { return dynamodb::defaultSectionDocument(); }

  void configure(const config::Node& section, const Limits& defaults) override {
    settings_ = std::make_shared<const Settings>(parseSettings(section, defaults));
    resetRuntime();
  }

  Status registerTools(protocol::ToolRegistry& registry,
                       engines::EngineServices& services) override {
    if (!settings_) return {};
    const auto routes = runtime(services);
    if (auto st = dynamodb::registerTools(registry, routes, services.cursor_key); !st) return st;
    return dynamodb::registerResources(registry, routes);
  }

  bool declaresTools() const override { return settings_ && !settings_->targets.empty(); }
  bool optional() const override { return settings_ && settings_->optional; }
  std::vector<std::string> unsetVariables(const Env& env) const override {
    if (enabled(env)) return {};
    std::vector<std::string> vars;
    if (!settings_ || settings_->sources.empty()) vars.emplace_back("AWS_REGION");
    for (const Source& s : settings_ ? settings_->sources : std::vector<Source>{}) {
      if (s.region.empty()) vars.emplace_back("AWS_REGION");
      for (const std::string* v : {&s.endpoint_env, &s.access_key_id_env, &s.secret_access_key_env,
                                   &s.session_token_env}) {
        if (!v->empty()) vars.push_back(*v);
      }
    }
    return engines::kit::unsetOf(vars, env);
  }

  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    return perSource(services, runSelfCheck);
  }

  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    return perSource(services, checkTargets);
  }

  // A probe per source a target reads: DescribeTable of its first target (Backend::probe).
  std::vector<engines::SourceProbe> probes(engines::EngineServices& services) override {
    if (!settings_ || settings_->targets.empty()) return {};
    const auto routes = runtime(services);
    std::vector<engines::SourceProbe> out;
    for (const auto& backend : routes->backends()) {
      const auto targets = routes->targetsOf(*backend);
      if (targets.empty()) continue;
      out.push_back({backend->source().name, [routes, backend, target = targets.front()](
                                                 std::chrono::steady_clock::time_point deadline,
                                                 const std::stop_token& stop) {
                       return backend->probe(*target, deadline, stop);
                     }});
    }
    return out;
  }

  std::vector<engines::Gauge> gauges() override {
    if (const auto routes = runtimeIfMade(); !routes || routes->routes().empty()) return {};
    return Module::gauges();
  }

 protected:
  // A backend per source, each with its slot for a transport the kit makes on its first call.
  std::shared_ptr<const Routes> makeRuntime(engines::EngineServices& services) override {
    const Env env = services.env != nullptr ? *services.env : Env::process();
    return std::make_shared<const Routes>(settings_, env, options_);
  }

  std::vector<engines::kit::GaugeSpec> gaugeSpecs() const override {
    return {
        {"http_connections_in_use",
         "DynamoDB HTTP connections carrying a request now, all sources."},
        {"http_connections_idle",
         "DynamoDB keep-alive HTTP connections idle in the pools, all sources."},
    };
  }

  // The sources whose transport a call created.
  engines::kit::Sampler<const Routes> sampler() const override {
    return [](const Routes& routes, std::vector<engines::kit::SourceSample>& out) {
      for (const auto& [source, transport] : routes.transports().made()) {
        const auto stats = transport->connectionStats();
        out.push_back(
            {source, {static_cast<double>(stats.in_use), static_cast<double>(stats.idle)}});
      }
    };
  }

 private:
  using Check = std::vector<engines::Finding> (*)(const std::vector<const Target*>&, Backend&);

  // `check` on each source's targets; with several sources each finding names its source.
  std::vector<engines::Finding> perSource(engines::EngineServices& services, Check check) {
    if (!settings_ || settings_->targets.empty()) return {};
    const auto routes = runtime(services);
    std::vector<engines::Finding> out;
    for (const auto& backend : routes->backends()) {
      const auto targets = routes->targetsOf(*backend);
      if (targets.empty()) continue;
      addFindings(out, backend->source().name, routes->onlySource().empty(),
                  check(targets, *backend));
    }
    return out;
  }

  BackendOptions options_;
  std::shared_ptr<const Settings> settings_;
};

}  // namespace

engines::EngineModulePtr makeModule() {
  return makeModule(BackendOptions{});
}

engines::EngineModulePtr makeModule(BackendOptions options) {
  return std::make_unique<DynamoModule>(std::move(options));
}

}  // namespace mcpdb::dynamodb
