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

namespace mcpdb::mysql::guard {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string where;  // file:line of the name line
  std::string name;
  std::string sql;
  std::string expect;
  Dialect dialect;
};

constexpr std::string_view kEscapedMarker = " [escaped]";
constexpr std::string_view kMysqlMarker = " [mysql]";
constexpr std::string_view kMariadbMarker = " [mariadb]";

std::optional<std::string> unescape(const std::string& in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\') {
      out += in[i];
      continue;
    }
    if (++i >= in.size()) return std::nullopt;
    switch (in[i]) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'v': out += '\v'; break;
      case 'f': out += '\f'; break;
      case '\\': out += '\\'; break;
      case 'x': {
        if (i + 2 >= in.size()) return std::nullopt;
        const std::string hex = in.substr(i + 1, 2);
        if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
          return std::nullopt;
        }
        out += static_cast<char>(std::stoi(hex, nullptr, 16));
        i += 2;
        break;
      }
      default: return std::nullopt;
    }
  }
  return out;
}

// Parses one file; format errors are test failures that name file:line.
std::vector<GoldenCase> loadCases(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<GoldenCase> cases;
  enum class State { Between, Sql, Expect, AfterExpect } state = State::Between;
  std::string line;
  int lineNo = 0;
  GoldenCase current;
  bool escaped = false;
  std::vector<std::string> sqlLines;
  const std::string fileName = file.filename().string();
  auto fail = [&](const std::string& what) {
    ADD_FAILURE() << fileName << ":" << lineNo << ": " << what;
  };
  while (std::getline(in, line)) {
    ++lineNo;
    switch (state) {
      case State::Between:
        if (line.empty() || line.starts_with("##")) break;
        if (!line.starts_with("# ")) {
          fail("expected '# case name', a '## comment' or a blank line");
          return cases;
        }
        current = GoldenCase{
            fileName + ":" + std::to_string(lineNo), line.substr(2), {}, {}, Dialect::Either};
        escaped = false;
        while (true) {
          if (current.name.ends_with(kEscapedMarker)) {
            escaped = true;
            current.name.resize(current.name.size() - kEscapedMarker.size());
          } else if (current.name.ends_with(kMysqlMarker)) {
            current.dialect = Dialect::Mysql;
            current.name.resize(current.name.size() - kMysqlMarker.size());
          } else if (current.name.ends_with(kMariadbMarker)) {
            current.dialect = Dialect::Mariadb;
            current.name.resize(current.name.size() - kMariadbMarker.size());
          } else {
            break;
          }
        }
        sqlLines.clear();
        state = State::Sql;
        break;
      case State::Sql:
        if (line == "----") {
          std::string sql;
          for (std::size_t k = 0; k < sqlLines.size(); ++k) sql += (k ? "\n" : "") + sqlLines[k];
          if (escaped) {
            auto decoded = unescape(sql);
            if (!decoded) {
              fail("bad escape in case '" + current.name + "'");
              return cases;
            }
            sql = *decoded;
          }
          current.sql = sql;
          state = State::Expect;
        } else {
          sqlLines.push_back(line);
        }
        break;
      case State::Expect:
        current.expect = line;
        cases.push_back(current);
        state = State::AfterExpect;
        break;
      case State::AfterExpect:
        if (!line.empty()) {
          fail("expected a blank line after the verdict of '" + current.name + "'");
          return cases;
        }
        state = State::Between;
        break;
    }
  }
  if (state == State::Sql || state == State::Expect) fail("unfinished case '" + current.name + "'");
  return cases;
}

std::vector<fs::path> caseFiles() {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(MCPDB_SOURCE_DIR) / "tests/unit/mysql/guard_cases";
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".test")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
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
    for (const GoldenCase& c : loadCases(file)) {
      ++total;
      EXPECT_TRUE(names.insert(c.name).second)
          << c.where << ": duplicate case name '" << c.name << "'";
      const bool routine = file.filename().string().starts_with("routine_");
      const Verdict v =
          routine ? checkRoutineBody(c.sql, c.dialect) : checkTemplate(c.sql, c.dialect);
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
