#include <memory>

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
    return "set AWS_REGION and AWS credentials (AWS_ENDPOINT_URL_DYNAMODB for a local server)";
  }
  bool enabled(const Env& env) const override { return env.has("AWS_REGION"); }
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
  }

  Status registerTools(protocol::ToolRegistry& registry,
                       engines::EngineServices& services) override {
    if (!registry_) return {};
    if (auto st =
            dynamodb::registerTools(registry, registry_, backendFor(services), services.cursor_key);
        !st)
      return st;
    return dynamodb::registerResources(registry, registry_, backendFor(services));
  }

  bool declaresTools() const override { return registry_ && !registry_->targets.empty(); }

  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    if (!registry_ || registry_->targets.empty()) return {};
    return runSelfCheck(*registry_, *backendFor(services));
  }

  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    if (!registry_ || registry_->targets.empty()) return {};
    return checkTargets(*registry_, *backendFor(services));
  }

  std::vector<engines::Gauge> gauges() override {
    if (!registry_ || registry_->targets.empty() || !backend_) return {};
    std::weak_ptr<Backend> weak = backend_;
    auto sampler = [weak](std::size_t Transport::ConnectionStats::*field) {
      return [weak, field]() -> double {
        const auto backend = weak.lock();
        const auto transport = backend ? backend->transportIfCreated() : nullptr;
        return transport ? static_cast<double>(transport->connectionStats().*field) : 0.0;
      };
    };
    return {
        {"http_connections_in_use", "DynamoDB HTTP connections carrying a request now.",
         sampler(&Transport::ConnectionStats::in_use)},
        {"http_connections_idle", "DynamoDB keep-alive HTTP connections idle in the pool.",
         sampler(&Transport::ConnectionStats::idle)},
    };
  }

 private:
  std::shared_ptr<Backend> backendFor(engines::EngineServices& services) {
    if (!backend_) {
      Env env = services.env != nullptr ? *services.env : Env::process();
      backend_ = std::make_shared<Backend>(std::move(env), options_);
    }
    return backend_;
  }

  BackendOptions options_;
  std::shared_ptr<const Registry> registry_;
  std::shared_ptr<Backend> backend_;
};

}  // namespace

engines::EngineModulePtr makeModule() {
  return makeModule(BackendOptions{});
}

engines::EngineModulePtr makeModule(BackendOptions options) {
  return std::make_unique<DynamoModule>(std::move(options));
}

}  // namespace mcpdb::dynamodb
