#include "engines/sql/result_keys.hpp"

#include <algorithm>

namespace mcpdb::sql {
namespace {

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool containsFolded(std::string_view haystack, std::string_view needle) {
  const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                              [](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end();
}

// "title_2" -> "title": the suffix the engines add to a repeated column's key.
std::string_view withoutRepeatSuffix(std::string_view name) {
  const auto us = name.rfind('_');
  if (us == std::string_view::npos || us == 0 || us + 1 == name.size()) return name;
  const bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(us) + 1, name.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  return digits ? name.substr(0, us) : name;
}

}  // namespace

bool namesAreStatementText(std::string_view statement, const std::vector<std::string_view>& names) {
  // An empty name is no text at all (and would match anywhere).
  return std::all_of(names.begin(), names.end(), [&](std::string_view n) {
    return n.empty() || containsFolded(statement, n) ||
           containsFolded(statement, withoutRepeatSuffix(n));
  });
}

}  // namespace mcpdb::sql
