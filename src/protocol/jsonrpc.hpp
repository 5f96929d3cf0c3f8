#pragma once
// JSON-RPC 2.0 framing helpers shared by every transport.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.hpp"

namespace mcpdb::protocol {

namespace rpc {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
}  // namespace rpc

struct ParseLimits {
  std::size_t max_bytes = std::size_t{4} * 1024 * 1024;
  std::size_t max_depth = 64;
};

// Parses one message. On failure returns the JSON-RPC error response to send (id null).
struct Parsed {
  std::optional<Json> message;
  std::optional<Json> error_response;
};
Parsed parseMessage(std::string_view text, const ParseLimits& limits);

// Deepest nesting of arrays/objects in `text`, stopping early once past `limit`. Hand-written
// pre-scan (strings and escapes aware) so hostile nesting is refused before any tree is built.
std::size_t nestingDepth(std::string_view text, std::size_t limit);

// `text` with every escaped lone surrogate (`\uD800`-`\uDFFF` not part of a high-low pair)
// inside a string replaced by `\uFFFD`, as Go's decoder reads it; nullopt when there is none (the
// common case: no copy). JavaScript clients send them for an emoji cut in half; the grammar allows
// them and nlohmann::json refuses them, so without this the request would go unanswered. One pass,
// string and escape aware (`\\ud800` is a backslash and text); the length never changes.
std::optional<std::string> replaceLoneSurrogates(std::string_view text);

Json makeErrorResponse(const Json& id, int code, std::string_view message);
Json makeResultResponse(const Json& id, Json result);
Json makeNotification(std::string_view method, Json params);

// Serialises for the wire: compact, one line, invalid UTF-8 replaced (never throws).
std::string serialize(const Json& message);

// The serialised response {"id":..,"jsonrpc":"2.0","result":<result_json>} around an already
// serialised result, identical to serialize(makeResultResponse(id, result)).
std::string serializedResultResponse(const Json& id, std::string_view result_json);

}  // namespace mcpdb::protocol
