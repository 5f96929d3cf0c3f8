#pragma once
// What this server has to offer, as a key's scope sees it: the engines and their registered tools.
// Checked when a key is made (`keys new`), when the config is assembled and when clients reload.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "auth/scope.hpp"
#include "engines/engine.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::app {

// Every engine and the names of its registered tools (engines with no registered tool map to an
// empty set and `registered` false).
struct Surface {
  std::map<std::string, std::vector<std::string>> tools;  // engine -> tool names
  std::set<std::string> registered;                       // engines whose tools were registered
};

Surface surfaceOf(const std::vector<engines::EngineModulePtr>& modules,
                  const std::vector<bool>& registered, const protocol::ToolRegistry& registry);

// What in `scope` names no engine or tool this server has (empty when all is known). Tools of an
// engine whose tools were not registered (disabled, when serving) cannot be checked.
std::vector<std::string> scopeProblems(const auth::Scope& scope, const Surface& surface);

// The tools `scope` lets a client see.
std::vector<std::string> visibleTools(const auth::Scope& scope,
                                      const protocol::ToolRegistry& registry);

}  // namespace mcpdb::app
