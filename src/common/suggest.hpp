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

// The entry of `candidates` an operator most likely meant by `word` (a misspelt key, value or
// name), or nullopt when none is close: equal ignoring case, a few edits away for its length (a
// third of it), the only candidate that `word` (3 characters or more) begins ("desc"), or the
// longest candidate (3 characters or more) that begins `word` ("minimum" -> "min").
std::optional<std::string> closestName(std::string_view word,
                                       const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "".
std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace mcpdb
