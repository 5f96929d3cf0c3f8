#pragma once
// Untrusted-data fencing: whether a tool result's text content is returned inside a boundary
// telling the model that what is inside is database content, not instructions
// (protocol/fence.hpp does the wrapping; structuredContent is never changed).

#include <optional>
#include <string_view>

namespace mcpdb {

enum class Fence {
  Inherit,  // a tool without its own setting takes the server's (server.fence)
  Auto,     // fenced when the result can carry free text (a text-like column, any document)
  Always,
  Never,
};

// "auto", "always", "never" (the config's spelling); nullopt for anything else.
inline std::optional<Fence> parseFence(std::string_view text) {
  if (text == "auto") return Fence::Auto;
  if (text == "always") return Fence::Always;
  if (text == "never") return Fence::Never;
  return std::nullopt;
}

}  // namespace mcpdb
