#include "auth/clients.hpp"

#include <set>
#include <sstream>

namespace mcpdb::auth {
namespace {

void parseRate(const config::Node& node, RateSettings& out) {
  if (!node.present()) return;
  if (!node.expectMap({"rate", "burst"})) return;
  if (auto v = node.number("rate")) {
    if (*v <= 0 || *v > 1e6) {
      node.child("rate").error("must be a number of requests per second above 0 (at most 1000000)");
    } else {
      out.rate = *v;
    }
  }
  if (auto v = node.integer("burst", 1, 1000000)) out.burst = static_cast<double>(*v);
}

std::string formatNumber(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

bool isValidClientName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

void parseAuthSettings(const config::Node& http, AuthSettings& out) {
  if (auto mode = http.choice("auth", {"api_key", "none"})) out.required = *mode == "api_key";
  parseRate(http.child("rate_limit"), out.defaults);
  if (auto v = http.integer("max_concurrent_calls", 1, 10000))
    out.defaults.max_concurrent = static_cast<std::size_t>(*v);

  const config::Node list = http.child("clients");
  if (!list.present()) return;
  if (!list.isSequence()) {
    list.error("must be a list of clients (name, key_sha256, scope)");
    return;
  }
  std::set<std::string> names;
  std::set<std::string> digests;
  for (const auto& item : list.elements()) {
    if (!item.expectMap({"name", "key_sha256", "scope", "rate_limit", "max_concurrent_calls"}))
      continue;
    ClientEntry c;
    c.rate = out.defaults;
    auto name = item.string("name", true);
    auto hash = item.string("key_sha256", true);
    if (!name || !hash) continue;
    if (!isValidClientName(*name)) {
      item.child("name").error("client names are 1-64 characters of A-Z a-z 0-9 _ - .");
      continue;
    }
    if (!names.insert(*name).second) {
      item.child("name").error("duplicate client name '" + *name + "'");
      continue;
    }
    auto digest = digestFromHex(*hash);
    if (!digest) {
      item.child("key_sha256")
          .error("must be the 64 hex digits printed by `mcp-dbserver keys new`");
      continue;
    }
    if (!digests.insert(toHex(*digest)).second) {
      item.child("key_sha256").error("the same key is configured for two clients");
      continue;
    }
    c.name = *name;
    c.key_sha256 = *digest;
    std::string scope_text;
    const config::Node scope_node = item.child("scope");
    if (scope_node.isSequence()) {
      if (auto l = item.stringList("scope")) {
        for (const auto& s : *l) scope_text += (scope_text.empty() ? "" : ",") + s;
      }
    } else if (auto s = item.string("scope", true)) {
      scope_text = *s;
    }
    auto scope = Scope::parse(scope_text);
    if (!scope) {
      scope_node.error(scope.error().message);
      continue;
    }
    c.scope = std::move(*scope);
    c.scope_line = scope_node.line();
    parseRate(item.child("rate_limit"), c.rate);
    if (auto v = item.integer("max_concurrent_calls", 1, 10000))
      c.rate.max_concurrent = static_cast<std::size_t>(*v);
    out.clients.push_back(std::move(c));
  }
}

const ClientEntry* ClientTable::authenticate(std::string_view key) const {
  const Digest presented = sha256(key);
  const ClientEntry* found = nullptr;
  for (const auto& c : clients_) {
    if (digestEquals(c.key_sha256, presented) && found == nullptr) found = &c;
  }
  return found;
}

const ClientEntry* ClientTable::byName(std::string_view name) const {
  for (const auto& c : clients_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string clientConfigLines(const std::string& name, const Digest& digest, const Scope& scope,
                              const std::optional<RateSettings>& rate) {
  std::string out = "    - name: " + name + "\n";
  out += "      key_sha256: " + toHex(digest) + "\n";
  out += "      scope: \"" + scope.toString() + "\"\n";
  if (rate) {
    out += "      rate_limit: {rate: " + formatNumber(rate->rate) +
           ", burst: " + formatNumber(rate->burst) + "}\n";
    out += "      max_concurrent_calls: " + std::to_string(rate->max_concurrent) + "\n";
  }
  return out;
}

}  // namespace mcpdb::auth
