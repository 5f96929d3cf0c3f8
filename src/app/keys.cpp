// `keys new`: the scope of a new key is checked against the config before the key is made.
#include <ostream>

#include "app/app.hpp"
#include "app/surface.hpp"

namespace mcpdb::app {

Status checkScope(const AppOptions& options, const Env& env, const auth::Scope& scope,
                  std::ostream& err) {
  auto a = assemble(options, env, /*all_engines=*/true, err);
  if (!a) {
    return makeError(Code::FailedPrecondition,
                     "the config is invalid, so the scope cannot be checked (see above)");
  }
  std::vector<bool> registered(a->modules.size(), true);
  const auto problems = scopeProblems(scope, surfaceOf(a->modules, registered, *a->registry));
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += (text.empty() ? "" : "; ") + p;
    return makeError(Code::InvalidArgument, text + " (config: " + a->config.source + ")");
  }
  if (visibleTools(scope, *a->registry).empty()) {
    return makeError(Code::InvalidArgument,
                     "the scope lets the client see no tool of config " + a->config.source);
  }
  return {};
}

}  // namespace mcpdb::app
