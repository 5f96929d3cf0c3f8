#pragma once
// NFKC normalisation and code-point splitting for the tokenizer, on ICU (Debian libicu-dev).

#include <cstddef>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace mcpdb::embed {

// Largest UTF-8 input the Unicode helpers accept (ICU counts in int32).
inline constexpr std::size_t kMaxUnicodeInputBytes = std::size_t{256} * 1024 * 1024;

// Appends the code points of NFKC(utf8) to out. Ill-formed UTF-8 becomes U+FFFD (one per maximal
// ill-formed subsequence, as TextDecoder does), so any byte string is accepted.
Status appendNfkcCodePoints(std::string_view utf8, std::vector<char32_t>& out);

// Appends the code points of well-formed UTF-8 (no normalisation); ill-formed -> InvalidArgument.
Status appendCodePoints(std::string_view utf8, std::vector<char32_t>& out);

// Length of the code points in UTF-16 code units (what a JavaScript string's .length reports).
std::size_t utf16Length(const std::vector<char32_t>& codePoints);

}  // namespace mcpdb::embed
