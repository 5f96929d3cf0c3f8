#include "engines/demo.hpp"

// The demo loaders of this build: one generated line per engine that has one
// (demo_loader_list.inc, written by src/engines/CMakeLists.txt). Linked only into the loader.

#define MCPDB_DEMO_LOADER(name)     \
  namespace mcpdb::name {           \
  engines::DemoLoader demoLoader(); \
  }
#include "engines/demo_loader_list.inc"
#undef MCPDB_DEMO_LOADER

namespace mcpdb::engines {

std::vector<DemoLoader> allDemoLoaders() {
  std::vector<DemoLoader> loaders;
#define MCPDB_DEMO_LOADER(name) loaders.push_back(mcpdb::name::demoLoader());
#include "engines/demo_loader_list.inc"
#undef MCPDB_DEMO_LOADER
  return loaders;
}

}  // namespace mcpdb::engines
