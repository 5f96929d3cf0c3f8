#pragma once
// Argument patterns (JSON Schema `pattern`) compiled with RE2: matching is linear in the input and
// runs in bounded memory, with no recursion, so no argument can exhaust the stack or stall a
// reader (std::regex backtracked: a 100,000-character argument overflowed the stack, and a nested
// quantifier held the reader for seconds on 29 characters).
//
// Semantics: an unanchored search, as JSON Schema says (`^`/`$` anchor when written). RE2 is not
// ECMAScript: it has no lookaround, no backreferences and no `\uXXXX` (write `\x{XXXX}`); such a
// pattern does not compile and the config is refused. Input and pattern are UTF-8 (`.` is one code
// point); `\d`, `\w`, `\b` are ASCII as in ECMAScript; `\s` is ASCII whitespace only
// ([\t\n\f\r ], where ECMAScript also has \v and the Unicode spaces).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace re2 {
class RE2;
}

namespace mcpdb::protocol {

// A compiled pattern, immutable and safe to share between threads.
using CompiledPattern = std::shared_ptr<const re2::RE2>;

// Compiles `pattern`; the error says why (e.g. "uses syntax RE2 does not support (lookaround or
// backreference)") without quoting the pattern.
Result<CompiledPattern> compilePattern(std::string_view pattern);

// True when `text` contains a match of `pattern` anywhere (JSON Schema / ECMAScript search).
bool patternFinds(const re2::RE2& pattern, std::string_view text);

// RE2 matches in time linear in the text, with the compiled program's size as the constant: its
// DFA is fast while its state cache suffices, and falls back to an NFA costing about 15 ns per
// byte per instruction when it does not (`[a-z]{500}[0-9]`, 505 instructions, takes ~6 s on
// 1 MiB). So a pattern is accepted only with a bound on the text it meets: instructions x
// `max_length` at most kMaxPatternWork (2^25: ~0.5 s in the worst case for ASCII text, up to 4x
// that for 4-byte characters; milliseconds in the usual, DFA case). The error says which to lower.
inline constexpr std::uint64_t kMaxPatternWork = std::uint64_t{1} << 25;
Status checkPatternCost(const re2::RE2& pattern, std::uint64_t max_length_code_points);

// The process-wide compiled form of a configured pattern: compiled on first use (at config load,
// by validateSchemaSubset) and reused by every call. Patterns come only from the config, so the set
// is small and fixed. A pattern that does not compile is not cached.
Result<CompiledPattern> sharedPattern(const std::string& pattern);

}  // namespace mcpdb::protocol
