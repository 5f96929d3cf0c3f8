#include "common/env.hpp"

#include <cstdlib>

namespace mcpdb {

Env Env::process() {
  return Env([](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  });
}

Env Env::fromMap(std::map<std::string, std::string, std::less<>> vars) {
  return Env([vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  });
}

}  // namespace mcpdb
