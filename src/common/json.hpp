#pragma once
// One JSON type for the whole project (nlohmann-json from Debian).
#include <nlohmann/json.hpp>

namespace mcpdb {
using Json = nlohmann::json;
}  // namespace mcpdb
