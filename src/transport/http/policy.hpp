#pragma once
// Request checks of the Streamable HTTP transport that need no I/O: Host/Origin allowlists
// (DNS-rebinding protection), the MCP-Protocol-Version header, Accept negotiation.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpdb::transport::http {

class OriginPolicy {
 public:
  // Empty lists mean the defaults: loopback names (and, on a non-loopback bind, the bind host).
  OriginPolicy(const std::vector<std::string>& allowed_hosts,
               const std::vector<std::string>& allowed_origins, const std::string& bind_host,
               bool bind_loopback);

  // The Host header must name an allowed host ("*" in the list allows any).
  bool hostAllowed(std::string_view host_header) const;
  // No Origin header is fine (not a browser); one that is present must be allowed.
  bool originAllowed(std::optional<std::string_view> origin) const;

 private:
  std::vector<std::string> hosts_;    // lower-case; "name" or "name:port"
  std::vector<std::string> origins_;  // lower-case scheme://host[:port]
  bool loopback_origins_ = true;
};

// Splits "name:port" / "[v6]:port" into a lower-case host (brackets kept for IPv6) and port text.
std::pair<std::string, std::string> splitHostPort(std::string_view hostport);

// MCP-Protocol-Version: absent is fine (the spec's default, 2025-03-26, applies); present must be
// a version this server supports.
bool protocolVersionHeaderOk(std::optional<std::string_view> value);
inline constexpr std::string_view kDefaultProtocolVersion = "2025-03-26";

struct AcceptInfo {
  bool json = false;
  bool sse = false;
};
// Parses an Accept header; absent counts as accepting JSON only.
AcceptInfo parseAccept(std::optional<std::string_view> accept);

}  // namespace mcpdb::transport::http
