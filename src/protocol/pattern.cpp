#include "protocol/pattern.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

#include <re2/re2.h>

namespace mcpdb::protocol {
namespace {

// Compiled program and DFA cache of one pattern. RE2's default is 8 MiB; a pattern needing more
// is refused at load (ErrorPatternTooLarge), and a DFA that fills its cache falls back to RE2's
// NFA, which is slower but still linear in the input.
constexpr std::int64_t kMaxPatternMemory = 2LL << 20;

RE2::Options patternOptions() {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingUTF8);
  o.set_log_errors(false);  // errors are returned as values, never written to stderr
  o.set_max_mem(kMaxPatternMemory);
  o.set_never_capture(true);  // only "is there a match" is asked
  return o;
}

// Why a pattern does not compile, in the operator's terms (RE2's own text quotes the pattern).
std::string explain(RE2::ErrorCode code) {
  switch (code) {
    case RE2::ErrorBadEscape:
      return "uses an escape RE2 does not support (backreferences such as \\1 and \\uXXXX are not "
             "supported; write \\x{XXXX} for a code point)";
    case RE2::ErrorBadPerlOp:
    case RE2::ErrorMissingParen:
      return "uses syntax RE2 does not support (lookahead/lookbehind such as (?= (?! (?<= (?<!) "
             "or has an unclosed group";
    case RE2::ErrorBadNamedCapture: return "has an invalid named group";
    case RE2::ErrorBadCharClass:
    case RE2::ErrorBadCharRange:
    case RE2::ErrorMissingBracket: return "has an invalid character class";
    case RE2::ErrorUnexpectedParen: return "has an unmatched ')'";
    case RE2::ErrorTrailingBackslash: return "ends with a lone backslash";
    case RE2::ErrorRepeatArgument:
    case RE2::ErrorRepeatSize:
    case RE2::ErrorRepeatOp:
      return "has an invalid repetition (nothing to repeat, or a count above 1000)";
    case RE2::ErrorBadUTF8: return "is not valid UTF-8";
    case RE2::ErrorPatternTooLarge:
      return "is too large once compiled (more than 2 MiB; simplify the repetitions)";
    default: return "is not a valid regular expression";
  }
}

}  // namespace

Result<CompiledPattern> compilePattern(std::string_view pattern) {
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()),
                                        patternOptions());
  if (!re->ok()) {
    return makeError(Code::InvalidArgument, "pattern " + explain(re->error_code()) +
                                                " (patterns use RE2 syntax: see SECURITY.md)");
  }
  return CompiledPattern(std::move(re));
}

bool patternFinds(const RE2& pattern, std::string_view text) {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), pattern);
}

Status checkPatternCost(const RE2& pattern, std::uint64_t max_length_code_points) {
  const auto size = static_cast<std::uint64_t>(pattern.ProgramSize());
  const std::uint64_t length = max_length_code_points;
  if (length != 0 && size > kMaxPatternWork / length) {
    return makeError(Code::InvalidArgument,
                     "pattern is too complex for a value of up to " +
                         std::to_string(max_length_code_points) + " characters (" +
                         std::to_string(size) +
                         " RE2 instructions; matching could take seconds): lower max_length "
                         "to at most " +
                         std::to_string(std::max<std::uint64_t>(1, kMaxPatternWork / size)) +
                         " or simplify the pattern");
  }
  return {};
}

Result<CompiledPattern> sharedPattern(const std::string& pattern) {
  static std::shared_mutex mu;
  static std::map<std::string, CompiledPattern, std::less<>> cache;
  {
    const std::shared_lock<std::shared_mutex> lock(mu);
    if (auto it = cache.find(pattern); it != cache.end()) return it->second;
  }
  auto compiled = compilePattern(pattern);
  if (!compiled) return compiled;  // not cached: only a config load meets one, and refuses it
  const std::unique_lock<std::shared_mutex> lock(mu);
  return cache.emplace(pattern, *compiled).first->second;
}

}  // namespace mcpdb::protocol
