#pragma once
// Golden verdict files of the statement guards (tests/unit/postgres/guard/cases, tests/unit/mysql/
// guard_cases): adding a case is adding data.
//
//   ## a file comment (only between cases)
//   # case name [marker]...        <- starts a case; " [escaped]" decodes \n \t \r \v \f \\ \xHH
//                                     in the SQL lines; other markers are the test's own
//   SELECT ...
//   ... (any number of SQL lines, blank lines included; joined with \n, no trailing newline)
//   ----
//   <the expected verdict line>
//   <blank line or end of file>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace mcpdb::testsupport {

namespace fs = std::filesystem;

struct VerdictCase {
  std::string where;  // file:line of the name line
  std::string name;
  std::string sql;
  std::string expect;
  std::vector<std::string> markers;  // e.g. {"mysql"} for "# name [mysql]"
};

inline std::optional<std::string> unescapeCase(const std::string& in) {
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
inline std::vector<VerdictCase> loadVerdictCases(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<VerdictCase> cases;
  enum class State { Between, Sql, Expect, AfterExpect } state = State::Between;
  std::string line;
  int lineNo = 0;
  VerdictCase current;
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
        current = VerdictCase{fileName + ":" + std::to_string(lineNo), line.substr(2), {}, {}, {}};
        escaped = false;
        // Trailing " [word]" markers: [escaped] is applied here, the others are the caller's.
        while (current.name.ends_with("]")) {
          const std::size_t open = current.name.rfind(" [");
          if (open == std::string::npos) break;
          const std::string word = current.name.substr(open + 2, current.name.size() - open - 3);
          if (word == "escaped") {
            escaped = true;
          } else {
            current.markers.insert(current.markers.begin(), word);
          }
          current.name.resize(open);
        }
        sqlLines.clear();
        state = State::Sql;
        break;
      case State::Sql:
        if (line == "----") {
          std::string sql;
          for (std::size_t k = 0; k < sqlLines.size(); ++k) sql += (k ? "\n" : "") + sqlLines[k];
          if (escaped) {
            auto decoded = unescapeCase(sql);
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

// The *.test files of `dir`, sorted.
inline std::vector<fs::path> verdictCaseFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".test")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What a guard made of one case: whether it matched the expectation (and why not), the verdict as
// text for the failure message, and the verdict's id for the tally ("allow" or the rule id).
struct CaseOutcome {
  bool matched = false;
  std::string why;
  std::string got;
  std::string verdict;
};

// Runs every case of the *.test files in `dir` through `judge`: each must match, names must be
// unique, and the tally per verdict is printed.
inline void runVerdictCases(
    const fs::path& dir,
    const std::function<CaseOutcome(const fs::path& file, const VerdictCase& c)>& judge) {
  const auto files = verdictCaseFiles(dir);
  ASSERT_FALSE(files.empty()) << "no *.test files under " << dir;
  std::size_t total = 0;
  std::set<std::string> names;
  std::map<std::string, std::size_t> per_verdict;
  for (const auto& file : files) {
    for (const VerdictCase& c : loadVerdictCases(file)) {
      ++total;
      EXPECT_TRUE(names.insert(c.name).second)
          << c.where << ": duplicate case name '" << c.name << "'";
      const CaseOutcome o = judge(file, c);
      EXPECT_TRUE(o.matched) << c.where << ": case '" << c.name << "'"
                             << (o.why.empty() ? "" : " — " + o.why) << "\n  expected: " << c.expect
                             << "\n  got:      " << o.got;
      ++per_verdict[o.verdict];
    }
  }
  EXPECT_GT(total, 0U) << "the case files hold no cases";
  std::cout << "[ golden   ] " << total << " cases in " << files.size() << " files:";
  for (const auto& [verdict, count] : per_verdict) std::cout << ' ' << verdict << '=' << count;
  std::cout << '\n';
}

// Calls `fn` with the bytes of every file in a fuzzer's seed corpus (which doubles as a no-crash
// regression set in the ordinary unit build); fails when there is none.
inline void forEachCorpusFile(const fs::path& dir,
                              const std::function<void(const fs::path&, const std::string&)>& fn) {
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fn(entry.path(), data);
    ++seen;
  }
  EXPECT_GT(seen, 0U);
}

}  // namespace mcpdb::testsupport
