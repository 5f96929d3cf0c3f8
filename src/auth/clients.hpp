#pragma once
// The HTTP clients an operator configured (`http.clients`): name, key digest, scope, rate limits.
// Parsing is located and collects every problem; authentication compares digests in constant time.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/api_key.hpp"
#include "auth/scope.hpp"
#include "config/section.hpp"

namespace mcpdb::auth {

struct RateSettings {
  double rate = 10.0;              // requests per second, refilled continuously
  double burst = 20.0;             // bucket capacity
  std::size_t max_concurrent = 4;  // tool calls in flight at once
};

struct ClientEntry {
  std::string name;
  Digest key_sha256{};
  Scope scope;
  RateSettings rate;
  int scope_line = 0;  // where `scope` is in the config (1-based; 0 unknown), for messages
};

struct AuthSettings {
  // "api_key" (default): every request needs a configured key. "none": anonymous, loopback only.
  bool required = true;
  RateSettings defaults;
  std::vector<ClientEntry> clients;
};

// The `auth`, `rate_limit`, `max_concurrent_calls` and `clients` keys of the http section
// (inlined there: transport/http/http_config.cpp).
const config::Section<AuthSettings>& authSection();
const config::Section<RateSettings>& rateSection();

// Immutable after construction; swapped whole on a config reload.
class ClientTable {
 public:
  explicit ClientTable(std::vector<ClientEntry> clients) : clients_(std::move(clients)) {}
  // The client whose key digest matches, or nullptr. Checks every entry (no early exit) with
  // CRYPTO_memcmp so timing says nothing about which prefix matched.
  const ClientEntry* authenticate(std::string_view key) const;
  const ClientEntry* byName(std::string_view name) const;
  const std::vector<ClientEntry>& clients() const { return clients_; }

 private:
  std::vector<ClientEntry> clients_;
};

// The YAML lines an operator pastes under `http.clients:` for a new key (no key in them).
std::string clientConfigLines(const std::string& name, const Digest& digest, const Scope& scope,
                              const std::optional<RateSettings>& rate);

// Client names: 1-64 of [A-Za-z0-9_.-] (they appear in audit lines and metric labels).
bool isValidClientName(std::string_view name);

}  // namespace mcpdb::auth
