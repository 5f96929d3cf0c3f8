#pragma once
// `mcp-dbserver keys new`: makes a key, prints it once, and the config lines holding its hash.

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "auth/scope.hpp"

namespace mcpdb::auth {

struct KeysNewOptions {
  std::string name;
  std::string scope;
  std::optional<double> rate;
  std::optional<int> burst;
  std::optional<int> max_concurrent;
  // Checks the parsed scope against the server's engines and tools (the application's config);
  // unset: not checked.
  std::function<Status(const Scope&)> check_scope = {};
};

// Returns a process exit code (0, 2 for bad arguments, 3 when the config cannot be read).
int runKeysNew(const KeysNewOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mcpdb::auth
