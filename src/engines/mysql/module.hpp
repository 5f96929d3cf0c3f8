#pragma once
// The MySQL/MariaDB engine (registered by its name in MCPDB_ENGINES, src/engines/CMakeLists.txt).

#include <string_view>

#include <yaml-cpp/yaml.h>

#include "engines/engine.hpp"

namespace mcpdb::mysql {

engines::EngineModulePtr makeModule();

// The built-in `mysql:` section for the demo data set (default_section.yaml), as text and as the
// document yaml-cpp would parse from it, built without parsing.
std::string_view defaultSectionText();
YAML::Node defaultSectionDocument();

}  // namespace mcpdb::mysql
