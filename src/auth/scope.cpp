#include "auth/scope.hpp"

#include "protocol/tool_registry.hpp"

namespace mcpdb::auth {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool validEngineName(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

Scope Scope::everything() {
  Scope s;
  s.all_ = true;
  return s;
}

Result<Scope> Scope::parse(std::string_view text) {
  Scope s;
  std::string_view rest = text;
  bool any = false;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    if (!entry.empty()) {
      any = true;
      if (entry == "*") {
        s.all_ = true;
      } else {
        const auto colon = entry.find(':');
        const std::string_view engine = entry.substr(0, colon);
        if (!validEngineName(engine)) {
          return makeError(Code::InvalidArgument,
                           "scope entry '" + std::string(entry.substr(0, 64)) +
                               "': the engine name must be lower-case letters, digits or _");
        }
        if (colon == std::string_view::npos) {
          s.engines_.emplace(engine);
        } else {
          std::string_view tools = entry.substr(colon + 1);
          auto& set = s.tools_[std::string(engine)];
          while (true) {
            const auto c = tools.find(':');
            const std::string_view tool = trim(tools.substr(0, c));
            if (!protocol::isValidToolName(tool)) {
              return makeError(Code::InvalidArgument,
                               "scope entry '" + std::string(entry.substr(0, 64)) + "': '" +
                                   std::string(tool.substr(0, 64)) + "' is not a valid tool name");
            }
            set.emplace(tool);
            if (c == std::string_view::npos) break;
            tools.remove_prefix(c + 1);
          }
        }
      }
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!any)
    return makeError(Code::InvalidArgument, "the scope is empty: name at least one engine (or *)");
  return s;
}

bool Scope::allows(std::string_view engine, std::string_view tool) const {
  if (all_) return true;
  if (engines_.count(engine) != 0) return true;
  const auto it = tools_.find(engine);
  return it != tools_.end() && it->second.count(tool) != 0;
}

std::string Scope::toString() const {
  if (all_) return "*";
  std::string out;
  for (const auto& e : engines_) out += (out.empty() ? "" : ",") + e;
  for (const auto& [engine, tools] : tools_) {
    if (engines_.count(engine) != 0) continue;
    out += (out.empty() ? "" : ",") + engine;
    for (const auto& t : tools) out += ":" + t;
  }
  return out;
}

}  // namespace mcpdb::auth
