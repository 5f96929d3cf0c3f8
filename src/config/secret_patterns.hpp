#pragma once
// What the config loader refuses as a secret: key names and value shapes (secrets come only from
// the environment). Plain matchers, each documented with the regular expression it implements.

#include <string_view>

namespace mcpdb::config {

// A key naming a secret (password, api_key, dsn, ...), as the last `_`-separated part(s).
bool keyLooksSecret(std::string_view key);

// What kind of secret `value` looks like ("a private key", ...), or nullptr.
const char* valueLooksSecret(std::string_view value);

}  // namespace mcpdb::config
