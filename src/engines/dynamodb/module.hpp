#pragma once
// The DynamoDB engine module (see engines/engine.hpp).

#include "engines/dynamodb/runtime.hpp"
#include "engines/engine.hpp"

namespace mcpdb::dynamodb {

engines::EngineModulePtr makeModule();
// With injected credentials / retry policy (tests).
engines::EngineModulePtr makeModule(BackendOptions options);

}  // namespace mcpdb::dynamodb
