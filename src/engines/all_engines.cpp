#include "engines/engine.hpp"

// Engine registration: one generated line per engine of this build (engine_list.inc, written by
// src/engines/CMakeLists.txt from MCPDB_ENGINES and the MCPDB_ENGINE_<NAME> options), no static
// initialisers (static archives drop them). Each engine defines `makeModule()` in its own folder.

#define MCPDB_ENGINE(name)               \
  namespace mcpdb::name {                \
  engines::EngineModulePtr makeModule(); \
  }
#include "engines/engine_list.inc"
#undef MCPDB_ENGINE

namespace mcpdb::engines {

std::vector<EngineModulePtr> allEngineModules() {
  std::vector<EngineModulePtr> modules;
#define MCPDB_ENGINE(name) modules.push_back(mcpdb::name::makeModule());
#include "engines/engine_list.inc"
#undef MCPDB_ENGINE
  return modules;
}

}  // namespace mcpdb::engines
