#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/suggest.hpp"
#include "config/config.hpp"
#include "support/golden.hpp"

namespace mcpdb::config {
namespace {

const std::vector<std::string> kSections = {"postgres", "dynamodb", "mongodb", "embedding", "http"};

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Golden bad configs: each X.yaml is refused with exactly the messages in X.expected.
TEST(ConfigGolden, BadConfigsGiveExactMessages) {
  const auto dir = std::filesystem::path(MCPDB_SOURCE_DIR) / "tests/unit/config/bad";
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++cases;
    SCOPED_TRACE(entry.path().filename().string());
    Diagnostics diag(entry.path().filename().string());
    parseConfig(readFile(entry.path()), entry.path().filename().string(), kSections, diag);
    std::string got;
    for (const auto& e : diag.errors()) got += e + "\n";
    auto expected_path = entry.path();
    expected_path.replace_extension(".expected");
    testsupport::expectMatchesGolden(got, expected_path);  // MCPDB_UPDATE_GOLDEN=1 rewrites
    EXPECT_FALSE(diag.ok());
  }
  EXPECT_GE(cases, 6);
}

// A YAML syntax error shows the line it is on, unless that line looks like it holds a credential
// (a secret-named key or a secret-shaped value): the error output never carries one.
TEST(ConfigYamlSyntax, TheLineShownNeverCarriesACredential) {
  const char* secrets[] = {
      "      password: Sup3rS3cret-value: x",
      "      api_key: Sup3rS3cret-value: x",
      "      note: postgresql://admin:Sup3rS3cret-value@db/prod: x",
      "      note: mysql://admin:Sup3rS3cret-value@db/prod: x",
      "    - aws_secret_access_key: Sup3rS3cret-value: x",
  };
  for (const char* line : secrets) {
    SCOPED_TRACE(line);
    Diagnostics diag("x.yaml");
    parseConfig(std::string("postgres:\n  sources:\n    main:\n") + line + "\n", "x.yaml",
                kSections, diag);
    ASSERT_FALSE(diag.ok());
    EXPECT_EQ(diag.errors().front().find("Sup3rS3cret"), std::string::npos)
        << diag.errors().front();
  }
  // An ordinary line is shown, with a caret under the column.
  Diagnostics diag("x.yaml");
  parseConfig("server:\n  workers: 4: x\n", "x.yaml", kSections, diag);
  ASSERT_FALSE(diag.ok());
  EXPECT_NE(diag.errors().front().find("x.yaml:2:"), std::string::npos) << diag.errors().front();
  EXPECT_NE(diag.errors().front().find("2 |   workers: 4: x\n"), std::string::npos)
      << diag.errors().front();
  EXPECT_NE(diag.errors().front().find("^"), std::string::npos);
}

TEST(Config, EmptyConfigIsValidWithDefaults) {
  Diagnostics diag("x.yaml");
  Config c = parseConfig("", "x.yaml", kSections, diag);
  EXPECT_TRUE(diag.ok());
  EXPECT_EQ(c.limits.max_rows, 100U);
  EXPECT_EQ(c.server.self_check, SelfCheckMode::Warn);
}

TEST(Config, GoodValuesAreRead) {
  Diagnostics diag("x.yaml");
  Config c = parseConfig(
      "version: 1\nserver: {self_check: refuse, workers: 3}\nlimits: {max_rows: 7, max_bytes: "
      "2048, timeout_ms: 250}\n",
      "x.yaml", kSections, diag);
  ASSERT_TRUE(diag.ok()) << diag.errors().front();
  EXPECT_EQ(c.server.self_check, SelfCheckMode::Refuse);
  EXPECT_EQ(c.server.workers, 3U);
  EXPECT_EQ(c.limits.max_rows, 7U);
  EXPECT_EQ(c.limits.max_bytes, 2048U);
  EXPECT_EQ(c.limits.timeout.count(), 250);
}

// A source's bulkhead: the server-wide size, and one per "<engine>/<source>" (or "<engine>/*").
TEST(Config, CallsPerSourceAreRead) {
  Diagnostics diag("x.yaml");
  Config c = parseConfig(
      "version: 1\nserver:\n  max_calls_per_source: 3\n  max_calls_by_source:\n"
      "    postgres/reports: 1\n    dynamodb/*: 6\n",
      "x.yaml", kSections, diag);
  ASSERT_TRUE(diag.ok()) << diag.errors().front();
  EXPECT_EQ(c.server.max_calls_per_source, 3U);
  EXPECT_EQ(c.server.max_calls_by_source.size(), 2U);
  EXPECT_EQ(c.server.max_calls_by_source["postgres/reports"], 1U);
  EXPECT_EQ(c.server.max_calls_by_source["dynamodb/*"], 6U);
  // Absent: 0, which the server reads as half its workers.
  Diagnostics none("y.yaml");
  EXPECT_EQ(parseConfig("version: 1\n", "y.yaml", kSections, none).server.max_calls_per_source, 0U);
}

TEST(Config, ToolLimitsCannotExceedServerLimits) {
  Diagnostics diag("x.yaml");
  YAML::Node n = YAML::Load("{max_rows: 500}");
  Limits server;
  server.max_rows = 100;
  parseLimits(Node(n, "postgres.tools.t.limits", diag), server, &server);
  ASSERT_EQ(diag.errors().size(), 1U);
  EXPECT_EQ(diag.errors()[0],
            "x.yaml:1: postgres.tools.t.limits.max_rows: must be between 1 and 100");
}

TEST(Config, SecretMessagesNeverQuoteTheSecret) {
  Diagnostics diag("x.yaml");
  parseConfig("postgres:\n  note: postgresql://u:TopSecret1@h/db\n", "x.yaml", kSections, diag);
  ASSERT_FALSE(diag.ok());
  for (const auto& e : diag.errors()) EXPECT_EQ(e.find("TopSecret1"), std::string::npos) << e;
}

TEST(Config, DsnWithoutPasswordIsNotASecret) {
  Diagnostics diag("x.yaml");
  parseConfig("postgres:\n  note: see postgresql://host/db for details\n", "x.yaml", kSections,
              diag);
  EXPECT_TRUE(diag.ok());
}

// Near misses of the secret scanner in a whole config: SQL naming password and token columns,
// prose about passwords, environment references, a client's key digest.
TEST(Config, NearMissesOfTheSecretScannerAreAccepted) {
  Diagnostics diag("x.yaml");
  parseConfig(R"(version: 1
postgres:
  tools:
    login_check:
      description: >-
        Whether a user exists. The password is never returned; set PGPASSWORD=${PGPASSWORD}
        in the environment, not here. Returns token: a row id, max token: 512.
      statement: SELECT u.id FROM users u WHERE u.email = $1 AND u.password = crypt($2, u.password)
    session_lookup:
      description: Sessions by token (ListSessionsByTokenV2Response).
      statement: SELECT s.id FROM sessions s JOIN tokens t ON t.token = s.token WHERE t.token = $1
http:
  clients:
    - {name: ci, key_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08}
)",
              "x.yaml", kSections, diag);
  for (const auto& e : diag.errors()) ADD_FAILURE() << e;
}

// Config text that is not UTF-8 is refused at its line and path, the bytes never echoed; a
// message that would quote such bytes has them replaced.
TEST(Config, TextThatIsNotUtf8IsRefusedWithoutEchoingIt) {
  Diagnostics diag("x.yaml");
  parseConfig("postgres:\n  note: \"caf\xe9\"\n  \"k\xffy\": 1\n", "x.yaml", kSections, diag);
  ASSERT_EQ(diag.errors().size(), 2U);
  EXPECT_EQ(diag.errors()[0],
            "x.yaml:2: postgres.note: is not valid UTF-8; config text must be UTF-8 (the bytes are "
            "not shown)");
  EXPECT_EQ(diag.errors()[1],
            "x.yaml:3: postgres.k\xEF\xBF\xBDy: key is not valid UTF-8; config text must be UTF-8 "
            "(the bytes are not shown)");
}

// A billion-laughs document is refused while it is parsed, in milliseconds; so is deep nesting
// and an oversized text. Aliases that expand to a sane size are fine.
TEST(Config, AliasBombsDeepNestingAndHugeTextsAreRefusedQuickly) {
  std::string bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    const char prev = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += std::string(i ? "," : "") + "*" + prev;
    bomb += "]\n";
  }
  ASSERT_LT(bomb.size(), 1024U);
  const auto t0 = std::chrono::steady_clock::now();
  Diagnostics diag("x.yaml");
  parseConfig(bomb, "x.yaml", kSections, diag);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  ASSERT_EQ(diag.errors().size(), 1U);
  EXPECT_NE(diag.errors()[0].find("expands to more than 200000 nodes"), std::string::npos)
      << diag.errors()[0];

  Diagnostics deep("x.yaml");
  parseConfig("x: " + std::string(5000, '[') + std::string(5000, ']'), "x.yaml", kSections, deep);
  ASSERT_EQ(deep.errors().size(), 1U);
  EXPECT_NE(deep.errors()[0].find("nesting is deeper than 128"), std::string::npos);

  Diagnostics huge("x.yaml");
  parseConfig("# " + std::string(5u << 20, 'x') + "\n", "x.yaml", kSections, huge);
  ASSERT_EQ(huge.errors().size(), 1U);
  EXPECT_NE(huge.errors()[0].find("larger than 4 MiB"), std::string::npos);

  Diagnostics fine("x.yaml");
  parseConfig("limits: &l {max_rows: 5}\npostgres:\n  a: *l\n  b: *l\n", "x.yaml", kSections, fine);
  EXPECT_TRUE(fine.ok());
}

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(editDistance("", ""), 0U);
  EXPECT_EQ(editDistance("abc", ""), 3U);
  EXPECT_EQ(editDistance("", "abc"), 3U);
  EXPECT_EQ(editDistance("limits", "limits"), 0U);
  EXPECT_EQ(editDistance("colection", "collection"), 1U);  // insertion
  EXPECT_EQ(editDistance("pools", "pool"), 1U);            // deletion
  EXPECT_EQ(editDistance("refuze", "refuse"), 1U);         // substitution
  EXPECT_EQ(editDistance("limtis", "limits"), 1U);         // swap of neighbours
  EXPECT_EQ(editDistance("kitten", "sitting"), 3U);
  // Optimal string alignment: a swapped pair is not edited again ("ca" -> "abc" takes 3).
  EXPECT_EQ(editDistance("ca", "abc"), 3U);
  EXPECT_EQ(editDistance("abc", "ca"), 3U);
}

TEST(ClosestMatch, SuggestsOnlyWhatIsClose) {
  const std::vector<std::string> params = {"name",       "type",    "description", "required",
                                           "default",    "min",     "max",         "min_length",
                                           "max_length", "pattern", "enum",        "items"};
  EXPECT_EQ(closestName("desc", params), "description");      // the only key it begins
  EXPECT_EQ(closestName("maxLength", params), "max_length");  // case and one edit
  EXPECT_EQ(closestName("tpye", params), "type");
  EXPECT_EQ(closestName("NAME", params), "name");  // equal ignoring case
  EXPECT_EQ(closestName("descriptoin", params), "description");
  EXPECT_EQ(closestName("minimum", params), "min");  // the longest key it begins with
  EXPECT_EQ(closestName("maximum", params), "max");
  EXPECT_EQ(closestName("min_lengths_x", params), "min_length");
  EXPECT_EQ(closestName("mi", params), std::nullopt);  // too short to guess
  EXPECT_EQ(closestName("sql", params), std::nullopt);
  EXPECT_EQ(closestName("refuze", {"off", "warn", "refuse"}), "refuse");
  EXPECT_EQ(closestName("Warn", {"off", "warn", "refuse"}), "warn");
  EXPECT_EQ(closestName("on", {"off", "warn", "refuse"}), std::nullopt);  // one edit, 2 letters
  EXPECT_EQ(closestName("s", {"S", "N", "B"}), "S");
  EXPECT_EQ(closestName("x", {"S", "N", "B"}), std::nullopt);
  EXPECT_EQ(closestName("anything", {}), std::nullopt);
}

TEST(Config, UnknownKeyNamesTheClosestAllowedKey) {
  Diagnostics diag("x.yaml");
  YAML::Node n = YAML::Load("name: a\ndesc: b\n");
  Node(n, "postgres.tools.x.parameters[0]", diag).expectMap({"name", "type", "description"});
  ASSERT_EQ(diag.errors().size(), 1U);
  EXPECT_EQ(diag.errors()[0],
            "x.yaml:2: postgres.tools.x.parameters[0].desc: unknown key; did you mean "
            "'description'? (allowed here: name, type, description)");
}

TEST(Config, BadChoiceNamesTheClosestChoice) {
  Diagnostics diag("x.yaml");
  parseConfig("server:\n  self_check: refuze\n", "x.yaml", kSections, diag);
  ASSERT_EQ(diag.errors().size(), 1U);
  EXPECT_EQ(diag.errors()[0],
            "x.yaml:2: server.self_check: must be one of: off, warn, refuse; did you mean "
            "'refuse'?");
}

// Independent mistakes in every generic section: each is reported, with its line, in one run.
TEST(Config, EveryIndependentMistakeIsReportedWithItsLine) {
  const std::string text =
      "version: 2\n"            // 1
      "server:\n"               // 2
      "  colour: blue\n"        // 3
      "  workers: 0\n"          // 4
      "  self_check: refuze\n"  // 5
      "limits:\n"               // 6
      "  max_rows: lots\n"      // 7
      "  timeout_ms: 5\n"       // 8
      "limtis: {}\n"            // 9
      "toolsets:\n"             // 10
      "  docs: [a]\n"           // 11
      "tools:\n"                // 12
      "  find: {}\n"            // 13
      "sources:\n"              // 14
      "  db: {}\n"              // 15
      "  twice: a\n"            // 16
      "  twice: b\n"            // 17
      "toolset: {}\n"           // 18
      "postgres:\n"             // 19
      "  password: hunter2\n";  // 20
  Diagnostics diag("x.yaml");
  parseConfig(text, "x.yaml", kSections, diag);
  const std::vector<std::string> expected = {
      "x.yaml:1: version: unsupported version 2; this server reads `version: 1`",
      "x.yaml:3: server.colour: unknown key (allowed here: self_check, workers, max_queue, "
      "max_calls_per_source, max_calls_by_source, max_message_bytes, page_size, drain_ms, "
      "require_environment, max_result_memory, fence, log_format, watch_config)",
      "x.yaml:4: server.workers: must be between 1 and 256",
      "x.yaml:5: server.self_check: must be one of: off, warn, refuse; did you mean 'refuse'?",
      "x.yaml:7: limits.max_rows: must be an integer",
      "x.yaml:8: limits.timeout_ms: must be between 10 and 600000",
      "x.yaml:9: limtis: unknown key; did you mean 'limits'? (allowed here: version, server, "
      "limits, postgres, dynamodb, mongodb, embedding, http)",
      "x.yaml:10: toolsets: is not read by this server: give each HTTP client the tools it may "
      "call in http.clients[].scope (`mcp-dbserver import-toolbox` turns Toolbox toolsets into "
      "scopes)",
      "x.yaml:12: tools: tools belong to their engine: declare them under postgres.tools, "
      "mysql.tools, mongodb.targets or dynamodb.targets (`mcp-dbserver import-toolbox` converts "
      "a Toolbox file)",
      "x.yaml:14: sources: sources belong to their engine: declare them under postgres.sources, "
      "mysql.sources, mongodb.sources or dynamodb.sources",
      "x.yaml:17: sources.twice: duplicate key (first given at line 16); keep one and merge the "
      "two",
      "x.yaml:18: toolset: unknown key (allowed here: version, server, limits, postgres, "
      "dynamodb, mongodb, embedding, http)",
      "x.yaml:20: postgres.password: looks like a secret; secrets come only from the environment "
      "(see .env.example), never the config file",
  };
  std::vector<std::string> got = diag.errors();
  EXPECT_EQ(got.size(), expected.size());  // and none twice
  for (const auto& e : expected) {
    EXPECT_NE(std::find(got.begin(), got.end(), e), got.end()) << "not reported: " << e;
  }
  for (const auto& e : got) {
    EXPECT_NE(std::find(expected.begin(), expected.end(), e), expected.end())
        << "unexpected: " << e;
  }
}

class ConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "config_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::permissions(dir_ / "locked.yaml", std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(dir_, ec);
  }
  std::vector<std::string> load(const std::filesystem::path& p) {
    Diagnostics diag(p.string());
    loadConfigFile(p.string(), kSections, diag);
    return diag.errors();
  }
  std::filesystem::path dir_;
};

TEST_F(ConfigFile, MissingFileSaysSo) {
  const auto p = dir_ / "missing.yaml";
  EXPECT_EQ(load(p),
            std::vector<std::string>{p.string() + ": cannot read the config file: No such file or "
                                                  "directory"});
}

TEST_F(ConfigFile, DirectorySaysSo) {
  EXPECT_EQ(load(dir_), std::vector<std::string>{dir_.string() +
                                                 ": cannot read the config file: Is a directory"});
}

TEST_F(ConfigFile, UnreadableFileSaysSo) {
  const auto p = dir_ / "locked.yaml";
  std::ofstream(p) << "version: 1\n";
  std::filesystem::permissions(p, std::filesystem::perms::none);
  const std::vector<std::string> expected{p.string() +
                                          ": cannot read the config file: Permission denied"};
  if (::geteuid() != 0) {
    EXPECT_EQ(load(p), expected);
    return;
  }
  // Root reads any file: the load runs in a child that has given up root (as nobody).
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool dropped = ::setgid(65534) == 0 && ::setuid(65534) == 0;
    ::_exit(!dropped ? 2 : load(p) == expected ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: could not drop root; 1: the message differs";
}

TEST_F(ConfigFile, ReadableFileIsParsed) {
  const auto p = dir_ / "ok.yaml";
  std::ofstream(p) << "version: 1\nlimits: {max_rows: 7}\n";
  Diagnostics diag(p.string());
  Config c = loadConfigFile(p.string(), kSections, diag);
  ASSERT_TRUE(diag.ok()) << diag.errors().front();
  EXPECT_EQ(c.source, p.string());
  EXPECT_EQ(c.limits.max_rows, 7U);
}

}  // namespace
}  // namespace mcpdb::config
