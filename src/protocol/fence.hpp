#pragma once
// The boundary around database text in a tool result's text content (SECURITY.md, "Untrusted
// data"). Text a database holds may have been written by anyone; a model reading it could take an
// instruction hidden in a row for one of its user's. The text content is wrapped in markers that
// carry a random nonce, with a line saying that what is inside is data: a row cannot close the
// boundary early, since it cannot know the nonce. structuredContent stays as it is.

#include <string>
#include <string_view>

namespace mcpdb::protocol {

// The opening of a fenced text: the notice and the opening marker with `nonce`, ending in '\n'.
std::string fenceOpening(std::string_view nonce);
// The closing marker with `nonce`, after a '\n'.
std::string fenceClosing(std::string_view nonce);
// A fresh nonce: 16 hex characters from the operating system's random source.
std::string fenceNonce();
// `text` fenced with a fresh nonce.
std::string fenceText(std::string_view text);

}  // namespace mcpdb::protocol
