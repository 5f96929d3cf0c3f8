#include "engines/postgres/module.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "engines/kit/module.hpp"
#include "engines/postgres/config.hpp"
#include "engines/postgres/resources.hpp"
#include "engines/postgres/runtime.hpp"
#include "engines/postgres/tools.hpp"

namespace mcpdb::postgres {
namespace {

// A runtime per source (they share nothing: each has its own pool and proofs).
using Runtimes = engines::kit::PerSource<Runtime>;

class PostgresModule final : public engines::kit::Module<Runtimes> {
 public:
  std::string_view name() const override { return "postgres"; }
  config::TopLevelKey configKey() const override {
    return config::topLevelKey("postgres", settingsSection());
  }

  std::string_view enableHint() const override {
    return "set POSTGRES_DSN, or PGHOST, PGUSER, PGDATABASE with MCPDB_PG_IAM_AUTH=1 and "
           "AWS_REGION, or the dsn_env of each postgres.sources entry";
  }

  // Any declared source's variable is set; without `sources:`, the implicit default's rule.
  bool enabled(const Env& env) const override {
    if (section_.sources.empty()) return implicitEnabled(env);
    for (const Source& s : section_.sources) {
      if (s.implicit ? implicitEnabled(env) : env.has(s.dsn_env)) return true;
    }
    return false;
  }

  std::string_view securityPosture() const override {
    return "every tool is a fixed SQL template, judged by PostgreSQL's own parser (libpg_query: "
           "exactly one SELECT, no INTO, no locking clause, no data-modifying CTE; re-checked "
           "before each run) with $n placeholders bound by the extended protocol; each connection "
           "sets default_transaction_read_only=on and a statement_timeout, each call runs in "
           "BEGIN READ ONLY ... ROLLBACK, each statement proved read-only against the catalog "
           "through everything it reaches, with a row and "
           "byte cap enforced while fetching; the serving binary links no write path. The real "
           "boundary is the role: grant it SELECT only (the self-check reports any write "
           "privilege).";
  }

  std::string_view defaultSection() const override { return defaultSectionText(); }
  YAML::Node defaultSectionDocument() const override { return postgres::defaultSectionDocument(); }

  void configure(const config::Node& section, const Limits& defaults) override {
    section_ = parseSettings(section, defaults);
  }

  Status registerTools(protocol::ToolRegistry& registry,
                       engines::EngineServices& services) override {
    for (const auto& t : section_.tools) {
      // The tool's runtime and source name are resolved here, once: a call only uses them.
      const Source* source = section_.sourceOf(t.source);
      if (source == nullptr) return makeError(Code::Internal, "tool " + t.name + ": no source");
      auto tool = queryTool(t, source->name, runtime(*source, services));
      if (!tool) return tool.error();
      if (auto st = registry.add(std::move(*tool)); !st) return st;
    }
    const SemanticSearch& s = section_.search;
    if (s.enabled) {
      const Source* source = section_.sourceOf(s.source);
      if (source == nullptr) return makeError(Code::Internal, "tool " + s.tool + ": no source");
      services.embedder_requested = true;  // the app preloads the model in the background
      auto tool = searchTool(s, source->name, runtime(*source, services), services.embedder);
      if (!tool) return tool.error();
      if (auto st = registry.add(std::move(*tool)); !st) return st;
    }
    // A schema resource per tool; reading one describes its statement (never at registration).
    return registerResources(registry, runtimes(services));
  }

  bool declaresTools() const override { return !section_.tools.empty() || section_.search.enabled; }
  bool optional() const override { return section_.optional; }
  std::vector<std::string> unsetVariables(const Env& env) const override {
    if (enabled(env)) return {};
    std::vector<std::string> vars;
    if (section_.sources.empty()) vars.emplace_back(kDefaultDsnEnv);
    for (const Source& s : section_.sources) {
      vars.push_back(s.implicit ? std::string(kDefaultDsnEnv) : s.dsn_env);
    }
    return engines::kit::unsetOf(vars, env);
  }

  // Each source's role and statements, checked on its own connection; with several sources each
  // finding says which source it is about.
  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    return perSource(services, [&services](Runtime& rt) {
      auto findings = rt.selfCheck(services.stopping);
      findings.push_back(rt.proofFinding(services.stopping));
      return findings;
    });
  }

  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    auto out = perSource(services, [&services](Runtime& rt) {
      return rt.checkTools(services.stopping);  // doctor: never requested
    });
    if (section_.search.enabled) {
      const std::string& tool = section_.search.tool;
      if (auto f =
              engines::kit::embeddingModelFinding("pg.tool." + tool + ".model", tool, services)) {
        out.push_back(std::move(*f));
      }
    }
    return out;
  }

  // A probe per source a tool reads: a round trip on its own pool (Runtime::probe).
  std::vector<engines::SourceProbe> probes(engines::EngineServices& services) override {
    std::vector<engines::SourceProbe> out;
    for (const Source& s : toolSources()) {
      auto rt = runtime(s, services);
      out.push_back({s.name, [rt](Clock::time_point deadline, const std::stop_token& stop) {
                       return rt->probe(deadline, stop);
                     }});
    }
    return out;
  }

 protected:
  std::shared_ptr<Runtimes> makeRuntime(engines::EngineServices&) override {
    return std::make_shared<Runtimes>();
  }

  // Summed over the sources' pools (one gauge per figure, as for one source), and per source.
  std::vector<engines::kit::GaugeSpec> gaugeSpecs() const override {
    return {
        {"pool_connections_open", "PostgreSQL connections open (idle or leased), all sources."},
        {"pool_connections_in_use", "PostgreSQL connections leased to a running call."},
        {"pool_connections_max", "PostgreSQL pool size (postgres.pool.size per source)."},
    };
  }

  engines::kit::Sampler<Runtimes> sampler() const override {
    return [](const Runtimes& all, std::vector<engines::kit::SourceSample>& out) {
      for (const auto& [name, rt] : all.made()) {
        const PoolStats s = rt->pool().stats();
        out.push_back({name,
                       {static_cast<double>(s.open), static_cast<double>(s.in_use),
                        static_cast<double>(s.max)}});
      }
    };
  }

 private:
  static bool implicitEnabled(const Env& env) {
    if (env.has(std::string(kDefaultDsnEnv))) return true;
    const auto iam = env.get("MCPDB_PG_IAM_AUTH");
    const bool iam_on = iam && (*iam == "1" || *iam == "true" || *iam == "yes" || *iam == "on");
    return iam_on && env.has("PGHOST") && env.has("PGUSER") && env.has("PGDATABASE") &&
           (env.has("AWS_REGION") || env.has("AWS_DEFAULT_REGION"));
  }

  // The runtime of `source`, made on first use; it connects only when a call or a check needs it.
  std::shared_ptr<Runtime> runtime(const Source& source, engines::EngineServices& services) {
    return runtime(services)->get(source.name, [&] {
      return std::make_shared<Runtime>(settingsFor(section_, source),
                                       services.env != nullptr ? *services.env : Env::process());
    });
  }
  using engines::kit::Module<Runtimes>::runtime;

  // The runtimes made so far, in the order of the sources.
  std::vector<std::shared_ptr<Runtime>> runtimes(engines::EngineServices& services) {
    const auto made = runtime(services)->made();
    std::vector<std::shared_ptr<Runtime>> out;
    for (const Source& s : section_.sources) {
      for (const auto& [name, rt] : made) {
        if (name == s.name) out.push_back(rt);
      }
    }
    return out;
  }

  // The sources the configured tools read, in config order.
  std::vector<Source> toolSources() const {
    std::vector<const Source*> read;
    for (const auto& t : section_.tools) read.push_back(section_.sourceOf(t.source));
    if (section_.search.enabled) read.push_back(section_.sourceOf(section_.search.source));
    std::vector<Source> out;
    for (const Source& s : section_.sources) {
      if (std::find(read.begin(), read.end(), &s) != read.end()) out.push_back(s);
    }
    return out;
  }

  // `check` on every source's runtime; with several sources each finding names its source.
  std::vector<engines::Finding> perSource(
      engines::EngineServices& services,
      const std::function<std::vector<engines::Finding>(Runtime&)>& check) {
    std::vector<engines::Finding> out;
    const std::vector<Source> sources =
        section_.sources.empty() ? std::vector<Source>{implicitSource()} : section_.sources;
    for (const Source& s : sources) {
      addFindings(out, s.name, sources.size() > 1, check(*runtime(s, services)));
    }
    return out;
  }

  Settings section_;
};

}  // namespace

engines::EngineModulePtr makeModule() {
  return std::make_unique<PostgresModule>();
}

}  // namespace mcpdb::postgres
