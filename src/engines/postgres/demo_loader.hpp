#pragma once
// The postgres demo loader (demo_loader.cpp, library mcpdb_engine_postgres_demo): linked only into
// mcp-dbserver-load, never into the server.

#include "engines/demo.hpp"

namespace mcpdb::postgres {

engines::DemoLoader demoLoader();

}  // namespace mcpdb::postgres
