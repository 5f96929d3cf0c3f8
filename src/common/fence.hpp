#pragma once
// Untrusted-data fencing (SECURITY.md, "Untrusted data"): text a database holds may have been
// written by anyone, and a model reading a tool result could take an instruction hidden in a row
// for one of its user's. When a result can carry free text, its text content is wrapped in
// markers that carry a random nonce, with a line saying that what is inside is data: a row cannot
// close the boundary early, since it cannot know the nonce. structuredContent stays as it is.
// Here: the setting (config and tools) and the wrapping (the session).

#include <optional>
#include <string>
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

// The opening of a fenced text: the notice and the opening marker with `nonce`, ending in '\n'.
std::string fenceOpening(std::string_view nonce);
// The closing marker with `nonce`, after a '\n'.
std::string fenceClosing(std::string_view nonce);
// A fresh nonce: 16 hex characters (64 bits) from OpenSSL's generator (RAND_bytes), drawn in
// blocks per thread so a call costs a copy rather than a trip through the generator's lock and
// fork check; a fork empties every block (the child draws its own).
std::string fenceNonce();
// `text` fenced with a fresh nonce.
std::string fenceText(std::string_view text);

}  // namespace mcpdb
