#pragma once
// The MySQL engine's tools: one per allowlisted statement of the `mysql:` section.

#include <memory>

#include "common/result.hpp"
#include "engines/mysql/config.hpp"
#include "engines/mysql/runtime.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::mysql {

// Adds a query tool for each of `settings.tools`, each served by the runtime of its source
// (`runtimeOf`, asked once per tool here; never connects).
Status registerTools(protocol::ToolRegistry& registry, const Settings& settings,
                     const RuntimeOf& runtimeOf);

}  // namespace mcpdb::mysql
