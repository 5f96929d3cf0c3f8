#pragma once
// `mcp-dbserver keys new`: makes a key, prints it once, and the config lines holding its hash.

#include <iosfwd>
#include <optional>
#include <string>

namespace mcpdb::auth {

struct KeysNewOptions {
  std::string name;
  std::string scope;
  std::optional<double> rate;
  std::optional<int> burst;
  std::optional<int> max_concurrent;
};

// Returns a process exit code (0, or 2 for bad arguments).
int runKeysNew(const KeysNewOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mcpdb::auth
