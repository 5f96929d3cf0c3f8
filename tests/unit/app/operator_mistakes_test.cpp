// Operator mistakes the application must name (issue #16): each is a config or environment an
// operator could really write, and each must be refused or warned about with what, where and how
// to fix, never accepted in silence. The doctor's outcomes against real servers are in
// tests/e2e/operator_mistakes.test.mjs.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/app.hpp"
#include "auth/api_key.hpp"

namespace mcpdb::app {
namespace {

class OperatorMistakes : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& p : files_) std::filesystem::remove(p);
  }

  std::string write(const std::string& text) {
    const auto path =
        std::filesystem::temp_directory_path() / ("mcpdb-mistake-" + std::to_string(::getpid()) +
                                                  "-" + std::to_string(files_.size()) + ".yaml");
    std::ofstream(path) << text;
    files_.push_back(path);
    return path.string();
  }

  // check-config on `text`: exit code, stdout, stderr.
  struct Run {
    int code;
    std::string out;
    std::string err;
  };
  Run checkConfig(const std::string& text, const Env& env = Env::fromMap({}), bool json = false) {
    AppOptions o;
    o.config_path = write(text);
    std::ostringstream out;
    std::ostringstream err;
    const int code = runCheckConfig(o, env, json, out, err);
    return {code, out.str(), err.str()};
  }

  std::vector<std::filesystem::path> files_;
};

const char* kPgTools = R"(postgres:
  tools:
    list_items:
      kind: postgres-sql
      description: Items
      statement: SELECT 1 AS one
)";

// kPgTools plus an http section with two clients (each on 3 lines: the scopes on lines 11, 14).
std::string twoClients(const std::string& first, const std::string& first_scope,
                       const std::string& second, const std::string& second_scope) {
  std::string text = std::string(kPgTools) + "http:\n  clients:\n";
  for (const auto& [name, scope] : {std::pair{first, first_scope}, {second, second_scope}}) {
    text += "    - name: " + name +
            "\n      key_sha256: " + auth::toHex(auth::sha256("test-key-of-" + name)) +
            "\n      scope: " + scope + "\n";
  }
  return text;
}

TEST_F(OperatorMistakes, LogLevelIsCaseInsensitiveAndAcceptsWarning) {
  for (const char* ok : {"info", "INFO", "Warning", "warning", "warn", "ERROR", "off", "trace"}) {
    EXPECT_TRUE(parseLogLevel(ok).has_value()) << ok;
  }
  EXPECT_EQ(parseLogLevel("WARNING"), parseLogLevel("warn"));
  for (const char* bad : {"verbose", "", "inf", "warning ", "1"}) {
    EXPECT_FALSE(parseLogLevel(bad).has_value()) << bad;
  }
}

TEST_F(OperatorMistakes, AnInvalidLogLevelIsAnEnvironmentErrorThatSaysWhatIsValid) {
  const auto r = checkConfig(
      kPgTools, Env::fromMap({{"MCPDB_LOG_LEVEL", "verbose"}, {"POSTGRES_DSN", "postgresql://x"}}));
  EXPECT_EQ(r.code, kExitConfig);
  // Reported against the variable: the config file is not at fault.
  EXPECT_NE(r.err.find("the environment is invalid (1 problem):\n  MCPDB_LOG_LEVEL='verbose' is "
                       "not a log level"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("configuration is invalid"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("trace, debug, info, warning, error, critical or off"), std::string::npos);
  const auto typo = checkConfig(
      kPgTools, Env::fromMap({{"MCPDB_LOG_LEVEL", "warnign"}, {"POSTGRES_DSN", "postgresql://x"}}));
  EXPECT_NE(typo.err.find("did you mean 'warning'?"), std::string::npos) << typo.err;
  const auto upper = checkConfig(
      kPgTools, Env::fromMap({{"MCPDB_LOG_LEVEL", "INFO"}, {"POSTGRES_DSN", "postgresql://x"}}));
  EXPECT_EQ(upper.code, kExitOk) << upper.err;
}

TEST_F(OperatorMistakes, EnvironmentAndConfigMistakesAreReportedInOneRunEachAgainstItsOwner) {
  const auto r =
      checkConfig("postgres:\n  toolz: {}\n", Env::fromMap({{"MCPDB_LOG_LEVEL", "loud"}}));
  EXPECT_EQ(r.code, kExitConfig);
  EXPECT_NE(r.err.find("the environment is invalid (1 problem):\n  MCPDB_LOG_LEVEL='loud'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("configuration is invalid (1 problem):"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("toolz"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(": MCPDB_LOG_LEVEL"), std::string::npos) << r.err;  // not under the file
}

TEST_F(OperatorMistakes, AClientScopeNamingAnUnknownEngineOrToolIsRefusedWithItsLine) {
  const std::string text = twoClients("analyst", "postgress", "bot", "postgres:list_itemz,oracle");
  const auto r = checkConfig(text);
  EXPECT_EQ(r.code, kExitConfig);
  EXPECT_NE(r.err.find(":11: http.clients.analyst.scope: scope names engine 'postgress', which "
                       "this server does not have; did you mean 'postgres'?"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(":14: http.clients.bot.scope: scope names tool 'list_itemz' of engine "
                       "'postgres', which the config does not define; did you mean 'list_items'?"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("scope names engine 'oracle'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("3 problems"), std::string::npos) << r.err;  // all of them in one pass
}

TEST_F(OperatorMistakes, CheckConfigPrintsWhatEachClientCanSee) {
  const std::string text = twoClients("analyst", "postgres:list_items", "mongo-only", "mongodb");
  const auto r = checkConfig(text, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"}}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("  - analyst (scope postgres:list_items): 1 tool: list_items\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  - mongo-only (scope mongodb): 0 tools\n"), std::string::npos) << r.out;
  const auto j = checkConfig(text, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"}}), true);
  const Json parsed = Json::parse(j.out);
  EXPECT_EQ(parsed["clients"][0]["tools"], Json::array({"list_items"}));
  EXPECT_EQ(parsed["clients"][1]["tools"], Json::array());
}

TEST_F(OperatorMistakes, ScopeCheckOfKeysNew) {
  AppOptions o;
  o.config_path = write(kPgTools);
  std::ostringstream err;
  const Env env = Env::fromMap({});
  auto check = [&](const char* text) {
    auto scope = auth::Scope::parse(text);
    EXPECT_TRUE(scope) << text;
    return checkScope(o, env, *scope, err);
  };
  EXPECT_TRUE(check("postgres"));
  EXPECT_TRUE(check("postgres:list_items"));
  EXPECT_TRUE(check("*"));
  const auto engine = check("postgresql");
  ASSERT_FALSE(engine);
  EXPECT_NE(engine.error().message.find("did you mean 'postgres'?"), std::string::npos)
      << engine.error().message;
  const auto tool = check("postgres:list_item");
  ASSERT_FALSE(tool);
  EXPECT_NE(tool.error().message.find("did you mean 'list_items'?"), std::string::npos);
  // An engine this config gives no tools: the key would see nothing.
  const auto nothing = check("mongodb");
  ASSERT_FALSE(nothing);
  EXPECT_NE(nothing.error().message.find("lets the client see no tool"), std::string::npos);
}

TEST_F(OperatorMistakes, AnEngineDeclaredWithoutItsEnvironmentIsNamed) {
  // check-config reports it (serve refuses it: EnvironmentRefusals below).
  const auto r = checkConfig(kPgTools);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("warning: " + files_.back().string() +
                       ":2: postgres: the config declares postgres tools, but the environment "
                       "does not set POSTGRES_DSN: `serve` refuses to start (set POSTGRES_DSN"),
            std::string::npos)
      << r.out;
  // server.require_environment, once the opt-in to the refusal, is accepted.
  const auto legacy = checkConfig(std::string("server: {require_environment: true}\n") + kPgTools);
  EXPECT_EQ(legacy.code, kExitOk) << legacy.err;
  const auto optional = checkConfig(std::string(kPgTools) + "  optional: true\n");
  EXPECT_EQ(optional.code, kExitOk) << optional.err;
  EXPECT_NE(optional.out.find("so they are not served (postgres.optional is true"),
            std::string::npos)
      << optional.out;
  const auto set = checkConfig(kPgTools, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"}}));
  EXPECT_EQ(set.out.find("warning:"), std::string::npos) << set.out;
}

// Issue #30: serve refuses a config file that declares tools for an engine whose environment is
// unset, naming the variables and the section's line, unless the section says `optional: true`;
// the built-in allowlist serves what the environment enables.
TEST_F(OperatorMistakes, EnvironmentRefusals) {
  auto refusals = [this](const std::string* text, const Env& env) {
    AppOptions o;
    if (text != nullptr) o.config_path = write(*text);
    std::ostringstream err;
    auto a = assemble(o, env, /*all_engines=*/false, err);
    EXPECT_TRUE(a) << err.str();
    return a ? environmentRefusals(*a, env) : std::vector<std::string>{"not assembled"};
  };
  const Env none = Env::fromMap({});
  // postgres: on line 2, its first key (the line named) on line 3
  const std::string pg = std::string("server: {}\n") + kPgTools;
  const auto refused = refusals(&pg, none);
  ASSERT_EQ(refused.size(), 1U);
  EXPECT_EQ(refused[0].rfind(files_.back().string() +
                                 ":3: postgres: the config declares postgres "
                                 "tools, but the environment does not set POSTGRES_DSN: set "
                                 "POSTGRES_DSN",
                             0),
            0U)
      << refused[0];
  EXPECT_NE(refused[0].find("postgres.optional: true"), std::string::npos) << refused[0];
  // Every engine, each naming its own variables (a named source's dsn_env too).
  const std::string several = std::string(kPgTools) + R"(mysql:
  sources:
    reports: {dsn_env: REPORTS_DSN}
  tools:
    t: {description: d, statement: SELECT 1 AS one}
mongodb:
  targets:
    docs: {collection: documents, description: d, projection: [title]}
)";
  const auto each = refusals(&several, none);
  ASSERT_EQ(each.size(), 3U);
  EXPECT_NE(
      each[1].find("mongodb tools, but the environment does not set MONGODB_URI, MONGODB_DATABASE"),
      std::string::npos)
      << each[1];
  EXPECT_NE(each[2].find(":8: mysql: the config declares mysql tools, but the environment does "
                         "not set REPORTS_DSN"),
            std::string::npos)
      << each[2];
  const std::string optional = std::string(kPgTools) + "  optional: true\n";
  EXPECT_TRUE(refusals(&optional, none).empty());
  EXPECT_TRUE(refusals(&pg, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"}})).empty());
  EXPECT_TRUE(refusals(nullptr, none).empty());  // the built-in allowlist
}

// Issue #30: a server with zero tools never starts; the reason says which case it is.
TEST_F(OperatorMistakes, ZeroToolsIsRefusedWithTheReason) {
  auto reason = [this](const std::string* text, const Env& env) {
    AppOptions o;
    if (text != nullptr) o.config_path = write(*text);
    std::ostringstream err;
    auto a = assemble(o, env, /*all_engines=*/false, err);
    EXPECT_TRUE(a) << err.str();
    return a ? zeroToolsRefusal(*a) : std::optional<std::string>("not assembled");
  };
  const Env none = Env::fromMap({});
  const auto builtIn = reason(nullptr, none);
  ASSERT_TRUE(builtIn);
  EXPECT_NE(builtIn->find("no engine is enabled by the environment. Enable one (see .env.example)"),
            std::string::npos)
      << *builtIn;
  EXPECT_NE(builtIn->find("MYSQL_DSN"), std::string::npos) << *builtIn;
  EXPECT_FALSE(reason(nullptr, Env::fromMap({{"MYSQL_DSN", "mysql://u@h/d"}})));
  const std::string empty = "server: {}\n";
  const auto none_declared = reason(&empty, none);
  ASSERT_TRUE(none_declared);
  EXPECT_NE(none_declared->find("declares no tools"), std::string::npos) << *none_declared;
  const std::string optional = std::string(kPgTools) + "  optional: true\n";
  const auto disabled = reason(&optional, none);
  ASSERT_TRUE(disabled);
  EXPECT_NE(disabled->find("is disabled (postgres: optional"), std::string::npos) << *disabled;
  EXPECT_FALSE(reason(&optional, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"}})));
}

// Issue #18: a cursor signing key too short to resist forgery is refused at load, with a message
// that says how long it must be and never shows the key.
TEST_F(OperatorMistakes, AShortCursorKeyIsRefusedAtLoad) {
  const auto r = checkConfig(
      kPgTools, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"}, {"MCPDB_CURSOR_KEY", "k3y-x"}}));
  EXPECT_EQ(r.code, kExitConfig) << r.out << r.err;
  EXPECT_NE(r.err.find("MCPDB_CURSOR_KEY is too short (5 bytes; at least 32"), std::string::npos)
      << r.err;
  EXPECT_EQ((r.out + r.err).find("k3y-x"), std::string::npos);
  const auto ok = checkConfig(kPgTools, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"},
                                                      {"MCPDB_CURSOR_KEY", std::string(32, 'k')}}));
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
}

TEST_F(OperatorMistakes, AToolNameClashAcrossEnginesSaysWhere) {
  const auto r = checkConfig(R"(postgres:
  tools:
    ok_tool:
      kind: postgres-sql
      description: fine
      statement: SELECT 1 AS one
    list_mongodb_targets:
      kind: postgres-sql
      description: clashes with the mongodb engine's tool
      statement: SELECT 1 AS one
mongodb:
  targets:
    docs:
      collection: docs
      projection: [title]
)");
  EXPECT_EQ(r.code, kExitConfig);
  EXPECT_NE(r.err.find(":7: mongodb: duplicate tool name 'list_mongodb_targets': the postgres and "
                       "mongodb engines both have a tool named 'list_mongodb_targets' "
                       "(postgres.tools.list_mongodb_targets); rename the configured one"),
            std::string::npos)
      << r.err;
}

// Names that differ only in case clash across engines too (an agent or a client may fold case),
// and the error says where the configured one is.
TEST_F(OperatorMistakes, AToolNameClashingOnlyInCaseAcrossEnginesSaysWhere) {
  const auto r = checkConfig(R"(mongodb:
  targets:
    docs:
      collection: docs
      projection: [title]
postgres:
  tools:
    List_MongoDB_Targets:
      kind: postgres-sql
      description: clashes with the mongodb engine's tool but for case
      statement: SELECT 1 AS one
)");
  EXPECT_EQ(r.code, kExitConfig);
  EXPECT_NE(r.err.find("differ only in case"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("engines both have a tool named like"), std::string::npos) << r.err;
}

TEST_F(OperatorMistakes, EveryProblemIsReportedInOnePass) {
  // A generic-section mistake no longer hides the engine sections' mistakes.
  const auto r = checkConfig(R"(server:
  self_check: refuze
postgres:
  tools:
    broken:
      kind: postgres-sql
      description: a write
      statement: DELETE FROM t
toolsets:
  everything: [broken, nothing_here]
embedding:
  provider: openia
)");
  EXPECT_EQ(r.code, kExitConfig);
  EXPECT_NE(r.err.find(":2: server.self_check"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("postgres.tools.broken.statement"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":12: embedding.provider: must be one of: use-lite, openai; did you mean "
                       "'openai'?"),
            std::string::npos)
      << r.err;
}

// check-config's text: what is served now is described; what is declared but not served is
// named with the reason; parameters read as an operator writes them.
const char* kServedAndNot = R"(postgres:
  tools:
    find_orders:
      kind: postgres-sql
      description: Orders of a customer in a date range
      statement: SELECT 1 AS one WHERE $1::int > 0 AND $2::date < $3::date
      parameters:
        - name: customer_id
          type: integer
          description: The customer.
          min: 1
          max: 1000
        - name: since
          type: date
          description: From.
        - name: until
          type: date
          description: To.
          required: false
mysql:
  tools:
    find_orders_mysql:
      kind: mysql-sql
      description: Orders
      statement: SELECT 1 AS one
)";

TEST_F(OperatorMistakes, CheckConfigDescribesWhatIsServedAndNamesWhatIsNot) {
  const auto r = checkConfig(kServedAndNot, Env::fromMap({{"POSTGRES_DSN", "postgresql://x"}}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // Served: the engine's posture, each tool with its source and readable parameters.
  EXPECT_NE(r.out.find("engine postgres: 1 tool, enabled by the environment\n  read-only: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  - find_orders: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(source "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      customer_id: integer (required, 1..1000)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("      since: string (date, required)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      until: string (date)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(\"integer\")"), std::string::npos) << r.out;  // not JSON-quoted
  // Declared but not served: named with the reason, not described.
  EXPECT_NE(r.out.find("engine mysql: 1 tool declared, not served: its environment is not set "
                       "(set MYSQL_DSN"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  find_orders_mysql\n"), std::string::npos) << r.out;
  const auto mysql_at = r.out.find("engine mysql:");
  EXPECT_EQ(r.out.find("read-only:", mysql_at), std::string::npos) << r.out;
  // Engines neither declared nor enabled: one line each, under "not used".
  EXPECT_NE(r.out.find("not used (no tools in the config, environment not set):\n  - "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n1 tool served now with this environment (2 declared by the config)\n"),
            std::string::npos)
      << r.out;
}

TEST_F(OperatorMistakes, CheckConfigSaysWhenNothingIsServed) {
  const auto r = checkConfig(kServedAndNot);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out.find("enabled by the environment"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n0 tools served now with this environment (2 declared by the config)\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace mcpdb::app
