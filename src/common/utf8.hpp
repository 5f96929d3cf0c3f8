#pragma once
// Whether bytes are well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF),
// decided by ICU's own UTF-8 macros (header-only, no ICU library linked here).

#include <string>
#include <string_view>

namespace mcpdb {

bool isValidUtf8(std::string_view bytes);

// `bytes` with each ill-formed sequence replaced by U+FFFD: safe to print, log or put in JSON.
std::string withInvalidUtf8Replaced(std::string_view bytes);

}  // namespace mcpdb
