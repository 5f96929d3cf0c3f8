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
#include "engines/mysql/dsn.hpp"

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

// The defect class: text of the Toolbox file written outside the YAML emitter (comments of the
// config and of the .env template, lines of the report) or into a DSN. A line break there ends a
// comment and adds a config key or an environment variable of the file's choosing; an '@' or '/'
// in a user or database name changes what the DSN means; an escape sequence reaches the terminal.
TEST(ImportToolbox, NoTextOfTheFileEscapesItsPlaceInTheWrittenFiles) {
  const std::string breaks[] = {"\n",       "\r",           "\r\n", "\x1b[2J",
                                "\xc2\x85", "\xe2\x80\xa8", "\x7f", "\\"};
  for (const auto& br : breaks) {
    SCOPED_TRACE(::testing::PrintToString(br));
    const std::string payload = "x" + br + "INJECTED: 1" + br + "#";
    YAML::Node file;
    YAML::Node src;
    src["kind"] = "mysql";
    src["password"] = "literal";
    src["host"] = "h" + br + "INJECTED=1";
    src["port"] = "3306" + br + "INJECTED=1";
    src["user"] = "u@h:" + br + "INJECTED=1";
    src["database"] = "d/b?x" + br + "INJECTED=1";
    src["queryParams"]["ssl-mode" + br + "INJECTED"] = "REQUIRED" + br + "INJECTED=1";
    file["sources"]["s" + br + "INJECTED=1"] = src;
    YAML::Node tool;
    tool["kind"] = "mysql-sql";
    tool["source"] = "s" + br + "INJECTED=1";
    tool["description"] = "d";
    tool["statement"] = "SELECT 1";
    file["tools"]["t"] = tool;
    file["toolsets"][payload].push_back("t");
    file["toolsets"]["none" + br + "INJECTED: 2"].push_back("nothing");
    YAML::Emitter e;
    e << file;
    auto r = convertToolbox(e.c_str(), "file" + br + "INJECTED: 3.yaml");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(mentions(r->converted, "tool t")) << everything(*r);

    // The config: a block of comment lines (three of the header, one per toolset), then the
    // emitter's YAML, which has no comment line; no byte outside printable ASCII in a comment.
    std::istringstream config(r->config);
    std::string line;
    int comments = 0;
    bool in_yaml = false;
    while (std::getline(config, line)) {
      if (line.rfind('#', 0) == 0) {
        EXPECT_FALSE(in_yaml) << r->config;
        ++comments;
        for (const char c : line) {
          EXPECT_TRUE(c >= 0x20 && c < 0x7f) << r->config;
        }
      } else {
        in_yaml = true;
      }
    }
    EXPECT_EQ(comments, 5) << r->config;
    const YAML::Node c = YAML::Load(r->config);
    EXPECT_FALSE(c["INJECTED"]) << r->config;
    ASSERT_TRUE(c["mysql"]["tools"]["t"]) << r->config;

    // The .env template: one comment and one NAME=VALUE line, nothing else; the DSN reads back
    // as the parts the file gave.
    std::istringstream env(r->env_template);
    std::vector<std::string> lines;
    while (std::getline(env, line)) lines.push_back(line);
    ASSERT_EQ(lines.size(), 2u) << r->env_template;
    EXPECT_EQ(lines[0].rfind("# Toolbox source ", 0), 0u);
    for (const char ch : lines[0]) {
      EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << lines[0];
    }
    const std::string prefix = lines[1].substr(0, lines[1].find('=') + 1);
    ASSERT_EQ(prefix.rfind("MYSQL_DSN_S_", 0), 0u) << lines[1];
    for (const char ch : prefix.substr(0, prefix.size() - 1)) {
      EXPECT_TRUE((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_') << lines[1];
    }
    for (const char ch : lines[1]) {
      EXPECT_TRUE(ch > 0x20 && ch < 0x7f) << lines[1];
    }
    auto dsn = mysql::parseDsn(lines[1].substr(prefix.size()));
    // The port is not a number and the host not a host name: the DSN is refused, never read as
    // another port or host.
    EXPECT_FALSE(dsn) << lines[1];
    std::string fixed = lines[1].substr(prefix.size());
    const auto port_at = fixed.find(":3306");
    ASSERT_NE(port_at, std::string::npos) << fixed;
    fixed.replace(port_at, fixed.find('/', port_at) - port_at, ":3306");
    // So was the host (a host name has no line break): the parts that round-trip are the rest.
    const auto at = fixed.find('@');
    ASSERT_LT(at, port_at) << fixed;
    fixed.replace(at + 1, port_at - at - 1, "h");
    dsn = mysql::parseDsn(fixed.substr(0, fixed.find('?')));
    ASSERT_TRUE(dsn) << fixed;
    EXPECT_EQ(dsn->user, "u@h:" + br + "INJECTED=1");
    EXPECT_EQ(dsn->database, "d/b?x" + br + "INJECTED=1");

    // The report as runImportToolbox prints it: printable ASCII lines only (the note about the
    // literal password names the source).
    const auto path = std::filesystem::temp_directory_path() /
                      ("mcpdb-import-odd-" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(path) << e.c_str();
    std::ostringstream out;
    std::ostringstream report;
    EXPECT_EQ(runImportToolbox(path.string(), "", out, report), kExitOk) << report.str();
    std::filesystem::remove(path);
    EXPECT_NE(report.str().find("note: source s"), std::string::npos) << report.str();
    for (const char ch : report.str()) {
      EXPECT_TRUE(ch == '\n' || (ch >= 0x20 && ch < 0x7f)) << report.str();
    }
  }
}

}  // namespace
}  // namespace mcpdb::app
