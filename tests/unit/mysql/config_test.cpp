// The `mysql:` section: golden bad configs with exact messages (every statement shape the guard
// refuses is refused at load, naming the tool and the reason), what a good one yields, and the
// declaration against the built-in section.
#include <gtest/gtest.h>

#include <filesystem>

#include "config/config.hpp"
#include "engines/mysql/config.hpp"
#include "engines/mysql/module.hpp"
#include "engines/mysql/runtime.hpp"
#include "support/golden.hpp"

namespace mcpdb::mysql {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = fs::path(MCPDB_SOURCE_DIR) / "tests/unit/mysql/configs";

struct Parsed {
  Settings settings;
  std::vector<std::string> errors;
};

Parsed parse(const std::string& text, const std::string& file) {
  config::Diagnostics diag(file);
  config::Config cfg = config::parseConfig(text, file, {"mysql"}, diag);
  Parsed p;
  if (diag.ok()) {
    config::Node root(cfg.root, "", diag);
    p.settings = parseSettings(root.child("mysql"), cfg.limits);
  }
  p.errors = diag.errors();
  return p;
}

TEST(MysqlConfig, GoldenBadConfigs) {
  const int cases = testsupport::checkGoldenBadConfigs(
      kConfigs, ".errors",
      [](const std::string& text, const std::string& name) { return parse(text, name).errors; });
  EXPECT_GE(cases, 10);
}

TEST(MysqlConfig, EveryRefusedStatementNamesItsToolAndRule) {
  const Parsed p = parse(testsupport::readFile(kConfigs / "refused_statements.yaml"), "r.yaml");
  ASSERT_EQ(p.errors.size(), 14U);
  for (const char* tool :
       {"write", "outfile", "lock", "sleep", "getlock", "variable", "versioned", "mariadb_comment",
        "hint", "two", "handler", "table", "values_row", "quoting"}) {
    bool found = false;
    for (const auto& e : p.errors) {
      found = found || (e.find("mysql.tools." + std::string(tool) +
                               ".statement: refused by the "
                               "MySQL guard (") != std::string::npos);
    }
    EXPECT_TRUE(found) << tool;
  }
  EXPECT_TRUE(p.settings.tools.empty());
}

TEST(MysqlConfig, GoodSectionFields) {
  const Parsed p = parse(R"(
limits: {max_rows: 80, timeout_ms: 4000}
mysql:
  sources:
    main: {dsn_env: MYSQL_DSN}
    reports: {dsn_env: REPORTS_MYSQL_DSN}
  pool: {size: 2}
  limits: {max_rows: 60}
  allowed_functions: [Demo.Safe_Fn]
  tools:
    by_id:
      source: reports
      description: One row.
      statement: SELECT id, demo.safe_fn(id) AS v FROM documents WHERE id = ? LIMIT ?
      parameters:
        - {name: id, type: string, description: The id.}
        - {name: n, type: integer, description: How many., default: 5, min: 1, max: 10}
      limits: {max_rows: 10}
      fence: always
)",
                         "good.yaml");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  const Settings& s = p.settings;
  ASSERT_EQ(s.sources.size(), 2U);
  EXPECT_EQ(s.pool.size, 2U);
  EXPECT_EQ(s.limits.max_rows, 60U);
  ASSERT_EQ(s.tools.size(), 1U);
  const QueryTool& t = s.tools[0];
  EXPECT_EQ(t.title, "By id");
  EXPECT_EQ(t.limits.max_rows, 10U);
  EXPECT_EQ(t.limits.timeout.count(), 4000);
  EXPECT_EQ(t.fence, Fence::Always);
  ASSERT_EQ(t.parameters.size(), 2U);
  EXPECT_FALSE(t.parameters[1].required);
  ASSERT_NE(s.sourceOf(t), nullptr);
  EXPECT_EQ(s.sourceOf(t)->dsn_env, "REPORTS_MYSQL_DSN");
  ASSERT_EQ(t.called_functions.size(), 1U);
  EXPECT_EQ(guard::displayName(t.called_functions[0]), "demo.safe_fn");
  ASSERT_EQ(t.relations.size(), 1U);
  EXPECT_EQ(guard::displayName(t.relations[0]), "documents");
  EXPECT_EQ(sourceEnvNames(s), (std::vector<std::string>{"MYSQL_DSN", "REPORTS_MYSQL_DSN"}));
}

TEST(MysqlConfig, WithoutSourcesOneDefaultSourceReadsMysqlDsn) {
  const Parsed p = parse("mysql:\n  tools:\n    t: {description: d, statement: SELECT 1}\n", "d");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.settings.sources.size(), 1U);
  EXPECT_EQ(p.settings.sources[0].name, "default");
  EXPECT_EQ(p.settings.sources[0].dsn_env, "MYSQL_DSN");
  EXPECT_NE(p.settings.sourceOf(p.settings.tools[0]), nullptr);
}

TEST(MysqlConfig, BuiltInSectionIsValidAndDescribedByTheDeclaration) {
  const Parsed p = parse("version: 1\n" + std::string(defaultSectionText()), "default");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  EXPECT_EQ(p.settings.tools.size(), 3U);
  const Json schema = settingsSection().jsonSchema();
  const YAML::Node doc = YAML::Load(std::string(defaultSectionText()));
  for (const auto& kv : doc["mysql"]) {
    EXPECT_TRUE(schema["properties"].contains(kv.first.as<std::string>()))
        << kv.first.as<std::string>();
  }
  const Json tool = schema["properties"]["tools"]["additionalProperties"];
  for (const auto& kv : doc["mysql"]["tools"]) {
    for (const auto& key : kv.second) {
      EXPECT_TRUE(tool["properties"].contains(key.first.as<std::string>()))
          << key.first.as<std::string>();
    }
  }
  EXPECT_EQ(tool["required"], Json::array({"description", "statement"}));
}

// Arguments become typed parameters in declaration order; hostile values get clear errors that
// never quote them.
TEST(MysqlArguments, BindInOrderWithDefaultsAndRefuseHostileValues) {
  const Parsed p = parse(R"(
mysql:
  tools:
    t:
      description: d
      statement: SELECT ? , ?, ?, ?, ?
      parameters:
        - {name: s, type: string, description: s, max_length: 8, pattern: "^[a-z]+$"}
        - {name: i, type: integer, description: i, min: 1, max: 100}
        - {name: f, type: float, description: f, required: false}
        - {name: b, type: boolean, description: b, default: true}
        - {name: ts, type: timestamp, description: ts, required: false}
)",
                         "args.yaml");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  const auto& params = p.settings.tools[0].parameters;
  auto ok = bindArguments(params, {{"s", "abc"}, {"i", 5}, {"ts", "2024-01-15T10:20:30Z"}});
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->size(), 5U);
  EXPECT_EQ(std::get<std::string>((*ok)[0]), "abc");
  EXPECT_EQ(std::get<std::int64_t>((*ok)[1]), 5);
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>((*ok)[2]));
  EXPECT_EQ(std::get<std::int64_t>((*ok)[3]), 1);
  EXPECT_EQ(std::get<std::string>((*ok)[4]), "2024-01-15 10:20:30");

  const std::vector<std::pair<Json, std::string>> hostile = {
      {{{"s", "x' OR 1=1 -- "}, {"i", 5}}, "arguments.s"},
      {{{"s", std::string("ab\0c", 4)}, {"i", 5}}, "arguments.s"},
      {{{"s", std::string(100000, 'a')}, {"i", 5}}, "arguments.s"},
      {{{"s", "abc"}, {"i", 101}}, "arguments.i"},
      {{{"s", "abc"}, {"i", "5; DROP TABLE x"}}, "arguments.i"},
      {{{"s", "abc"}, {"i", 1.5}}, "arguments.i"},
      {{{"s", "abc"}, {"i", 5}, {"f", "NaN"}}, "arguments.f"},
      {{{"s", "abc"}, {"i", 5}, {"ts", "2024-01-15T10:20:30+02:00"}}, "arguments.ts"},
      {{{"s", "abc"}, {"i", 5}, {"extra", 1}}, "arguments"},
      {{{"i", 5}}, "arguments.s"},
  };
  for (const auto& [args, where] : hostile) {
    auto r = bindArguments(params, args);
    ASSERT_FALSE(r) << args.dump();
    EXPECT_EQ(r.error().code, Code::InvalidArgument);
    EXPECT_EQ(r.error().message.rfind(where, 0), 0U) << r.error().message;
    EXPECT_EQ(r.error().message.find("OR 1=1"), std::string::npos);
    EXPECT_EQ(r.error().message.find("DROP"), std::string::npos);
  }
}

}  // namespace
}  // namespace mcpdb::mysql
