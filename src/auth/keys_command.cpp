#include "auth/keys_command.hpp"

#include <ostream>

#include "auth/api_key.hpp"
#include "auth/clients.hpp"
#include "auth/scope.hpp"

namespace mcpdb::auth {

int runKeysNew(const KeysNewOptions& o, std::ostream& out, std::ostream& err) {
  if (!isValidClientName(o.name)) {
    err << "keys new: --name must be 1-64 characters of A-Z a-z 0-9 _ - .\n";
    return 2;
  }
  auto scope = Scope::parse(o.scope);
  if (!scope) {
    err << "keys new: --scope: " << scope.error().message << "\n";
    return 2;
  }
  if (o.check_scope) {
    if (auto st = o.check_scope(*scope); !st) {
      err << "keys new: --scope: " << st.error().message << "\n";
      return st.error().code == Code::FailedPrecondition ? 3 : 2;
    }
  }
  std::optional<RateSettings> rate;
  if (o.rate || o.burst || o.max_concurrent) {
    rate = RateSettings{};
    if (o.rate) rate->rate = *o.rate;
    if (o.burst) rate->burst = *o.burst;
    if (o.max_concurrent) rate->max_concurrent = static_cast<std::size_t>(*o.max_concurrent);
    if (rate->rate <= 0 || rate->burst < 1 || rate->max_concurrent < 1) {
      err << "keys new: --rate must be > 0, --burst and --max-concurrent >= 1\n";
      return 2;
    }
  }
  const std::string key = generateApiKey();
  if (key.empty()) {
    err << "keys new: the random generator failed\n";
    return 1;
  }
  out << "API key for client '" << o.name << "' (shown once; give it to the client as "
      << "'Authorization: Bearer <key>'):\n\n  " << key << "\n\n"
      << "Add these lines under `http: clients:` in the config (it stores only the hash), then "
         "send\n"
      << "SIGHUP to the server (or restart it):\n\n"
      << "  clients:\n"
      << clientConfigLines(o.name, sha256(key), *scope, rate);
  return 0;
}

}  // namespace mcpdb::auth
