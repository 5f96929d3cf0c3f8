#pragma once
// The MongoDB engine module (registered in src/engines/all_engines.cpp).

#include "engines/engine.hpp"

namespace mcpdb::mongodb {

engines::EngineModulePtr makeModule();

}  // namespace mcpdb::mongodb
