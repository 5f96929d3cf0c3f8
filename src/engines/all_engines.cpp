#include "engines/dynamodb/dynamodb.hpp"
#include "engines/engine.hpp"
#include "engines/mongodb/module.hpp"
#include "engines/postgres/module.hpp"

// Engine registration: one explicit line per engine, no static initialisers (static archives
// drop them). Each engine exposes `makeModule()` from its own folder.

namespace mcpdb::engines {

std::vector<EngineModulePtr> allEngineModules() {
  std::vector<EngineModulePtr> modules;
  modules.push_back(postgres::makeModule());
  modules.push_back(dynamodb::makeModule());
  modules.push_back(mongodb::makeModule());
  return modules;
}

}  // namespace mcpdb::engines
