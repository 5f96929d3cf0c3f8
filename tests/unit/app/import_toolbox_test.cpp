// import-toolbox: both Toolbox forms give the same config; nothing unsafe is converted; no
// credential of the Toolbox file reaches the output; what is written passes check-config.
#include "app/import_toolbox.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/app.hpp"

namespace mcpdb::app {
namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(MCPDB_SOURCE_DIR) / "tests/fixtures/toolbox";
const char* kLiteralSecret = "Literal-Secret-In-Toolbox-File-91";

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ToolboxImport convertFixture(const char* name) {
  auto made = convertToolbox(readFile(kFixtures / name), name);
  EXPECT_TRUE(made) << (made ? "" : made.error().message);
  return made ? *made : ToolboxImport{};
}

std::string everything(const ToolboxImport& r) {
  std::string all = r.config + r.env_template;
  for (const auto* list : {&r.converted, &r.refused, &r.notes}) {
    for (const auto& s : *list) all += s + "\n";
  }
  return all;
}

bool mentions(const std::vector<std::string>& list, std::string_view what) {
  for (const auto& s : list) {
    if (s.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(ImportToolbox, BothFormsGiveTheSameConfig) {
  const auto maps = convertFixture("docs_maps.yaml");
  const auto documents = convertFixture("docs_documents.yaml");
  // The config without its header (which names the file it came from).
  EXPECT_EQ(YAML::Dump(YAML::Load(maps.config)), YAML::Dump(YAML::Load(documents.config)));
  EXPECT_EQ(maps.env_template, documents.env_template);
  EXPECT_EQ(maps.converted, documents.converted);
  EXPECT_EQ(maps.refused, documents.refused);
}

TEST(ImportToolbox, ConvertsSqlToolsWithTheirParametersAndNamedSources) {
  const auto r = convertFixture("docs_maps.yaml");
  const YAML::Node c = YAML::Load(r.config);
  EXPECT_EQ(c["postgres"]["sources"]["docs_pg"]["dsn_env"].as<std::string>(),
            "POSTGRES_DSN_DOCS_PG");
  EXPECT_EQ(c["mysql"]["sources"]["docs_mysql"]["dsn_env"].as<std::string>(),
            "MYSQL_DSN_DOCS_MYSQL");
  const YAML::Node get = c["postgres"]["tools"]["get-document"];
  EXPECT_EQ(get["source"].as<std::string>(), "docs_pg");
  EXPECT_EQ(get["parameters"][0]["name"].as<std::string>(), "doc_id");  // was docId
  const YAML::Node recent = c["postgres"]["tools"]["list-recent-documents"]["parameters"];
  EXPECT_EQ(recent[0]["enum"].size(), 5U);
  EXPECT_FALSE(recent[1]["required"].as<bool>());
  EXPECT_EQ(recent[1]["default"].as<int>(), 5);
  EXPECT_EQ(c["postgres"]["tools"]["documents-with-tags"]["parameters"][0]["items"]["type"]
                .as<std::string>(),
            "string");
  EXPECT_TRUE(c["mysql"]["tools"]["get-document-mysql"]);
  EXPECT_TRUE(mentions(r.notes, "docId is named doc_id"));
  EXPECT_TRUE(mentions(r.notes, "authRequired"));
  // The toolsets as the scopes of keys, with only what was converted.
  EXPECT_NE(r.config.find("keys new --name readers --scope "
                          "mysql:get-document-mysql,postgres:get-document:list-recent-documents"),
            std::string::npos)
      << r.config;
}

TEST(ImportToolbox, RefusesWhatHasNoSafeEquivalentWithTheReason) {
  const auto r = convertFixture("docs_maps.yaml");
  EXPECT_TRUE(mentions(r.refused, "tool run-any-sql: type postgres-execute-sql runs any SQL"));
  EXPECT_TRUE(mentions(r.refused, "tool documents-of-table: templateParameters"));
  EXPECT_TRUE(mentions(r.refused, "source analytics: type bigquery"));
  EXPECT_TRUE(mentions(r.refused, "tool top-queries"));
  const YAML::Node c = YAML::Load(r.config);
  for (const char* t : {"run-any-sql", "documents-of-table", "top-queries"}) {
    EXPECT_FALSE(c["postgres"]["tools"][t]) << t;
  }
  // The write statement is not the converter's to judge: the command's check refuses it (below).
  EXPECT_TRUE(c["postgres"]["tools"]["archive-document"]);
}

TEST(ImportToolbox, NoCredentialOfTheFileReachesTheOutput) {
  for (const char* f : {"docs_maps.yaml", "docs_documents.yaml"}) {
    const auto r = convertFixture(f);
    EXPECT_EQ(everything(r).find(kLiteralSecret), std::string::npos) << f;
    EXPECT_NE(r.env_template.find("MYSQL_DSN_DOCS_MYSQL=mysql://mcpdb_ro:CHANGE_ME@"),
              std::string::npos)
        << r.env_template;
    // A ${VAR} reference is kept: it names a variable, not a value.
    EXPECT_NE(r.env_template.find("${DOCS_PG_PASSWORD}"), std::string::npos);
    EXPECT_EQ(r.config.find("password"), std::string::npos);
    EXPECT_TRUE(mentions(r.notes, "source docs-mysql: its password is written in the Toolbox"));
  }
}

TEST(ImportToolbox, TheWrittenConfigPassesCheckConfigAndTheGuardsRefusalIsListed) {
  for (const char* f : {"docs_maps.yaml", "docs_documents.yaml"}) {
    SCOPED_TRACE(f);
    const auto out = std::filesystem::temp_directory_path() /
                     ("mcpdb-import-test-" + std::to_string(::getpid()) + ".yaml");
    std::ostringstream stdout_text;
    std::ostringstream report;
    ASSERT_EQ(runImportToolbox((kFixtures / f).string(), out.string(), stdout_text, report),
              kExitOk)
        << report.str();
    EXPECT_NE(report.str().find("refused: tool archive-document: refused by this server's "
                                "checks: refused by the SQL guard"),
              std::string::npos)
        << report.str();
    EXPECT_EQ(report.str().find(kLiteralSecret), std::string::npos);
    AppOptions o;
    o.config_path = out.string();
    std::ostringstream cc_out;
    std::ostringstream cc_err;
    EXPECT_EQ(runCheckConfig(o, Env::fromMap({}), false, cc_out, cc_err), kExitOk) << cc_err.str();
    EXPECT_NE(cc_out.str().find("4 declared by the config"), std::string::npos) << cc_out.str();
    EXPECT_EQ(readFile(out.string() + ".env").find(kLiteralSecret), std::string::npos);
    std::filesystem::remove(out);
    std::filesystem::remove(out.string() + ".env");
  }
}

TEST(ImportToolbox, WhatIsNotAToolboxFileIsRefusedWithAReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "not a Toolbox tools file"},
      {"postgres:\n  tools: {}\n", "not a Toolbox tools file"},
      {"sources: [1, 2\n", "YAML syntax error"},
      {"kind: widget\nname: x\n", "is not one of source, tool, toolset"},
      {"kind: tool\ntype: postgres-sql\n", "has no name"},
      {"sources: [a, b]\n", "sources: not a map"},
      {"sources:\n  [a]: {kind: postgres}\n", "unexpected shape"},
      {"a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e]\n"
       "tools: [*f]\n",
       "alias"},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    auto r = convertToolbox(text, "x.yaml");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find(expected), std::string::npos)
        << text << " -> " << r.error().message;
  }
}

TEST(ImportToolbox, OddNamesAreMadeValidOrRefusedNeverPassedThrough) {
  const char* text = R"(sources:
  a-b: {kind: postgres, host: h, database: d, user: u}
  a_b: {kind: postgres, host: h, database: d, user: u}
  Main.DB: {kind: mysql, host: h, database: d, user: u}
tools:
  "bad name!": {kind: postgres-sql, source: a-b, description: x, statement: SELECT 1}
  ok-one: {kind: postgres-sql, source: a_b, description: x, statement: SELECT 1}
  on-wrong-engine: {kind: mysql-sql, source: a-b, description: x, statement: SELECT 1}
  no-source: {kind: postgres-sql, source: nope, description: x, statement: SELECT 1}
  map-param:
    kind: postgres-sql
    source: a-b
    description: x
    statement: SELECT $1::text
    parameters: [{name: m, type: map, description: x}]
)";
  auto r = convertToolbox(text, "x.yaml");
  ASSERT_TRUE(r) << r.error().message;
  const YAML::Node c = YAML::Load(r->config);
  // Two sources whose names fold to one identifier stay two sources.
  EXPECT_TRUE(c["postgres"]["sources"]["a_b"]);
  EXPECT_TRUE(c["postgres"]["sources"]["a_b_2"]);
  EXPECT_TRUE(c["mysql"]["sources"]["main_db"]);
  EXPECT_TRUE(mentions(r->refused, "tool bad name!: the name is not a valid MCP tool name"));
  EXPECT_TRUE(mentions(r->refused, "tool on-wrong-engine: a mysql-sql tool on a postgres source"));
  EXPECT_TRUE(mentions(r->refused, "tool no-source: its source 'nope' was not converted"));
  EXPECT_TRUE(mentions(r->refused, "tool map-param: parameter m is a map"));
  EXPECT_TRUE(c["postgres"]["tools"]["ok-one"]);
  EXPECT_EQ(c["postgres"]["tools"]["ok-one"]["source"].as<std::string>(), "a_b_2");
}

}  // namespace
}  // namespace mcpdb::app
