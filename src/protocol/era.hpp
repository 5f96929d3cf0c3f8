#pragma once
// The two eras of MCP this server speaks at once (basic/versioning in the 2026-07-28
// specification): legacy versions (2025-11-25 and earlier) open a session with `initialize`;
// the modern version (2026-07-28) carries its version, the client's capabilities and identity in
// every request's `_meta` and keeps no session. A request is modern when its `_meta` carries any
// of the per-request protocol fields; everything else follows the legacy session.

#include <string>
#include <string_view>
#include <optional>
#include <variant>
#include <vector>

#include "common/json.hpp"

namespace mcpdb::protocol {

inline constexpr std::string_view kModernProtocolVersion = "2026-07-28";

// The `_meta` keys of the 2026-07-28 specification (basic/index, "_meta").
namespace meta_key {
inline constexpr std::string_view kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kClientCapabilities =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr std::string_view kServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view kSubscriptionId = "io.modelcontextprotocol/subscriptionId";
}  // namespace meta_key

// Error codes of the MCP specification (the -32020..-32099 range it reserves) and the legacy
// resource-not-found code (2025-11-25 and earlier; 2026-07-28 uses -32602 instead).
namespace rpc {
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;
inline constexpr int kResourceNotFoundLegacy = -32002;
}  // namespace rpc

// Versions served statelessly through per-request `_meta`, newest first.
const std::vector<std::string>& modernProtocolVersions();
// Versions served through the initialize handshake, newest first.
const std::vector<std::string>& legacyProtocolVersions();
// Every version this server speaks, newest first (server/discover, UnsupportedProtocolVersion).
const std::vector<std::string>& allProtocolVersions();
bool isModernVersion(std::string_view version);
bool isLegacyVersion(std::string_view version);

// True when `params` (a request's params, any JSON) carries `_meta` with at least one of the
// per-request protocol fields: the request asks to be served statelessly at a modern version.
bool carriesModernMeta(const Json& params);

// A modern request's per-request fields, checked.
struct ModernMeta {
  std::string version;
  int log_rank = -1;  // -1: no io.modelcontextprotocol/logLevel (no log messages for it)
};
// A refusal to send as the JSON-RPC error of the request; `data` is null when there is none.
struct MetaError {
  int code;
  std::string message;
  Json data;
};
// Checks the per-request fields of `params` in the specification's order: the required fields
// present and well-typed (-32602), then the version one this server speaks (-32022, with data
// {supported, requested}). `transport_version`: the version the transport already read (HTTP's
// MCP-Protocol-Version header) — a mismatch is a HeaderMismatch (-32020), checked before the
// version is judged, so that a header and a body that disagree are refused whatever they name.
std::variant<ModernMeta, MetaError> checkModernMeta(
    const Json& params, std::optional<std::string_view> transport_version = std::nullopt);

// The methods served at the modern version; anything else is -32601 (initialize, ping,
// logging/setLevel and resources/subscribe included: the 2026-07-28 specification removed them).
bool isModernMethod(std::string_view method);

}  // namespace mcpdb::protocol
