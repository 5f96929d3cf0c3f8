// Runs every golden case in tests/unit/guard/cases/*.test through checkTemplate.
//
// Case file format (adding a case is adding data):
//   ## a file comment (only between cases)
//   # case name                    <- starts a case; append " [escaped]" to decode \n \t \r \v \f
//   SELECT ...                        \\ \xHH in the SQL lines (for bytes a text file cannot hold)
//   ... (any number of SQL lines, blank lines included; joined with \n, no trailing newline)
//   ----
//   allow | allow placeholders=<N> | deny <rule_id>
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

#include "engines/postgres/guard/guard.hpp"
#include "support/verdict_cases.hpp"

namespace mcpdb::postgres::guard {
namespace {

namespace fs = std::filesystem;

using testsupport::VerdictCase;

std::vector<fs::path> caseFiles() {
  return testsupport::verdictCaseFiles(fs::path(MCPDB_SOURCE_DIR) / "tests/unit/guard/cases");
}


std::string describe(const Verdict& v) {
  if (v.allowed) return "allow placeholders=" + std::to_string(v.placeholders.size());
  return "deny " + std::string(ruleId(v.rule)) + " (" + v.message + ")";
}

// True when the verdict meets the expectation line; explains a malformed expectation in `why`.
bool matches(const std::string& expect, const Verdict& v, std::string& why) {
  std::istringstream words(expect);
  std::string verb, arg, extra;
  words >> verb >> arg >> extra;
  if (!extra.empty()) {
    why = "malformed expectation";
    return false;
  }
  if (verb == "allow") {
    if (arg.empty()) return v.allowed;
    if (!arg.starts_with("placeholders=")) {
      why = "malformed expectation";
      return false;
    }
    return v.allowed && std::to_string(v.placeholders.size()) == arg.substr(13);
  }
  if (verb == "deny" && !arg.empty()) return !v.allowed && ruleId(v.rule) == arg;
  why = "malformed expectation";
  return false;
}

TEST(GuardGolden, EveryCaseFileMatches) {
  const auto files = caseFiles();
  ASSERT_FALSE(files.empty()) << "no *.test files under " << MCPDB_SOURCE_DIR
                              << "/tests/unit/guard/cases";
  std::size_t total = 0;
  std::set<std::string> names;
  std::map<std::string, std::size_t> perVerdict;
  for (const auto& file : files) {
    for (const VerdictCase& c : testsupport::loadVerdictCases(file)) {
      ++total;
      EXPECT_TRUE(names.insert(c.name).second)
          << c.where << ": duplicate case name '" << c.name << "'";
      const Verdict v = checkTemplate(c.sql);
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
TEST(GuardGolden, FuzzCorpusNeverCrashes) {
  const fs::path dir = fs::path(MCPDB_SOURCE_DIR) / "tests/fuzz/guard/corpus";
  ASSERT_TRUE(fs::is_directory(dir));
  std::size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Verdict v = checkTemplate(data);
    EXPECT_EQ(v.allowed, v.rule == Rule::None) << entry.path().filename();
    ++seen;
  }
  EXPECT_GT(seen, 0U);
}

}  // namespace
}  // namespace mcpdb::postgres::guard
