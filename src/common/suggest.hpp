#pragma once
// "Did you mean ...?" for names an operator types (config keys, choices, scopes, log levels).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpdb {

// The optimal-string-alignment distance (Levenshtein plus adjacent transpositions), ASCII case
// folded. Hand-written: a dozen lines, and no Debian library offers it for C++.
std::size_t editDistance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a likely typo (distance at most
// 1 for short words, 2 from 5 characters, 3 from 9), else nullopt. Ties go to the first.
std::optional<std::string> closestName(std::string_view word,
                                       const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "".
std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace mcpdb
