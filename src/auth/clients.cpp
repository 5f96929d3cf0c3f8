#include "auth/clients.hpp"

#include <sstream>

namespace mcpdb::auth {
namespace {

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

const config::Section<RateSettings>& rateSection() {
  static const auto s =
      config::Section<RateSettings>("a token bucket of requests")
          .number("rate", &RateSettings::rate, 0, 1e6,
                  "requests per second, refilled continuously (above 0)")
          .number("burst", &RateSettings::burst, 1, 1e6,
                  "requests that may come at once (the bucket's size)")
          .check([](RateSettings& r, const config::Node& node) {
            if (r.rate > 0) return true;
            node.child("rate").error(
                "must be a number of requests per second above 0 (at most 1000000)");
            return false;
          });
  return s;
}

namespace {

// The key's digest, as `keys new` prints it (the key itself is never in the config).
bool readDigest(ClientEntry& c, const config::Node& value) {
  const auto hex = value.asString();
  if (!hex) return false;
  const auto digest = digestFromHex(*hex);
  if (!digest) {
    value.error("must be the 64 hex digits printed by `mcp-dbserver keys new`");
    return false;
  }
  c.key_sha256 = *digest;
  return true;
}

// A scope as one string ("postgres,mongodb:count") or a list of its parts.
bool readScope(ClientEntry& c, const config::Node& value) {
  std::string text;
  if (value.isSequence()) {
    const auto parts = value.asStringList();
    if (!parts) return false;
    for (const auto& part : *parts) text += (text.empty() ? "" : ",") + part;
  } else if (const auto one = value.asString()) {
    text = *one;
  } else {
    return false;
  }
  auto scope = Scope::parse(text);
  if (!scope) {
    value.error(scope.error().message);
    return false;
  }
  c.scope = std::move(*scope);
  c.scope_line = value.line();
  return true;
}

// Names and keys are each given to one client.
bool acceptClient(const ClientEntry& c, const std::vector<ClientEntry>& before,
                  const config::Node& item) {
  for (const auto& b : before) {
    if (b.name == c.name) {
      item.child("name").error("duplicate client name '" + c.name + "'");
      return false;
    }
    if (digestEquals(b.key_sha256, c.key_sha256)) {
      item.child("key_sha256").error("the same key is configured for two clients");
      return false;
    }
  }
  return true;
}

const config::Section<ClientEntry>& clientSection() {
  static const auto s =
      config::Section<ClientEntry>("one client: a key's digest, its scope and its limits")
          .string("name", &ClientEntry::name, "the client's name in logs, audit and metrics",
                  config::kRequired,
                  [](std::string_view n) {
                    return isValidClientName(n)
                               ? ""
                               : "client names are 1-64 characters of A-Z a-z 0-9 _ - .";
                  })
          .custom(
              "key_sha256",
              "the SHA-256 of the client's key, as `mcp-dbserver keys new` prints it (the key "
              "itself never goes in the config)",
              [] {
                return Json{{"type", "string"}, {"pattern", "^[0-9a-fA-F]{64}$"}};
              },
              config::kRequired, readDigest)
          .custom(
              "scope",
              "what the client may call: `*`, engines (`postgres`), tools "
              "(`postgres:find_user`), comma-separated or as a list",
              [] {
                return Json{
                    {"anyOf",
                     {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}}}},
                    {"examples", Json::array({"postgres,mongodb:count_documents"})}};
              },
              config::kRequired, readScope)
          .object("rate_limit", &ClientEntry::rate, rateSection(),
                  "this client's request rate (default: http.rate_limit)")
          .integer(
              "max_concurrent_calls",
              [](ClientEntry & c) -> auto& { return c.rate.max_concurrent; }, 1, 10000,
              "this client's tool calls in flight at once")
          .byDefault("http.max_concurrent_calls");
  return s;
}

}  // namespace

const config::Section<AuthSettings>& authSection() {
  static const auto s =
      config::Section<AuthSettings>("who may connect")
          .choice("auth", &AuthSettings::required, {{"api_key", true}, {"none", false}},
                  "`api_key`: every request needs a configured client's key; `none`: anonymous "
                  "(only on a loopback address)")
          .object("rate_limit", &AuthSettings::defaults, rateSection(),
                  "each client's request rate, unless the client sets its own")
          .integer(
              "max_concurrent_calls",
              [](AuthSettings & a) -> auto& { return a.defaults.max_concurrent; }, 1, 10000,
              "each client's tool calls in flight at once, unless the client sets its own")
          .list(
              "clients", &AuthSettings::clients, clientSection(),
              "the clients and their keys' digests (`mcp-dbserver keys new` prints an entry)",
              config::kOptional, "must be a list of clients (name, key_sha256, scope)",
              [](ClientEntry& c, const AuthSettings& a) { c.rate = a.defaults; }, acceptClient);
  return s;
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
