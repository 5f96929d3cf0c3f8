#pragma once
// One JSON-RPC message as every layer reads it, classified once: its era and version, method,
// id, the name its Mcp-Name header mirrors, its progress token and, at 2026-07-28, its per-request
// metadata checked. The transports ask; the protocol decides (HTTP maps the result to headers and
// status codes; the session serves it without reading it again).

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/json.hpp"
#include "protocol/era.hpp"

namespace mcpdb::protocol {

// Legacy: a session opened with initialize (2025-11-25 and earlier); Modern: 2026-07-28, every
// request on its own.
enum class Era { Legacy, Modern };

// The version a legacy request runs at when its transport names none (Streamable HTTP without an
// MCP-Protocol-Version header: the specification's default).
inline constexpr std::string_view kDefaultLegacyVersion = "2025-03-26";

// Whether a session answers `message` (one element of a batch, or a message alone): a non-object
// always (one error, id null); an object only when it has an `id` and is not a client's response.
// Notifications, valid or not, are never answered (JSON-RPC 2.0). The one rule for counting a
// batch's answers, answering, and a transport deciding whether a POST waits for an answer.
bool getsAnswer(const Json& message);
// A tools/call request with a usable id (a string or an integer): one call that may run.
bool isToolCall(const Json& message);

struct Classified {
  // Modern when the transport's version (HTTP's MCP-Protocol-Version header) is a modern one, or
  // the message's params._meta carries any per-request protocol field (carriesModernMeta).
  Era era = Era::Legacy;
  bool batch = false;  // a JSON array (each element classified on its own)
  // Whether the message gets an answer (getsAnswer): a request, or anything that is no object.
  bool answered = true;
  // The id when usable (a string or an integer), else null.
  Json id;
  // The method when it is a string, else nullopt.
  std::optional<std::string> method;
  bool initialize = false;  // method "initialize", whatever else the message holds
  bool tool_call = false;   // a tools/call with a usable id (isToolCall)
  // subscriptions/listen (2026-07-28): answered with an event stream that stays open.
  bool subscription = false;
  // A tools/call with an id whose params._meta holds a progressToken (of any type): it asks for
  // progress notifications, which need an event stream to travel.
  bool wants_progress = false;
  // What the method's Mcp-Name header mirrors (nameMember): the member's value when a string.
  std::optional<std::string> name;
  // At the modern era only: params' per-request metadata checked (checkModernMeta, without a
  // transport version), and whether the method is served at the modern version (isModernMethod).
  std::optional<std::variant<ModernMeta, MetaError>> meta;
  bool known_method = false;
  // The transport's W3C trace context (HTTP's `traceparent` and `tracestate` headers, unparsed),
  // set only when the server traces requests (ServerCore::tracer()); params._meta's takes
  // precedence (protocol/request_trace.hpp).
  std::string traceparent;
  std::string tracestate;
};

// Classifies `message` (one JSON-RPC message or a batch). `transport_version`: the protocol
// version the transport carries beside the message (HTTP's MCP-Protocol-Version header, optional
// whitespace trimmed by the caller), if any.
Classified classify(const Json& message,
                    std::optional<std::string_view> transport_version = std::nullopt);

// The member of params that a method's Mcp-Name header mirrors: "name" for tools/call and
// prompts/get, "uri" for resources/read; nullptr for methods without one.
const char* nameMember(std::string_view method);

}  // namespace mcpdb::protocol
