#pragma once
// The Postgres engine module (registered in src/engines/all_engines.cpp).

#include "engines/engine.hpp"

namespace mcpdb::postgres {

// A new, unconfigured Postgres module.
engines::EngineModulePtr makeModule();

// The built-in `postgres:` section serving the demo data set (YAML; default_section.yaml).
std::string_view defaultSectionText();
// The same, as the document yaml-cpp would parse from it, built without parsing.
YAML::Node defaultSectionDocument();

}  // namespace mcpdb::postgres
