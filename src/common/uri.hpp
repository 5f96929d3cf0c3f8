#pragma once
// Percent-encoding of one URI path segment (RFC 3986): the names in resource URIs
// (mcpdb://<engine>/<kind>/<name>) come from the operator's config and may hold any character a
// collection name allows, so each name is one encoded segment.

#include <optional>
#include <string>
#include <string_view>

namespace mcpdb {

// `s` with every byte outside RFC 3986's unreserved set (A-Z a-z 0-9 - . _ ~) written as %XX
// (upper-case hex, UTF-8 bytes one by one). The result is printable ASCII without '/'.
std::string percentEncode(std::string_view s);

// The inverse of percentEncode for any valid encoding (either hex case); nullopt when a '%' is
// not followed by two hex digits.
std::optional<std::string> percentDecode(std::string_view s);

}  // namespace mcpdb
