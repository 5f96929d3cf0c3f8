// libFuzzer target: the HTTP transport's checks of client-controlled header values (Host, Origin,
// X-Forwarded-For, Accept, MCP-Protocol-Version, Mcp-Name, Mcp-Method; the health endpoints'
// IP-literal Host) and the listen-address
// parser. The input is split at '\n' into those values, in that order; every check must answer
// without crashing, and the exact-match invariants must hold (a Host that passes is one the
// policy names; an Mcp-Name matches exactly the body value it decodes to).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "transport/http/http_config.hpp"
#include "transport/http/policy.hpp"

namespace {

using namespace mcpdb::transport::http;

const OriginPolicy& loopbackPolicy() {
  static const OriginPolicy p({}, {}, "127.0.0.1", true);
  return p;
}
const OriginPolicy& listedPolicy() {
  static const OriginPolicy p({"mcp.example", "api.example:8443"}, {"https://app.example"},
                              "0.0.0.0", false);
  return p;
}
const SourcePolicy& proxies() {
  static const SourcePolicy p({"10.0.0.0/8", "::1", "2001:db8::/32"});
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  std::size_t at = 0;
  while (parts.size() < 8) {
    const auto nl = in.find('\n', at);
    parts.push_back(in.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at));
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  parts.resize(8);
  const std::string_view host = parts[0];
  const std::string_view origin = parts[1];

  (void)listedPolicy().hostAllowed(host);
  (void)loopbackPolicy().originAllowed(origin);
  (void)listedPolicy().originAllowed(origin);
  if (auto o = parseOrigin(origin)) {
    if (o->authority.port == 0 || o->authority.port > 65535) std::abort();
    if (loopbackPolicy().originAllowed(origin) && !isLoopbackName(o->authority.host)) std::abort();
  }
  // The health endpoints' IP-literal Host: only a well-formed authority whose host has no letter
  // but the hex digits of a bracketed IPv6 literal (never a DNS name a rebinding page could send).
  if (isIpLiteralHost(host)) {
    // A header value's surrounding blanks are not part of it (HTTP's optional white space).
    std::string_view bare = host;
    while (!bare.empty() && (bare.front() == ' ' || bare.front() == '\t')) bare.remove_prefix(1);
    while (!bare.empty() && (bare.back() == ' ' || bare.back() == '\t')) bare.remove_suffix(1);
    const auto a = parseAuthority(bare);
    if (!a) std::abort();
    const bool v6 = a->host.front() == '[';
    for (char c : a->host) {
      const bool digit = c >= '0' && c <= '9';
      const bool hex =
          (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '[' || c == ']';
      if (!digit && c != '.' && !(v6 && hex)) std::abort();
    }
  }
  // Only loopback names pass the default policy, never a longer name that starts like one.
  if (auto a = parseAuthority(host)) {
    if (a->port > 65535) std::abort();
    if (loopbackPolicy().hostAllowed(host) && !isLoopbackName(a->host)) std::abort();
  }
  (void)proxies().source(parts[3], parts[2]);
  (void)sourceKey(parts[3]);
  (void)validProxyEntry(parts[3]);
  (void)parseAccept(parts[4]);
  (void)protocolVersionHeaderOk(parts[5]);
  (void)parseListenAddress(parts[3]);

  // Mcp-Name: a decoded value holds only what a header may carry, or came from base64; the
  // headers agree with a body carrying exactly the decoded name, and with no other.
  const std::string_view raw_name = parts[6];
  const std::string method(parts[7]);
  if (auto name = decodeMcpHeaderValue(raw_name)) {
    const McpHeaders h{{"2026-07-28"}, {method}, {raw_name}};
    const bool named = method == "tools/call" || method == "prompts/get";
    const mcpdb::Json same = {{"name", *name}};
    const mcpdb::Json other = {{"name", *name + "x"}};
    const bool method_ok = trimOws(method) == method;
    if (method_ok && mcpHeaderMismatch(h, "2026-07-28", method, same)) std::abort();
    if (method_ok && named && !mcpHeaderMismatch(h, "2026-07-28", method, other)) std::abort();
    if (name->size() > raw_name.size()) std::abort();
  }
  return 0;
}
