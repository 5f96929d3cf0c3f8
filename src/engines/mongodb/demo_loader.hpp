#pragma once
// The mongodb demo loader (demo_loader.cpp, library mcpdb_engine_mongodb_demo): linked only into
// mcp-dbserver-load, never into the server.

#include "engines/demo.hpp"
#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/config.hpp"

namespace mcpdb::mongodb {

engines::DemoLoader demoLoader();

namespace demo_detail {
// The createSearchIndexes command for the demo target (the wire-shape unit test checks it: the
// command is Atlas-only and cannot run here).
BsonPtr createSearchIndexesCommand(const Target& target, std::uint32_t dimensions);
// The demo target from the built-in section, so the loader and the server agree on names.
Result<Target> demoTarget();
}  // namespace demo_detail

}  // namespace mcpdb::mongodb
