#pragma once
// The dynamodb demo loader (demo_loader.cpp, library mcpdb_engine_dynamodb_demo): linked only into
// mcp-dbserver-load, never into the server.

#include "engines/demo.hpp"

namespace mcpdb::dynamodb {

engines::DemoLoader demoLoader();

}  // namespace mcpdb::dynamodb
