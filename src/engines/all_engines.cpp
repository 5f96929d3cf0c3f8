#include "engines/engine.hpp"

// Engine registration: one explicit line per engine, no static initialisers (static archives
// drop them). Each engine exposes `makeModule()` from its own folder.

namespace mcpdb::engines {

std::vector<EngineModulePtr> allEngineModules() {
  std::vector<EngineModulePtr> modules;
  return modules;
}

}  // namespace mcpdb::engines
