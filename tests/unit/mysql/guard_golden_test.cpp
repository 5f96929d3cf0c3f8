// Runs every golden case in tests/unit/mysql/guard_cases/*.test through the MySQL guard's
// checkTemplate (a file whose name starts with routine_ through checkRoutineBody instead).
//
// Case file format (adding a case is adding data):
//   ## a file comment (only between cases)
//   # case name                    <- starts a case; append " [escaped]" to decode \n \t \r \v \f
//                                     (and " [mysql]" or " [mariadb]" to judge for that dialect)
//   SELECT ...                        \\ \xHH in the SQL lines (for bytes a text file cannot hold)
//   ... (any number of SQL lines, blank lines included; joined with \n, no trailing newline)
//   ----
//   allow [placeholders=<N>] [calls=<f,db.g or ->] | deny <rule_id>
//   <blank line or end of file>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engines/mysql/guard.hpp"
#include "support/verdict_cases.hpp"

namespace mcpdb::mysql::guard {
namespace {

namespace fs = std::filesystem;

using testsupport::VerdictCase;

std::vector<fs::path> caseFiles() {
  return testsupport::verdictCaseFiles(fs::path(MCPDB_SOURCE_DIR) / "tests/unit/mysql/guard_cases");
}

// "# name [mysql]" or "[mariadb]": judged for that server's built-ins only.
Dialect dialectOf(const VerdictCase& c) {
  for (const auto& m : c.markers) {
    if (m == "mysql") return Dialect::Mysql;
    if (m == "mariadb") return Dialect::Mariadb;
  }
  return Dialect::Either;
}

std::string callsOf(const Verdict& v) {
  std::string out;
  for (const Name& name : v.called_functions) out += (out.empty() ? "" : ",") + displayName(name);
  return out.empty() ? "-" : out;
}

std::string describe(const Verdict& v) {
  if (v.allowed)
    return "allow placeholders=" + std::to_string(v.placeholders) + " calls=" + callsOf(v);
  return "deny " + std::string(ruleId(v.rule)) + " (" + v.message + ")";
}

// True when the verdict meets the expectation line; explains a malformed expectation in `why`.
// Expectations: `allow`, `allow placeholders=N`, `allow calls=a,db.f` (the functions that are
// not known built-ins, in order; `calls=-` for none), both in that order, or `deny <rule_id>`.
bool matches(const std::string& expect, const Verdict& v, std::string& why) {
  std::istringstream words(expect);
  std::string verb, word;
  std::vector<std::string> args;
  words >> verb;
  while (words >> word) args.push_back(word);
  if (verb == "deny" && args.size() == 1) return !v.allowed && ruleId(v.rule) == args[0];
  if (verb != "allow") {
    why = "malformed expectation";
    return false;
  }
  bool ok = v.allowed;
  for (const std::string& arg : args) {
    if (arg.starts_with("placeholders=")) {
      ok = ok && std::to_string(v.placeholders) == arg.substr(13);
    } else if (arg.starts_with("calls=")) {
      ok = ok && callsOf(v) == arg.substr(6);
    } else {
      why = "malformed expectation";
      return false;
    }
  }
  return ok;
}

TEST(MysqlGuardGolden, EveryCaseFileMatches) {
  const auto files = caseFiles();
  ASSERT_FALSE(files.empty()) << "no *.test files under " << MCPDB_SOURCE_DIR
                              << "/tests/unit/mysql/guard_cases";
  std::size_t total = 0;
  std::set<std::string> names;
  std::map<std::string, std::size_t> perVerdict;
  for (const auto& file : files) {
    for (const VerdictCase& c : testsupport::loadVerdictCases(file)) {
      ++total;
      EXPECT_TRUE(names.insert(c.name).second)
          << c.where << ": duplicate case name '" << c.name << "'";
      const bool routine = file.filename().string().starts_with("routine_");
      const Verdict v =
          routine ? checkRoutineBody(c.sql, dialectOf(c)) : checkTemplate(c.sql, dialectOf(c));
      std::string why;
      EXPECT_TRUE(matches(c.expect, v, why))
          << c.where << ": case '" << c.name << "'" << (why.empty() ? "" : " — " + why)
          << "\n  expected: " << c.expect << "\n  got:      " << describe(v);
      ++perVerdict[v.allowed ? "allow" : std::string(ruleId(v.rule))];
    }
  }
  EXPECT_GT(total, 0U) << "the case files hold no cases";
  std::cout << "[ golden   ] " << total << " cases in " << files.size() << " files:";
  for (const auto& [verdict, count] : perVerdict) std::cout << ' ' << verdict << '=' << count;
  std::cout << '\n';
}

// The fuzzer's seed corpus doubles as a no-crash regression set in the ordinary unit build.
TEST(MysqlGuardGolden, FuzzCorpusNeverCrashes) {
  const fs::path dir = fs::path(MCPDB_SOURCE_DIR) / "tests/fuzz/mysql/guard_corpus";
  ASSERT_TRUE(fs::is_directory(dir));
  std::size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Verdict v = checkTemplate(data);
    EXPECT_EQ(v.allowed, v.rule == Rule::None) << entry.path().filename();
    const Verdict body = checkRoutineBody(data);
    EXPECT_EQ(body.allowed, body.rule == Rule::None) << entry.path().filename();
    ++seen;
  }
  EXPECT_GT(seen, 0U);
}

}  // namespace
}  // namespace mcpdb::mysql::guard
