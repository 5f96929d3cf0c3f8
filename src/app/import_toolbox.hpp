#pragma once
// `import-toolbox FILE [-o OUT]`: turns a Google MCP Toolbox tools file into this server's config.
//
// Both of Toolbox's forms are read: the maps form (`sources:`, `tools:`, `toolsets:`, each entry
// with its `kind:`; Toolbox before 1.0 and still read by 1.12) and the multi-document form (one
// YAML document per `kind: source | tool | toolset` with `name:` and `type:`; Toolbox 1.x).
// PostgreSQL and MySQL sources become named sources whose DSN is read from an environment
// variable (a .env template names them; a password found in the file is never copied, only a
// `${VAR}` reference is); `postgres-sql` and `mysql-sql` tools become tools of the same kind with
// their parameters; toolsets become the `keys new --scope` that gives a client exactly that set.
// What has no safe equivalent (a tool that runs any SQL, template parameters spliced into the
// statement, other databases) is refused with the reason, and so is a statement the guard refuses:
// the config written passes check-config.

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "app/app.hpp"
#include "common/result.hpp"

namespace mcpdb::app {

struct ToolboxImport {
  std::string config;                  // our config (YAML), without any credential
  std::string env_template;            // the variables it reads, one per source, as a .env template
  std::vector<std::string> converted;  // "tool X (postgres, source s)"
  std::vector<std::string> refused;    // "tool X: why"
  std::vector<std::string> notes;      // what changed on the way (renamed, dropped keys)
};

// The conversion alone (no validation against the guard): for tests and runImportToolbox.
Result<ToolboxImport> convertToolbox(std::string_view text, std::string_view file_name);

// The command: converts, then refuses each tool our config checks refuse and converts again,
// until the config passes check-config. Writes the config to `out_path` (or `out` when empty),
// its .env template next to it (`<out_path>.env`; on `err` otherwise) and a report on `err`.
// Exit 0, 2 when the file cannot be read, 3 when it is not a Toolbox file or nothing is left.
int runImportToolbox(const std::string& file, const std::string& out_path, std::ostream& out,
                     std::ostream& err);

}  // namespace mcpdb::app
