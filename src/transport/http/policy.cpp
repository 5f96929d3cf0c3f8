#include "transport/http/policy.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include <openssl/evp.h>

#include "protocol/classify.hpp"
#include "protocol/session.hpp"

namespace mcpdb::transport::http {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A decimal number of 1-`max_digits` digits; nullopt for anything else (signs, spaces, hex).
std::optional<unsigned> decimal(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

bool isIpv4Loopback(std::string_view host) {
  int parts = 0;
  std::size_t at = 0;
  while (true) {
    const auto dot = host.find('.', at);
    const auto part = decimal(host.substr(at, dot == std::string_view::npos ? dot : dot - at), 3);
    if (!part || *part > 255) return false;
    if (parts == 0 && *part != 127) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  return parts == 4;
}

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

bool isV6Char(char c) {
  return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9') || c == ':' || c == '.';
}

}  // namespace

bool isLoopbackName(std::string_view host) {
  return host == "localhost" || host == "[::1]" || host == "::1" || isIpv4Loopback(host);
}

std::optional<Authority> parseAuthority(std::string_view text) {
  if (text.empty() || text.size() > 300) return std::nullopt;
  const std::string t = lower(text);
  Authority a;
  std::string_view rest = t;
  if (rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close < 3) return std::nullopt;
    const std::string_view inner = rest.substr(1, close - 1);
    if (!std::all_of(inner.begin(), inner.end(), isV6Char) ||
        inner.find(':') == std::string_view::npos)
      return std::nullopt;
    a.host = std::string(rest.substr(0, close + 1));
    rest.remove_prefix(close + 1);
  } else {
    const auto colon = rest.find(':');
    std::string_view name = rest.substr(0, colon);
    if (!name.empty() && name.back() == '.') name.remove_suffix(1);  // "localhost." is localhost
    if (name.empty() || name.size() > 253 || !std::all_of(name.begin(), name.end(), isNameChar) ||
        name.front() == '.' || name.front() == '-' || name.find("..") != std::string_view::npos)
      return std::nullopt;
    a.host = std::string(name);
    rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon);
  }
  if (rest.empty()) return a;
  if (rest.front() != ':') return std::nullopt;
  const auto port = decimal(rest.substr(1), 5);
  if (!port || *port == 0 || *port > 65535) return std::nullopt;
  a.port = *port;
  return a;
}

std::optional<Origin> parseOrigin(std::string_view text) {
  const std::string t = lower(trim(text));
  Origin o;
  std::string_view rest = t;
  if (rest.rfind("http://", 0) == 0) {
    o.scheme = "http";
    rest.remove_prefix(7);
  } else if (rest.rfind("https://", 0) == 0) {
    o.scheme = "https";
    rest.remove_prefix(8);
  } else {
    return std::nullopt;  // includes the opaque origin "null"
  }
  auto a = parseAuthority(rest);
  if (!a) return std::nullopt;
  o.authority = std::move(*a);
  if (o.authority.port == 0) o.authority.port = o.scheme == "https" ? 443 : 80;
  return o;
}

OriginPolicy::OriginPolicy(const std::vector<std::string>& allowed_hosts,
                           const std::vector<std::string>& allowed_origins,
                           const std::string& bind_host, bool bind_loopback) {
  for (const auto& h : allowed_hosts) {
    if (h == "*") {
      hosts_.push_back({"*", 0});
    } else if (auto a = parseAuthority(h)) {
      hosts_.push_back({a->host, a->port});
    }
    // An entry that does not parse matches nothing (the config loader reports it).
  }
  if (allowed_hosts.empty()) {
    loopback_hosts_ = true;
    if (!bind_loopback && bind_host != "0.0.0.0" && bind_host != "::") {
      if (auto a = parseAuthority(bind_host.find(':') != std::string::npos ? "[" + bind_host + "]"
                                                                           : bind_host)) {
        hosts_.push_back({a->host, 0});
      }
    }
  }
  for (const auto& o : allowed_origins) {
    if (o == "*") {
      any_origin_ = true;
    } else if (auto parsed = parseOrigin(o)) {
      origins_.push_back(std::move(*parsed));
    }
  }
  loopback_origins_ = allowed_origins.empty();
}

bool OriginPolicy::hostAllowed(std::string_view host_header) const {
  const auto a = parseAuthority(trim(host_header));
  if (!a) return false;
  if (loopback_hosts_ && isLoopbackName(a->host)) return true;
  for (const auto& h : hosts_) {
    if (h.host == "*") return true;
    if (h.host == a->host && (h.port == 0 || h.port == a->port)) return true;
  }
  return false;
}

bool OriginPolicy::originAllowed(std::optional<std::string_view> origin) const {
  if (!origin) return true;
  const auto o = parseOrigin(*origin);
  if (!o) return any_origin_;
  if (any_origin_) return true;
  for (const auto& allowed : origins_) {
    if (allowed == *o) return true;
  }
  // Default: only pages served from this machine (http(s)://localhost|127.x.y.z|[::1][:port]).
  return loopback_origins_ && isLoopbackName(o->authority.host);
}

namespace {

struct Ip {
  int family = 0;  // AF_INET or AF_INET6; 0: not an IP literal
  std::array<unsigned char, 16> addr{};
};

Ip parseIp(std::string_view text) {
  Ip ip;
  std::string t(trim(text));
  if (t.size() > 2 && t.front() == '[' && t.back() == ']') t = t.substr(1, t.size() - 2);
  if (t.empty() || t.size() > 64) return ip;
  if (inet_pton(AF_INET, t.c_str(), ip.addr.data()) == 1) {
    ip.family = AF_INET;
  } else if (inet_pton(AF_INET6, t.c_str(), ip.addr.data()) == 1) {
    ip.family = AF_INET6;
    static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(ip.addr.data(), kMapped, sizeof kMapped) == 0) {
      std::memmove(ip.addr.data(), ip.addr.data() + 12, 4);
      std::fill(ip.addr.begin() + 4, ip.addr.end(), 0);
      ip.family = AF_INET;
    }
  }
  return ip;
}

bool prefixMatches(const std::array<unsigned char, 16>& a, const std::array<unsigned char, 16>& b,
                   int bits) {
  const auto whole = static_cast<std::size_t>(bits / 8);
  if (std::memcmp(a.data(), b.data(), whole) != 0) return false;
  const int rest = bits % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

std::optional<std::pair<Ip, int>> parseProxyEntry(std::string_view text) {
  const auto slash = text.find('/');
  Ip ip = parseIp(text.substr(0, slash));
  if (ip.family == 0) return std::nullopt;
  const int width = ip.family == AF_INET ? 32 : 128;
  int prefix = width;
  if (slash != std::string_view::npos) {
    const auto p = decimal(text.substr(slash + 1), 3);
    if (!p || static_cast<int>(*p) > width) return std::nullopt;
    prefix = static_cast<int>(*p);
  }
  return std::make_pair(ip, prefix);
}

}  // namespace

bool validProxyEntry(std::string_view text) {
  return parseProxyEntry(text).has_value();
}

SourcePolicy::SourcePolicy(const std::vector<std::string>& trusted_proxies) {
  for (const auto& entry : trusted_proxies) {
    if (auto p = parseProxyEntry(entry))
      nets_.push_back({p->first.family, p->first.addr, p->second});
  }
}

bool SourcePolicy::trusted(std::string_view ip_text) const {
  if (nets_.empty()) return false;
  const Ip ip = parseIp(ip_text);
  if (ip.family == 0) return false;
  return std::any_of(nets_.begin(), nets_.end(), [&ip](const Net& n) {
    return n.family == ip.family && prefixMatches(n.addr, ip.addr, n.prefix);
  });
}

std::string SourcePolicy::source(std::string_view peer_ip,
                                 std::optional<std::string_view> forwarded_for) const {
  if (!forwarded_for || !trusted(peer_ip)) return sourceKey(peer_ip);
  // Right to left: each trusted hop appended the address it received the request from.
  // Bounded work: only the rightmost 4 KiB are read (the hops nearest to us; padding a client
  // adds on the left cannot push them out).
  std::string_view rest = *forwarded_for;
  if (rest.size() > 4096) rest.remove_prefix(rest.size() - 4096);
  std::string last = sourceKey(peer_ip);
  while (!rest.empty()) {
    const auto comma = rest.rfind(',');
    const std::string_view item =
        trim(comma == std::string_view::npos ? rest : rest.substr(comma + 1));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(0, comma);
    if (parseIp(item).family == 0) break;  // garbage: stop at the last address we could read
    last = sourceKey(item);
    if (!trusted(item)) break;
  }
  return last;
}

std::string sourceKey(std::string_view text) {
  const Ip ip = parseIp(text);
  char buf[INET6_ADDRSTRLEN + 4] = {};
  if (ip.family == AF_INET) {
    inet_ntop(AF_INET, ip.addr.data(), buf, sizeof buf);
    return buf;
  }
  if (ip.family == AF_INET6) {
    std::array<unsigned char, 16> net = ip.addr;
    std::fill(net.begin() + 8, net.end(), 0);
    inet_ntop(AF_INET6, net.data(), buf, sizeof buf);
    return std::string(buf) + "/64";
  }
  return std::string(text);
}

namespace {

// A header value echoed in an error: at most 64 bytes of it.
std::string echoed(std::string_view v) {
  return v.size() > 64 ? std::string(v.substr(0, 64)) + "..." : std::string(v);
}

bool base64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// Strict padded base64 (RFC 4648 section 4) decoded with OpenSSL; nullopt when malformed.
std::optional<std::string> decodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  for (std::size_t i = 0; i + pad < text.size(); ++i) {
    if (!base64Char(text[i])) return std::nullopt;
  }
  if (text.empty()) return std::string();
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0 || static_cast<std::size_t>(n) != out.size()) return std::nullopt;
  out.resize(out.size() - pad);  // EVP_DecodeBlock counts the padding as zero bytes
  return out;
}

}  // namespace

std::string_view trimOws(std::string_view s) {
  return trim(s);
}

std::optional<std::string> decodeMcpHeaderValue(std::string_view raw) {
  for (char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    if (!(u == '\t' || (u >= 0x20 && u <= 0x7e))) return std::nullopt;
  }
  const std::string_view v = trim(raw);
  static constexpr std::string_view kPrefix = "=?base64?";
  static constexpr std::string_view kSuffix = "?=";
  if (v.size() >= kPrefix.size() + kSuffix.size() && v.substr(0, kPrefix.size()) == kPrefix &&
      v.substr(v.size() - kSuffix.size()) == kSuffix) {
    return decodeBase64(v.substr(kPrefix.size(), v.size() - kPrefix.size() - kSuffix.size()));
  }
  return std::string(v);
}

std::optional<std::string> mcpHeaderMismatch(const McpHeaders& headers,
                                             std::string_view meta_version, std::string_view method,
                                             const Json& params) {
  protocol::Classified body;
  body.method = std::string(method);
  const char* member = protocol::nameMember(method);
  if (member != nullptr && params.is_object()) {
    if (const auto n = params.find(member); n != params.end() && n->is_string())
      body.name = n->get<std::string>();
  }
  return mcpHeaderMismatch(headers, meta_version, body);
}

std::optional<std::string> mcpHeaderMismatch(const McpHeaders& headers,
                                             std::string_view meta_version,
                                             const protocol::Classified& request) {
  const std::string_view method = request.method ? std::string_view(*request.method) : "";
  auto once = [](const std::vector<std::string_view>& values,
                 std::string_view name) -> std::optional<std::string> {
    if (values.empty()) return "Header mismatch: the " + std::string(name) + " header is required";
    if (values.size() > 1)
      return "Header mismatch: the " + std::string(name) + " header is sent more than once";
    return std::nullopt;
  };
  if (auto e = once(headers.protocol_version, "MCP-Protocol-Version")) return e;
  const std::string_view version = trim(headers.protocol_version.front());
  if (version != meta_version) {
    return "Header mismatch: MCP-Protocol-Version header value '" + echoed(version) +
           "' does not match _meta[\"io.modelcontextprotocol/protocolVersion\"] '" +
           echoed(meta_version) + "'";
  }
  if (auto e = once(headers.method, "Mcp-Method")) return e;
  const std::string_view sent_method = trim(headers.method.front());
  if (sent_method != method) {
    return "Header mismatch: Mcp-Method header value '" + echoed(sent_method) +
           "' does not match body value '" + echoed(method) + "'";
  }
  const char* source = protocol::nameMember(method);
  if (source == nullptr) return std::nullopt;
  if (auto e = once(headers.name, "Mcp-Name")) return e;
  const auto name = decodeMcpHeaderValue(headers.name.front());
  if (!name) {
    return std::string(
        "Header mismatch: the Mcp-Name header holds invalid characters or malformed base64");
  }
  if (request.name != name) {
    return "Header mismatch: Mcp-Name header value '" + echoed(*name) +
           "' does not match body value params." + source;
  }
  return std::nullopt;
}

bool protocolVersionHeaderOk(std::optional<std::string_view> value) {
  if (!value) return true;
  const auto& versions = protocol::supportedProtocolVersions();
  return std::find(versions.begin(), versions.end(), trim(*value)) != versions.end();
}

AcceptInfo parseAccept(std::optional<std::string_view> accept) {
  AcceptInfo info;
  if (!accept) {
    info.json = true;
    return info;
  }
  std::string_view rest = *accept;
  while (true) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    const auto semi = item.find(';');
    const std::string type = lower(trim(item.substr(0, semi)));
    bool refused = false;
    if (semi != std::string_view::npos) {
      // q=0 means "not acceptable".
      const std::string params = lower(item.substr(semi + 1));
      const auto q = params.find("q=");
      if (q != std::string::npos) {
        const std::string_view qv = trim(std::string_view(params).substr(q + 2));
        refused = qv.rfind('0', 0) == 0 && qv.find_first_of("123456789") == std::string_view::npos;
      }
    }
    if (!refused) {
      if (type == "application/json" || type == "application/*" || type == "*/*") info.json = true;
      if (type == "text/event-stream" || type == "text/*" || type == "*/*") info.sse = true;
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return info;
}

bool isIpLiteralHost(std::string_view host_header) {
  const auto a = parseAuthority(trim(host_header));
  return a && parseIp(a->host).family != 0;
}

}  // namespace mcpdb::transport::http
