#pragma once
// Reads the text of a named element from a small, fixed-shape XML document (the STS responses:
// four credential fields and an error code). Hand-written on purpose: a general XML parser
// (libxml2) would be a new dependency for reading five leaf elements of one known response.

#include <optional>
#include <string>
#include <string_view>

namespace mcpdb::aws {

// Text of the first <tag>...</tag> (no attributes, no nesting of the same tag), with the five
// predefined entities and numeric character references decoded.
std::optional<std::string> xmlElementText(std::string_view xml, std::string_view tag);

}  // namespace mcpdb::aws
