#include "app/surface.hpp"

#include <algorithm>

#include "common/suggest.hpp"

namespace mcpdb::app {

Surface surfaceOf(const std::vector<engines::EngineModulePtr>& modules,
                  const std::vector<bool>& registered, const protocol::ToolRegistry& registry) {
  Surface s;
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const std::string name(modules[i]->name());
    s.tools[name];
    if (registered[i]) s.registered.insert(name);
  }
  for (const auto& t : registry.tools()) s.tools[t->engine].push_back(t->name);
  return s;
}

std::vector<std::string> scopeProblems(const auth::Scope& scope, const Surface& surface) {
  std::vector<std::string> out;
  if (scope.all()) return out;
  std::vector<std::string> engine_names;
  for (const auto& [engine, tools] : surface.tools) engine_names.push_back(engine);
  auto checkEngine = [&](const std::string& engine) {
    if (surface.tools.count(engine) != 0) return true;
    std::string list;
    for (const auto& e : engine_names) list += (list.empty() ? "" : ", ") + e;
    out.push_back("scope names engine '" + engine + "', which this server does not have" +
                  didYouMean(engine, engine_names) + " (engines: " + list + ")");
    return false;
  };
  for (const auto& e : scope.engines()) checkEngine(e);
  for (const auto& [engine, tools] : scope.tools()) {
    if (!checkEngine(engine) || surface.registered.count(engine) == 0) continue;
    const auto& known = surface.tools.at(engine);
    for (const auto& t : tools) {
      if (std::find(known.begin(), known.end(), t) != known.end()) continue;
      out.push_back("scope names tool '" + t + "' of engine '" + engine +
                    "', which the config does not define" + didYouMean(t, known) +
                    (known.empty() ? std::string(" (that engine has no tools)") : ""));
    }
  }
  return out;
}

std::vector<std::string> visibleTools(const auth::Scope& scope,
                                      const protocol::ToolRegistry& registry) {
  std::vector<std::string> out;
  for (const auto& t : registry.tools()) {
    if (scope.allows(t->engine, t->name)) out.push_back(t->name);
  }
  return out;
}

}  // namespace mcpdb::app
