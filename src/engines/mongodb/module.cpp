#include "engines/mongodb/module.hpp"

#include <algorithm>
#include <chrono>

#include "engines/kit/module.hpp"
#include "engines/mongodb/doctor.hpp"
#include "engines/mongodb/resources.hpp"
#include "engines/mongodb/config.hpp"
#include "engines/mongodb/tools.hpp"

namespace mcpdb::mongodb {

namespace {

class MongoModule final : public engines::kit::Module<EngineState> {
 public:
  std::string_view name() const override { return "mongodb"; }
  config::TopLevelKey configKey() const override {
    return config::topLevelKey("mongodb", settingsSection());
  }
  std::string_view enableHint() const override {
    return "set MONGODB_URI and MONGODB_DATABASE, or the variables of a mongodb.sources entry "
           "(uri_env, and database_env unless it names its database)";
  }
  // Some declared source has every variable it reads.
  bool enabled(const Env& env) const override {
    return std::any_of(settings_.sources.begin(), settings_.sources.end(), [&env](const Source& s) {
      const auto vars = sourceVariables(s);
      return std::all_of(vars.begin(), vars.end(),
                         [&env](const std::string& v) { return env.has(v); });
    });
  }
  std::string_view securityPosture() const override {
    return "a fixed collection registry: tools run only find (by typed _id, or _id-ordered pages), "
           "countDocuments / "
           "estimatedDocumentCount and a $vectorSearch pipeline built from the registry; "
           "identifiers and field lists "
           "come from this config, agent values are appended as typed BSON scalars and never "
           "parsed as documents; "
           "every pipeline is re-checked for $out/$merge/$where/$function/$accumulator before it "
           "is sent; the "
           "serving library has no insert/update/delete code; the startup self-check reads "
           "connectionStatus and "
           "reports any write action of the MongoDB user (use a user with only the built-in 'read' "
           "role).";
  }
  std::string_view defaultSection() const override { return defaultSectionYaml(); }
  YAML::Node defaultSectionDocument() const override { return mongodb::defaultSectionDocument(); }

  void configure(const config::Node& section, const Limits& defaults) override {
    settings_ = parseSettings(section, defaults);
  }

  Status registerTools(protocol::ToolRegistry& registry,
                       engines::EngineServices& services) override {
    const auto state = runtime(services);
    // A target with vector search gets a semantic search tool, which embeds queries: the app
    // then preloads the model in the background.
    for (const auto& t : settings_.targets) {
      if (t.vector_search) services.embedder_requested = true;
    }
    for (auto& tool : buildTools(state)) {
      if (auto st = registry.add(std::move(tool)); !st) return st;
    }
    return registerResources(registry, settings_);
  }

  // The read-only proof of every source's user; with several sources each finding names its own.
  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    std::vector<engines::Finding> out;
    for (const auto& src : runtime(services)->runtime().sources()) {
      addFindings(out, src->source().name, settings_.sources.size() > 1, checkSource(*src));
    }
    return out;
  }

  bool declaresTools() const override { return !settings_.targets.empty(); }
  bool optional() const override { return settings_.optional; }
  std::vector<std::string> unsetVariables(const Env& env) const override {
    if (enabled(env)) return {};
    std::vector<std::string> vars;
    for (const Source& s : settings_.sources) {
      for (auto& v : sourceVariables(s)) vars.push_back(std::move(v));
    }
    return engines::kit::unsetOf(vars, env);
  }

  // Each target's collection exists and the user may read it (a count of at most one document,
  // as count_mongodb_documents sends), on each source that reads it.
  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    std::vector<engines::Finding> out;
    for (const auto& src : runtime(services)->runtime().sources()) {
      std::vector<const Target*> targets;
      for (const auto& t : settings_.targets) {
        const bool searches = t.vector_search && t.vector_search->source == src->source().name;
        if (t.source == src->source().name || searches) targets.push_back(&t);
      }
      if (!targets.empty()) {
        addFindings(out, src->source().name, settings_.sources.size() > 1,
                    checkTargets(*src, targets));
      }
    }
    for (const auto& t : settings_.targets) {
      if (!t.vector_search) continue;
      const std::string& tool = t.vector_search->tool;
      if (auto f = engines::kit::embeddingModelFinding("mongodb.tool." + tool + ".model", tool,
                                                       services)) {
        out.push_back(std::move(*f));
      }
    }
    return out;
  }

  // A probe per source a target reads (SourceClient::probe). The driver bounds it (server
  // selection and socket timeouts); readiness answers not-ready after its own bound in any case.
  std::vector<engines::SourceProbe> probes(engines::EngineServices& services) override {
    const auto state = runtime(services);
    std::vector<engines::SourceProbe> out;
    for (const auto& src : state->runtime().sources()) {
      const std::string& name = src->source().name;
      const bool read =
          std::any_of(settings_.targets.begin(), settings_.targets.end(), [&](const Target& t) {
            return t.source == name || (t.vector_search && t.vector_search->source == name);
          });
      if (!read) continue;
      out.push_back(
          {name, [state, client = src.get()](std::chrono::steady_clock::time_point,
                                             const std::stop_token&) { return client->probe(); }});
    }
    return out;
  }

 protected:
  // The engine state, made on first use (the self-check can run before any call).
  std::shared_ptr<EngineState> makeRuntime(engines::EngineServices& services) override {
    return std::make_shared<EngineState>(settings_, services);
  }

  std::vector<engines::kit::GaugeSpec> gaugeSpecs() const override {
    return {
        {"pool_clients_in_use", "MongoDB pooled clients leased to a running operation."},
        {"pool_clients_max",
         "MongoDB client pool bound (maxPoolSize), all sources; 0 until the first call opens a "
         "pool."},
    };
  }

  // The sources whose pool a call already made (sampling never connects).
  engines::kit::Sampler<EngineState> sampler() const override {
    return [](const EngineState& state, std::vector<engines::kit::SourceSample>& out) {
      for (const auto& [source, client] : state.runtime().clients().made()) {
        out.push_back({source,
                       {static_cast<double>(client->clientsInUse()),
                        static_cast<double>(client->clientsMax())}});
      }
    };
  }

 private:
  // Before configure(): the default source (enabled() reads the sources).
  config::Diagnostics diag_{"<unconfigured>"};  // before settings_: read by its initializer
  Settings settings_ = parseSettings(config::Node(YAML::Node(), "mongodb", diag_), Limits{});
};
}  // namespace

engines::EngineModulePtr makeModule() {
  return std::make_unique<MongoModule>();
}

}  // namespace mcpdb::mongodb
