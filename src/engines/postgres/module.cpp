#include "engines/postgres/module.hpp"

#include <memory>
#include <mutex>

#include "engines/postgres/pg_config.hpp"
#include "engines/postgres/resources.hpp"
#include "engines/postgres/runtime.hpp"
#include "engines/postgres/schema_gen.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::postgres {
namespace {

class PostgresModule final : public engines::EngineModule {
 public:
  std::string_view name() const override { return "postgres"; }

  std::string_view enableHint() const override {
    return "set POSTGRES_DSN, or PGHOST, PGUSER, PGDATABASE with MCPDB_PG_IAM_AUTH=1 and "
           "AWS_REGION";
  }

  bool enabled(const Env& env) const override {
    if (env.has("POSTGRES_DSN")) return true;
    const auto iam = env.get("MCPDB_PG_IAM_AUTH");
    const bool iam_on = iam && (*iam == "1" || *iam == "true" || *iam == "yes" || *iam == "on");
    return iam_on && env.has("PGHOST") && env.has("PGUSER") && env.has("PGDATABASE") &&
           (env.has("AWS_REGION") || env.has("AWS_DEFAULT_REGION"));
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
    section_ = parseSection(section, defaults);
  }

  Status registerTools(protocol::ToolRegistry& registry,
                       engines::EngineServices& services) override {
    auto rt = runtime(services);
    for (const auto& t : section_.tools) {
      auto tool = std::make_shared<const QueryTool>(t);
      protocol::Tool out;
      out.name = t.name;
      out.title = t.title;
      out.description = t.description + describeLimits(t.limits);
      out.engine = "postgres";
      out.input_schema = inputSchema(t);
      out.output_schema = queryOutputSchema();
      out.limits = t.limits;
      out.fence = t.fence;
      out.handler = [rt, tool](const Json& args, protocol::CallContext& ctx) {
        return rt->callQuery(*tool, args, ctx);
      };
      // Its only sleeps are the executor's poll(), which watches the reader's descriptors, and the
      // pool's waits, which release the reading role first.
      out.watches_input = true;
      if (auto st = checkSchemas(out); !st) return st;
      if (auto st = registry.add(std::move(out)); !st) return st;
    }
    const SemanticSearch& s = section_.search;
    if (s.enabled) {
      protocol::Tool out;
      out.name = s.tool;
      out.title = s.title;
      out.description = s.description + " k is 1.." + std::to_string(s.k_max) + " (default " +
                        std::to_string(s.k_default) + ")." + describeLimits(s.limits);
      out.engine = "postgres";
      out.input_schema = searchInputSchema(s);
      out.output_schema = searchOutputSchema(s);
      out.limits = s.limits;
      EmbedderFn embedder = services.embedder;
      services.embedder_requested = true;  // the app preloads the model in the background
      out.handler = [rt, embedder](const Json& args, protocol::CallContext& ctx) {
        return rt->callSearch(args, ctx, embedder);
      };
      if (auto st = checkSchemas(out); !st) return st;
      if (auto st = registry.add(std::move(out)); !st) return st;
    }
    // A schema resource per tool; reading one describes its statement (never at registration).
    return registerResources(registry, rt);
  }

  bool declaresTools() const override { return !section_.tools.empty() || section_.search.enabled; }

  std::vector<engines::Finding> selfCheck(engines::EngineServices& services) override {
    auto rt = runtime(services);
    auto findings = rt->selfCheck();
    findings.push_back(rt->proofFinding());
    return findings;
  }

  std::vector<engines::Finding> checkTools(engines::EngineServices& services) override {
    return runtime(services)->checkTools();
  }

  std::vector<engines::Gauge> gauges() override {
    std::weak_ptr<Runtime> weak;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!runtime_) return {};  // no tools registered: no pool
      weak = runtime_;
    }
    auto sampler = [weak](std::size_t PoolStats::*field) {
      return [weak, field]() -> double {
        const auto rt = weak.lock();
        return rt ? static_cast<double>(rt->pool().stats().*field) : 0.0;
      };
    };
    return {
        {"pool_connections_open", "PostgreSQL connections open (idle or leased).",
         sampler(&PoolStats::open)},
        {"pool_connections_in_use", "PostgreSQL connections leased to a running call.",
         sampler(&PoolStats::in_use)},
        {"pool_connections_max", "PostgreSQL pool size (postgres.pool.size).",
         sampler(&PoolStats::max)},
    };
  }

 private:
  static std::string describeLimits(const Limits& l) {
    return " At most " + std::to_string(l.max_rows) + " rows and " +
           std::to_string(l.max_bytes / 1024) + " KiB per call (a truncated result says so), " +
           std::to_string(l.timeout.count()) + " ms timeout.";
  }

  static Status checkSchemas(const protocol::Tool& t) {
    if (auto st = protocol::validateSchemaSubset(t.input_schema, t.name + ".inputSchema"); !st)
      return st;
    return protocol::validateSchemaSubset(t.output_schema, t.name + ".outputSchema");
  }

  std::shared_ptr<Runtime> runtime(engines::EngineServices& services) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!runtime_) {
      runtime_ = std::make_shared<Runtime>(
          section_, services.env != nullptr ? *services.env : Env::process());
    }
    return runtime_;
  }

  Section section_;
  std::mutex mu_;
  std::shared_ptr<Runtime> runtime_;
};

}  // namespace

engines::EngineModulePtr makeModule() {
  return std::make_unique<PostgresModule>();
}

}  // namespace mcpdb::postgres
