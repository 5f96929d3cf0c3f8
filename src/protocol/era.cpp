#include "protocol/era.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "protocol/jsonrpc.hpp"

namespace mcpdb::protocol {
namespace {

bool listed(const std::vector<std::string>& versions, std::string_view v) {
  return std::find(versions.begin(), versions.end(), v) != versions.end();
}

// A version named in an error is echoed bounded: it comes from the client.
std::string boundedText(std::string_view s) {
  return s.size() > 64 ? std::string(s.substr(0, 64)) + "..." : std::string(s);
}

constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

}  // namespace

const std::vector<std::string>& modernProtocolVersions() {
  static const std::vector<std::string> kVersions = {std::string(kModernProtocolVersion)};
  return kVersions;
}

const std::vector<std::string>& legacyProtocolVersions() {
  static const std::vector<std::string> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26"};
  return kVersions;
}

const std::vector<std::string>& allProtocolVersions() {
  static const std::vector<std::string> kVersions = [] {
    std::vector<std::string> v = modernProtocolVersions();
    const auto& legacy = legacyProtocolVersions();
    v.insert(v.end(), legacy.begin(), legacy.end());
    return v;
  }();
  return kVersions;
}

bool isModernVersion(std::string_view version) {
  return listed(modernProtocolVersions(), version);
}

bool isLegacyVersion(std::string_view version) {
  return listed(legacyProtocolVersions(), version);
}

bool carriesModernMeta(const Json& params) {
  if (!params.is_object()) return false;
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return false;
  for (std::string_view key : {meta_key::kProtocolVersion, meta_key::kClientCapabilities,
                               meta_key::kClientInfo, meta_key::kLogLevel}) {
    if (meta->contains(key)) return true;
  }
  return false;
}

std::variant<ModernMeta, MetaError> checkModernMeta(
    const Json& params, std::optional<std::string_view> transport_version) {
  auto invalid = [](std::string message) {
    return MetaError{rpc::kInvalidParams, std::move(message), nullptr};
  };
  if (!params.is_object() || !params.contains("_meta") || !params["_meta"].is_object()) {
    return invalid(
        "params._meta is required: every 2026-07-28 request carries "
        "io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities");
  }
  const Json& meta = params["_meta"];
  const auto version = meta.find(meta_key::kProtocolVersion);
  if (version == meta.end() || !version->is_string() ||
      version->get_ref<const std::string&>().empty()) {
    return invalid("_meta[\"io.modelcontextprotocol/protocolVersion\"] (a string) is required");
  }
  const auto caps = meta.find(meta_key::kClientCapabilities);
  if (caps == meta.end() || !caps->is_object()) {
    return invalid("_meta[\"io.modelcontextprotocol/clientCapabilities\"] (an object) is required");
  }
  if (const auto info = meta.find(meta_key::kClientInfo);
      info != meta.end() && !info->is_object()) {
    return invalid("_meta[\"io.modelcontextprotocol/clientInfo\"] must be an object");
  }
  ModernMeta checked;
  if (const auto level = meta.find(meta_key::kLogLevel); level != meta.end()) {
    if (level->is_string()) {
      const auto& l = level->get_ref<const std::string&>();
      for (std::size_t i = 0; i < kLogLevels.size(); ++i) {
        if (kLogLevels[i] == l) checked.log_rank = static_cast<int>(i);
      }
    }
    if (checked.log_rank < 0) {
      return invalid(
          "_meta[\"io.modelcontextprotocol/logLevel\"] must be one of debug, info, notice, "
          "warning, error, critical, alert, emergency");
    }
  }
  const std::string& requested = version->get_ref<const std::string&>();
  if (transport_version && *transport_version != requested) {
    return MetaError{rpc::kHeaderMismatch,
                     "Header mismatch: MCP-Protocol-Version header value '" +
                         boundedText(*transport_version) +
                         "' does not match _meta[\"io.modelcontextprotocol/protocolVersion\"] '" +
                         boundedText(requested) + "'",
                     nullptr};
  }
  if (!isModernVersion(requested)) {
    std::string message = "Unsupported protocol version";
    if (isLegacyVersion(requested)) {
      message += ": " + requested + " is served through the initialize handshake";
    }
    return MetaError{
        rpc::kUnsupportedProtocolVersion, std::move(message),
        Json{{"supported", allProtocolVersions()}, {"requested", boundedText(requested)}}};
  }
  checked.version = requested;
  return checked;
}

bool isModernMethod(std::string_view method) {
  static constexpr std::array<std::string_view, 9> kMethods = {
      "server/discover", "tools/list",     "tools/call",
      "resources/list",  "resources/read", "resources/templates/list",
      "prompts/list",    "prompts/get",    "subscriptions/listen"};
  return std::find(kMethods.begin(), kMethods.end(), method) != kMethods.end();
}

}  // namespace mcpdb::protocol
