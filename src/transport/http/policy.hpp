#pragma once
// Request checks of the Streamable HTTP transport that need no I/O: Host/Origin allowlists
// (DNS-rebinding protection), the MCP-Protocol-Version header, Accept negotiation.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "protocol/classify.hpp"

namespace mcpdb::transport::http {

// A Host header value or the authority of an origin, parsed: a lower-case host (brackets kept
// for IPv6) and a port (0 when absent).
struct Authority {
  std::string host;
  unsigned port = 0;
  bool operator==(const Authority&) const = default;
};

// Parses "name[:port]" / "[v6][:port]" strictly: a DNS name or IPv4 literal of [a-z0-9.-] (a
// trailing dot dropped), or a bracketed IPv6 literal of hex digits, ':' and '.'; a port of 1-5
// digits (1-65535). Anything else (userinfo, spaces, a path, percent signs, empty) is nullopt.
std::optional<Authority> parseAuthority(std::string_view text);

// An origin ("scheme://host[:port]", as browsers send it), parsed: http or https only, no path,
// the default port (80/443) filled in.
struct Origin {
  std::string scheme;
  Authority authority;
  bool operator==(const Origin&) const = default;
};
std::optional<Origin> parseOrigin(std::string_view text);

// True for the names of this machine's loopback interface only: "localhost", a numeric IPv4
// literal in 127.0.0.0/8 (four decimal parts of 0-255) and "::1" / "[::1]". Never a name that
// merely starts like one ("127.0.0.1.evil.example", "localhost.evil.example").
bool isLoopbackName(std::string_view host);

// True when a Host header is well formed (parseAuthority) and names an IP literal (a dotted-quad
// IPv4 or a bracketed IPv6 address), with or without a port. Such a Host cannot come from DNS
// rebinding, whose requests carry the attacker's own name: what the health endpoints accept
// beside the listener's allowed hosts, for orchestrator probes that send the pod's address.
bool isIpLiteralHost(std::string_view host_header);

class OriginPolicy {
 public:
  // Empty lists mean the defaults: loopback names (and, on a non-loopback bind, the bind host).
  OriginPolicy(const std::vector<std::string>& allowed_hosts,
               const std::vector<std::string>& allowed_origins, const std::string& bind_host,
               bool bind_loopback);

  // The Host header, parsed, must name an allowed host exactly: a listed "name" (any port) or
  // "name:port" (that port), "*" (anything well-formed), or with the default list any loopback
  // name (isLoopbackName). A malformed Host is refused.
  bool hostAllowed(std::string_view host_header) const;
  // No Origin header is fine (not a browser); one that is present must parse and equal (scheme,
  // host, port) a listed origin, or with the default list be http(s) on a loopback name.
  bool originAllowed(std::optional<std::string_view> origin) const;

 private:
  struct HostRule {
    std::string host;   // "*" allows any
    unsigned port = 0;  // 0: any port
  };
  std::vector<HostRule> hosts_;
  bool loopback_hosts_ = false;  // the default list: any loopback name
  std::vector<Origin> origins_;
  bool any_origin_ = false;  // "*" listed
  bool loopback_origins_ = true;
};

// Where a request comes from, for per-source limits. Configured proxies (`http.trusted_proxies`:
// IP literals or CIDR blocks) may name the client in X-Forwarded-For; nobody else can.
class SourcePolicy {
 public:
  // Entries that do not parse are skipped (the config loader reports them).
  explicit SourcePolicy(const std::vector<std::string>& trusted_proxies);
  // True when `ip` (an IP literal) is inside a trusted entry.
  bool trusted(std::string_view ip) const;
  // The source of a request from `peer_ip`: the peer itself, or when the peer is a trusted proxy,
  // the rightmost X-Forwarded-For address that is not itself a trusted proxy (a client can
  // prepend anything to the header; only what trusted proxies appended counts). IPv6 sources are
  // grouped by /64 (one host usually owns a whole /64), IPv4-mapped IPv6 is written as IPv4.
  std::string source(std::string_view peer_ip, std::optional<std::string_view> forwarded_for) const;
  bool empty() const { return nets_.empty(); }

 private:
  struct Net {
    int family = 0;
    std::array<unsigned char, 16> addr{};
    int prefix = 0;
  };
  std::vector<Net> nets_;
};

// True when `text` is "IP" or "IP/prefix" (prefix within the family's width).
bool validProxyEntry(std::string_view text);

// The per-source key of an address: IPv4 as is, IPv6 as its /64 ("2001:db8:1:2::/64"), IPv4-mapped
// IPv6 as IPv4; text that is no IP literal is returned unchanged.
std::string sourceKey(std::string_view ip);

// MCP-Protocol-Version: absent is fine (the spec's default, protocol::kDefaultLegacyVersion,
// applies); present must be a version this server supports.
bool protocolVersionHeaderOk(std::optional<std::string_view> value);

// The headers a 2026-07-28 POST mirrors from its body (Streamable HTTP, "Request Metadata"),
// every occurrence of each as sent.
struct McpHeaders {
  std::vector<std::string_view> protocol_version;  // MCP-Protocol-Version
  std::vector<std::string_view> method;            // Mcp-Method
  std::vector<std::string_view> name;              // Mcp-Name
};
// nullopt when the headers agree with the classified request: MCP-Protocol-Version and Mcp-Method
// each present once and equal to `meta_version` and its method; Mcp-Name present once for the
// methods that name something (protocol::nameMember: tools/call, prompts/get, resources/read) and
// equal, once decoded, to the classification's name (that member of params, a string). Otherwise
// the HeaderMismatch (-32020) message; a header sent twice is a mismatch (an intermediary may read
// the other one). Header values are echoed bounded, never whole.
std::optional<std::string> mcpHeaderMismatch(const McpHeaders& headers,
                                             std::string_view meta_version,
                                             const protocol::Classified& request);
// The same for a body given by its method and params.
std::optional<std::string> mcpHeaderMismatch(const McpHeaders& headers,
                                             std::string_view meta_version, std::string_view method,
                                             const Json& params);
// `s` without the optional whitespace (spaces, tabs) around a header value.
std::string_view trimOws(std::string_view s);
// The value of an Mcp-Name (or Mcp-Param-*) header as the client meant it: optional whitespace
// trimmed, a `=?base64?...?=` sentinel decoded (strict RFC 4648 base64); nullopt when it holds a
// byte outside visible ASCII, space and tab, or its base64 is malformed.
std::optional<std::string> decodeMcpHeaderValue(std::string_view raw);

struct AcceptInfo {
  bool json = false;
  bool sse = false;
};
// Parses an Accept header; absent counts as accepting JSON only.
AcceptInfo parseAccept(std::optional<std::string_view> accept);

}  // namespace mcpdb::transport::http
