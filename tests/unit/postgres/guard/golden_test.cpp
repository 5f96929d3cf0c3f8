// Runs every golden case in tests/unit/postgres/guard/cases/*.test through checkTemplate.
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
  testsupport::runVerdictCases(fs::path(MCPDB_SOURCE_DIR) / "tests/unit/postgres/guard/cases",
                               [](const fs::path& file, const VerdictCase& c) {
                                 (void)file;
                                 const Verdict v = checkTemplate(c.sql);
                                 testsupport::CaseOutcome o;
                                 o.matched = matches(c.expect, v, o.why);
                                 o.got = describe(v);
                                 o.verdict = v.allowed ? "allow" : std::string(ruleId(v.rule));
                                 return o;
                               });
}

TEST(GuardGolden, FuzzCorpusNeverCrashes) {
  testsupport::forEachCorpusFile(fs::path(MCPDB_SOURCE_DIR) / "tests/fuzz/guard/corpus",
                                 [](const fs::path& path, const std::string& data) {
                                   const Verdict v = checkTemplate(data);
                                   EXPECT_EQ(v.allowed, v.rule == Rule::None) << path.filename();
                                 });
}

}  // namespace
}  // namespace mcpdb::postgres::guard
