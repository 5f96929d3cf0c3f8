#pragma once
// Golden-file checks shared by the unit tests of several subsystems (header only: no library to
// link). MCPDB_UPDATE_GOLDEN=1 rewrites the expected files instead of comparing; read the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace mcpdb::testsupport {

inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool updatingGolden() {
  return std::getenv("MCPDB_UPDATE_GOLDEN") != nullptr;
}

// Compares `actual` with the file at `expected` (or rewrites it when updating).
inline void expectMatchesGolden(const std::string& actual, const std::filesystem::path& expected) {
  if (updatingGolden()) {
    std::ofstream(expected) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(expected)) << "missing golden file " << expected;
  EXPECT_EQ(actual, readFile(expected)) << "golden file " << expected;
}

using ErrorsOf =
    std::function<std::vector<std::string>(const std::string& text, const std::string& file_name)>;

// Every DIR/NAME.yaml is a bad config: `errors_of` must reject it, and its errors, one per line,
// must equal DIR/NAME<expected_ext> exactly. Returns how many configs were checked.
inline int checkGoldenBadConfigs(const std::filesystem::path& dir, const std::string& expected_ext,
                                 const ErrorsOf& errors_of) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++cases;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const std::vector<std::string> errors = errors_of(readFile(entry.path()), name);
    EXPECT_FALSE(errors.empty()) << "a bad config was accepted";
    std::string got;
    for (const auto& e : errors) got += e + "\n";
    expectMatchesGolden(got, std::filesystem::path(entry.path()).replace_extension(expected_ext));
  }
  return cases;
}

}  // namespace mcpdb::testsupport
