#include <memory>
#include <mutex>

#include "engines/dynamodb/dynamodb.hpp"
#include "engines/dynamodb/registry.hpp"
#include "engines/dynamodb/resources.hpp"
#include "engines/dynamodb/self_check.hpp"
#include "engines/dynamodb/tools.hpp"

namespace mcpdb::dynamodb {
namespace {

class DynamoModule final : public engines::EngineModule {
 public:
  explicit DynamoModule(BackendOptions options) : options_(std::move(options)) {}

  std::string_view name() const override { return "dynamodb"; }
  std::string_view enableHint() const override {
    return "set AWS_REGION and AWS credentials (AWS_ENDPOINT_URL_DYNAMODB for a local server), or "
           "the variables each dynamodb.sources entry names";
  }
  // Without `sources:` today's rule (AWS_REGION); with declared sources, any source usable.
  bool enabled(const Env& env) const override {
    if (!registry_) return env.has("AWS_REGION");
    for (const auto& s : registry_->sources) {
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
    registry_ = std::make_shared<const Registry>(parseRegistry(section, defaults));
    std::lock_guard lock(mu_);
    routes_.reset();
  }

  Status registerTools(protocol::ToolRegistry& registry,
                       engines::EngineServices& services) override {
    if (!registry_) return {};
    const auto routes = routesFor(services);
    if (auto st = dynamodb::registerTools(registry, routes, services.cursor_key); !st) return st;
    return dynamodb::registerResources(registry, routes);
  }

  bool declaresTools() const override { return registry_ && !registry_->targets.empty(); }

  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    return perSource(services, runSelfCheck);
  }

  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    return perSource(services, checkTargets);
  }

  std::vector<engines::Gauge> gauges() override {
    std::weak_ptr<const Routes> weak;
    {
      std::lock_guard lock(mu_);
      if (!routes_ || routes_->routes().empty()) return {};
      weak = routes_;
    }
    // Summed over the sources whose transport a call created.
    auto sampler = [weak](std::size_t Transport::ConnectionStats::*field) {
      return [weak, field]() -> double {
        const auto routes = weak.lock();
        double sum = 0;
        if (!routes) return sum;
        for (const auto& backend : routes->backends()) {
          if (const auto transport = backend->transportIfCreated())
            sum += static_cast<double>(transport->connectionStats().*field);
        }
        return sum;
      };
    };
    return {
        {"http_connections_in_use",
         "DynamoDB HTTP connections carrying a request now, all sources.",
         sampler(&Transport::ConnectionStats::in_use)},
        {"http_connections_idle",
         "DynamoDB keep-alive HTTP connections idle in the pools, all sources.",
         sampler(&Transport::ConnectionStats::idle)},
    };
  }

 private:
  using Check = std::vector<engines::Finding> (*)(const std::vector<const Target*>&, Backend&);

  // A backend per source, created (never connected) once under the lock.
  std::shared_ptr<const Routes> routesFor(engines::EngineServices& services) {
    std::lock_guard lock(mu_);
    if (!routes_) {
      const Env env = services.env != nullptr ? *services.env : Env::process();
      std::vector<std::shared_ptr<Backend>> backends;
      for (const Source& s : registry_->sources)
        backends.push_back(std::make_shared<Backend>(s, env, options_));
      routes_ = std::make_shared<const Routes>(registry_, std::move(backends));
    }
    return routes_;
  }

  // `check` on each source's targets; with several sources each finding names its source.
  std::vector<engines::Finding> perSource(engines::EngineServices& services, Check check) {
    if (!registry_ || registry_->targets.empty()) return {};
    const auto routes = routesFor(services);
    std::vector<engines::Finding> out;
    for (const auto& backend : routes->backends()) {
      const auto targets = routes->targetsOf(*backend);
      if (targets.empty()) continue;
      for (auto& f : check(targets, *backend)) {
        if (routes->onlySource().empty())
          f.message = "source '" + backend->source().name + "': " + f.message;
        out.push_back(std::move(f));
      }
    }
    return out;
  }

  BackendOptions options_;
  std::shared_ptr<const Registry> registry_;
  std::mutex mu_;
  std::shared_ptr<const Routes> routes_;
};

}  // namespace

engines::EngineModulePtr makeModule() {
  return makeModule(BackendOptions{});
}

engines::EngineModulePtr makeModule(BackendOptions options) {
  return std::make_unique<DynamoModule>(std::move(options));
}

}  // namespace mcpdb::dynamodb
