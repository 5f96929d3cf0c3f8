// Named sources through the module as the server assembles it: each source has its own runtime
// (pool, proof, self-check); a source that cannot connect fails only its own tools, with an error
// naming it and its variable (never a DSN); calls report their source to the audit line.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "engines/postgres/module.hpp"
#include "integration/postgres/fixture.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::postgres::itest {
namespace {

using Sev = engines::Finding::Severity;

constexpr const char* kSecondVar = "MCPDB_TEST_PG_SECOND_DSN";  // POSTGRES_DSN's value again
constexpr const char* kUnsetVar = "MCPDB_TEST_PG_UNSET_DSN";    // never set
constexpr const char* kDownVar = "MCPDB_TEST_PG_DOWN_DSN";      // a port nothing listens on
constexpr const char* kDownDsn =
    "host=127.0.0.1 port=1 dbname=nowhere user=nobody password=down-secret-value";

// The process environment plus the test's own variables.
Env testEnv() {
  const std::string dsn = requireEnv("POSTGRES_DSN");
  return Env([dsn](std::string_view name) -> std::optional<std::string> {
    if (name == kSecondVar) return dsn;
    if (name == kUnsetVar) return std::nullopt;
    if (name == kDownVar) return std::string(kDownDsn);
    return Env::process().get(name);
  });
}

struct Engine {
  engines::EngineModulePtr module = makeModule();
  protocol::ToolRegistry registry;
  Env env = testEnv();
  engines::EngineServices services;

  explicit Engine(const std::string& yaml) {
    ensureTestSchema();
    config::Diagnostics diag("sources_test.yaml");
    config::Config cfg = config::parseConfig(yaml, "sources_test.yaml", {"postgres"}, diag);
    if (diag.ok()) {
      config::Node root(cfg.root, "", diag);
      module->configure(root.child("postgres"), cfg.limits);
    }
    for (const auto& e : diag.errors()) ADD_FAILURE() << e;
    services.env = &env;
    services.defaults = cfg.limits;
    if (auto st = module->registerTools(registry, services); !st)
      ADD_FAILURE() << st.error().message;
  }

  // Calls a tool as the session does; `ctx` keeps what the call reported to the audit sink.
  Result<protocol::ToolOutput> call(const std::string& tool, protocol::CallContext& ctx,
                                    const Json& args = Json::object()) {
    const protocol::Tool* t = registry.find(tool);
    if (t == nullptr) return makeError(Code::NotFound, "no tool " + tool);
    ctx.limits = t->limits;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    return t->handler(args, ctx);
  }
};

const char* kThreeSources = R"(
postgres:
  sources:
    main: {dsn_env: POSTGRES_DSN}
    second: {dsn_env: MCPDB_TEST_PG_SECOND_DSN}
    missing: {dsn_env: MCPDB_TEST_PG_UNSET_DSN}
    down: {dsn_env: MCPDB_TEST_PG_DOWN_DSN}
  pool: {connect_timeout_ms: 2000}
  tools:
    main_items:
      source: main
      description: Items, from the main source.
      statement: SELECT id, name FROM pgtest.items ORDER BY id LIMIT 3
    second_items:
      source: second
      description: Items, from the second source.
      statement: SELECT id, name FROM pgtest.items ORDER BY id LIMIT 3
      limits: {max_rows: 1}
    missing_items:
      source: missing
      description: Items, from a source whose variable is unset.
      statement: SELECT id, name FROM pgtest.items ORDER BY id
    down_items:
      source: down
      description: Items, from a source whose server is down.
      statement: SELECT id, name FROM pgtest.items ORDER BY id
)";

// A failed call's message names the source and (when unset) its variable, and nothing of a DSN.
void expectSafeSourceError(const Result<protocol::ToolOutput>& r, const std::string& source,
                           const std::string& must_also_name) {
  ASSERT_FALSE(r.ok());
  const std::string text = operatorText(r.error());
  EXPECT_NE(text.find("source '" + source + "'"), std::string::npos) << text;
  EXPECT_NE(text.find(must_also_name), std::string::npos) << text;
  const std::string dsn = requireEnv("POSTGRES_DSN");
  EXPECT_EQ(text.find(dsn), std::string::npos) << "the DSN leaked";
  EXPECT_EQ(text.find("down-secret-value"), std::string::npos) << text;
  EXPECT_EQ(text.find("password"), std::string::npos) << text;
}

TEST(PostgresSources, EachSourceServesItsOwnToolsAndReportsItself) {
  Engine e(kThreeSources);
  protocol::CallContext main_ctx;
  auto main = e.call("main_items", main_ctx);
  ASSERT_TRUE(main.ok()) << operatorText(main.error());
  EXPECT_GT(main->rows, 1U);
  EXPECT_EQ(main_ctx.audit.source, "main");
  EXPECT_FALSE(main_ctx.audit.truncated);

  protocol::CallContext second_ctx;
  auto second = e.call("second_items", second_ctx);
  ASSERT_TRUE(second.ok()) << operatorText(second.error());
  EXPECT_EQ(second->rows, 1U);
  EXPECT_EQ(second_ctx.audit.source, "second");
  EXPECT_TRUE(second_ctx.audit.truncated) << "max_rows 1 cut the result";
  EXPECT_TRUE(second->structured["truncated"].get<bool>());
}

TEST(PostgresSources, AFailingSourceFailsOnlyItsOwnToolsAndSaysWhich) {
  Engine e(kThreeSources);
  protocol::CallContext missing_ctx;
  auto missing = e.call("missing_items", missing_ctx);
  expectSafeSourceError(missing, "missing", kUnsetVar);
  EXPECT_EQ(missing_ctx.audit.source, "missing") << "set before anything can fail";

  protocol::CallContext down_ctx;
  auto down = e.call("down_items", down_ctx);
  expectSafeSourceError(down, "down", "connect");
  EXPECT_EQ(down_ctx.audit.source, "down");

  // The working sources are unaffected, before and after the failing ones are called again.
  for (int round = 0; round < 2; ++round) {
    for (const char* tool : {"main_items", "second_items"}) {
      protocol::CallContext ctx;
      auto r = e.call(tool, ctx);
      EXPECT_TRUE(r.ok()) << tool << ": " << operatorText(r.error());
    }
    protocol::CallContext again;
    EXPECT_FALSE(e.call("missing_items", again).ok());
  }
}

TEST(PostgresSources, DoctorChecksEverySourceAndNamesIt) {
  Engine e(kThreeSources);
  const auto findings = e.module->selfCheck(e.services);
  std::vector<std::string> seen;
  for (const auto& f : findings) {
    const auto end = f.message.find("': ");
    ASSERT_TRUE(f.message.starts_with("source '") && end != std::string::npos) << f.message;
    const std::string source = f.message.substr(8, end - 8);
    if (seen.empty() || seen.back() != source) seen.push_back(source);
    if (source == "missing" || source == "down") {
      EXPECT_TRUE(f.severity == Sev::Inconclusive) << f.check << ": " << f.message;
      EXPECT_EQ(f.message.find("down-secret-value"), std::string::npos) << f.message;
    } else {
      EXPECT_TRUE(f.severity == Sev::Ok || f.severity == Sev::Info) << f.check << ": " << f.message;
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"main", "second", "missing", "down"}));

  const auto tools = e.module->checkTools(e.services);
  ASSERT_EQ(tools.size(), 4U);
  EXPECT_TRUE(tools[0].message.starts_with("source 'main': ")) << tools[0].message;
  EXPECT_EQ(tools[0].severity, Sev::Ok) << tools[0].message;
  EXPECT_TRUE(tools[2].message.starts_with("source 'missing': ")) << tools[2].message;
  EXPECT_NE(tools[2].message.find(kUnsetVar), std::string::npos) << tools[2].message;
  EXPECT_EQ(tools[2].severity, Sev::Inconclusive);
}

TEST(PostgresSources, WithoutSourcesTheImplicitDefaultIsUnchanged) {
  Engine e(R"(
postgres:
  tools:
    items:
      description: Items.
      statement: SELECT id FROM pgtest.items ORDER BY id
)");
  EXPECT_TRUE(e.module->enabled(e.env));
  protocol::CallContext ctx;
  auto r = e.call("items", ctx);
  ASSERT_TRUE(r.ok()) << operatorText(r.error());
  EXPECT_EQ(ctx.audit.source, "default");
  // One source: doctor's messages are as they always were.
  for (const auto& f : e.module->checkTools(e.services))
    EXPECT_FALSE(f.message.starts_with("source ")) << f.message;
}

TEST(PostgresSources, EnabledWhenAnyDeclaredSourcesVariableIsSet) {
  Engine e(R"(
postgres:
  sources:
    a: {dsn_env: MCPDB_TEST_PG_UNSET_DSN}
    b: {dsn_env: MCPDB_TEST_PG_SECOND_DSN}
  tools:
    items: {source: a, description: Items., statement: SELECT 1 AS one}
)");
  EXPECT_TRUE(e.module->enabled(e.env));
  EXPECT_FALSE(e.module->enabled(Env::fromMap({{"POSTGRES_DSN", "host=x"}})))
      << "a declared source reads only its own variable";
  EXPECT_TRUE(e.module->enabled(Env::fromMap({{"MCPDB_TEST_PG_UNSET_DSN", "host=x"}})));
}

}  // namespace
}  // namespace mcpdb::postgres::itest
