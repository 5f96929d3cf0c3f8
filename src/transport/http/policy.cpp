#include "transport/http/policy.hpp"

#include <algorithm>
#include <cctype>

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

bool isLoopbackName(std::string_view host) {
  return host == "localhost" || host == "[::1]" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

std::pair<std::string, std::string> splitHostPort(std::string_view hostport) {
  const std::string hp = lower(trim(hostport));
  if (!hp.empty() && hp.front() == '[') {
    const auto close = hp.find(']');
    if (close == std::string::npos) return {hp, ""};
    const std::string port =
        close + 1 < hp.size() && hp[close + 1] == ':' ? hp.substr(close + 2) : "";
    return {hp.substr(0, close + 1), port};
  }
  const auto colon = hp.find(':');
  if (colon == std::string::npos) return {hp, ""};
  return {hp.substr(0, colon), hp.substr(colon + 1)};
}

OriginPolicy::OriginPolicy(const std::vector<std::string>& allowed_hosts,
                           const std::vector<std::string>& allowed_origins,
                           const std::string& bind_host, bool bind_loopback) {
  for (auto& h : allowed_hosts) hosts_.push_back(lower(h));
  if (hosts_.empty()) {
    hosts_ = {"localhost", "127.0.0.1", "[::1]"};
    if (!bind_loopback && bind_host != "0.0.0.0" && bind_host != "::") {
      hosts_.push_back(
          lower(bind_host.find(':') != std::string::npos ? "[" + bind_host + "]" : bind_host));
    }
  }
  for (auto& o : allowed_origins) origins_.push_back(lower(o));
  loopback_origins_ = origins_.empty();
}

bool OriginPolicy::hostAllowed(std::string_view host_header) const {
  if (host_header.empty() || host_header.size() > 300) return false;
  const auto [host, port] = splitHostPort(host_header);
  const std::string full = port.empty() ? host : host + ":" + port;
  for (const auto& h : hosts_) {
    if (h == "*" || h == host || h == full) return true;
  }
  return false;
}

bool OriginPolicy::originAllowed(std::optional<std::string_view> origin) const {
  if (!origin) return true;
  const std::string o = lower(trim(*origin));
  if (o.size() > 300) return false;
  for (const auto& allowed : origins_) {
    if (allowed == "*" || allowed == o) return true;
  }
  if (!loopback_origins_) return false;
  // Default: only pages served from this machine (http(s)://localhost|127.x|[::1][:port]).
  std::string_view rest = o;
  if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else if (rest.rfind("https://", 0) == 0) {
    rest.remove_prefix(8);
  } else {
    return false;  // includes the opaque origin "null"
  }
  if (rest.find('/') != std::string_view::npos) return false;
  return isLoopbackName(splitHostPort(rest).first);
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

}  // namespace mcpdb::transport::http
