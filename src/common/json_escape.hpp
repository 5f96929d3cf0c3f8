#pragma once
// JSON string escaping as nlohmann-json's serializer writes it (quote, backslash, \b \f \n \r \t,
// other control characters as \u00xx, everything else copied), for the hot path's hand-written
// answers and size counts: the library offers no escaping of a bare string into a caller's
// buffer, and its own serializer decodes UTF-8 byte by byte. Callers pass text the library would
// copy unchanged apart from these escapes: valid UTF-8 (appendJsonEscaped) or ASCII.
#include <cstddef>
#include <string>
#include <string_view>

namespace mcpdb {

// The bytes escaping adds to `s` (0 when nothing needs escaping).
std::size_t jsonEscapeGrowth(std::string_view s);

// Appends `s` escaped as inside a JSON string literal (no quotes).
void appendJsonEscaped(std::string& out, std::string_view s);

// Whether every byte of `s` is ASCII.
bool isAscii(std::string_view s);

}  // namespace mcpdb
