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
  testsupport::runVerdictCases(fs::path(MCPDB_SOURCE_DIR) / "tests/unit/mysql/guard_cases",
                               [](const fs::path& file, const VerdictCase& c) {
                                 const bool routine =
                                     file.filename().string().starts_with("routine_");
                                 const Verdict v = routine ? checkRoutineBody(c.sql, dialectOf(c))
                                                           : checkTemplate(c.sql, dialectOf(c));
                                 testsupport::CaseOutcome o;
                                 o.matched = matches(c.expect, v, o.why);
                                 o.got = describe(v);
                                 o.verdict = v.allowed ? "allow" : std::string(ruleId(v.rule));
                                 return o;
                               });
}

TEST(MysqlGuardGolden, FuzzCorpusNeverCrashes) {
  testsupport::forEachCorpusFile(fs::path(MCPDB_SOURCE_DIR) / "tests/fuzz/mysql/guard_corpus",
                                 [](const fs::path& path, const std::string& data) {
                                   const Verdict v = checkTemplate(data);
                                   EXPECT_EQ(v.allowed, v.rule == Rule::None) << path.filename();
                                   const Verdict body = checkRoutineBody(data);
                                   EXPECT_EQ(body.allowed, body.rule == Rule::None)
                                       << path.filename();
                                 });
}

}  // namespace
}  // namespace mcpdb::mysql::guard
