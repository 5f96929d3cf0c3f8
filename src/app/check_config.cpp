// `check-config`: validates the config and prints the surface it serves, without connecting.
#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "app/app.hpp"
#include "app/surface.hpp"

namespace mcpdb::app {
namespace {

std::string plural(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::vector<const protocol::Tool*> toolsOf(const protocol::ToolRegistry& registry,
                                           std::string_view engine) {
  std::vector<const protocol::Tool*> out;
  for (const auto& t : registry.tools()) {
    if (t->engine == engine) out.push_back(t.get());
  }
  return out;
}

// A JSON Schema scalar as text: "1" for 1, "a" for "a" (no quotes around strings).
std::string scalarText(const Json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// One parameter as an operator reads it: "limit: integer (1..50, default 10)".
std::string describeParam(const std::string& name, const Json& p, bool required) {
  std::string type;
  const Json t = p.value("type", Json("any"));
  if (t.is_array()) {
    for (const auto& one : t) type += (type.empty() ? "" : " or ") + scalarText(one);
  } else {
    type = scalarText(t);
  }
  std::vector<std::string> facts;
  if (p.contains("enum")) {
    std::string values;
    for (const auto& v : p["enum"]) values += (values.empty() ? "" : " | ") + scalarText(v);
    facts.push_back("one of " + values);
  }
  const auto range = [&](const char* lo, const char* hi, std::string_view unit) {
    const bool has_lo = p.contains(lo);
    const bool has_hi = p.contains(hi);
    if (!has_lo && !has_hi) return;
    std::string r = has_lo && has_hi ? scalarText(p[lo]) + ".." + scalarText(p[hi])
                    : has_lo         ? "at least " + scalarText(p[lo])
                                     : "at most " + scalarText(p[hi]);
    facts.push_back(r + std::string(unit));
  };
  range("minimum", "maximum", "");
  range("minLength", "maxLength", " characters");
  range("minItems", "maxItems", " items");
  if (required) facts.insert(facts.begin(), "required");
  if (p.contains("format")) facts.insert(facts.begin(), scalarText(p["format"]));
  if (p.contains("default")) facts.push_back("default " + scalarText(p["default"]));
  std::string text = name + ": " + type;
  for (std::size_t i = 0; i < facts.size(); ++i) text += (i == 0 ? " (" : ", ") + facts[i];
  return facts.empty() ? text : text + ")";
}

void printTool(std::ostream& out, const protocol::Tool& t) {
  out << "  - " << t.name << ": " << t.title;
  if (!t.source.empty()) out << " (source " << t.source << ")";
  out << "\n";
  const Json& props = t.input_schema.value("properties", Json::object());
  const Json& required = t.input_schema.value("required", Json::array());
  for (const auto& [pname, p] : props.items()) {
    const bool req = std::find(required.begin(), required.end(), Json(pname)) != required.end();
    out << "      " << describeParam(pname, p, req) << "\n";
  }
  out << "      limits: max_rows=" << t.limits.max_rows << " max_bytes=" << t.limits.max_bytes
      << " timeout_ms=" << t.limits.timeout.count() << "\n";
}

void printServedEngine(std::ostream& out, const engines::EngineModule& m,
                       const std::vector<const protocol::Tool*>& tools) {
  out << "\nengine " << m.name() << ": " << plural(tools.size(), "tool")
      << ", enabled by the environment\n";
  out << "  read-only: " << m.securityPosture() << "\n";
  for (const auto* t : tools) printTool(out, *t);
}

// Declared, but its environment is not set: named, not described (nothing of it is served).
void printUnservedEngine(std::ostream& out, const engines::EngineModule& m,
                         const std::vector<const protocol::Tool*>& tools) {
  out << "\nengine " << m.name() << ": " << plural(tools.size(), "tool")
      << " declared, not served: its environment is not set (" << m.enableHint() << ")\n";
  out << "  ";
  for (std::size_t i = 0; i < tools.size(); ++i) out << (i == 0 ? "" : ", ") << tools[i]->name;
  out << "\n";
}

}  // namespace

int runCheckConfig(const AppOptions& options, const Env& env, bool json, std::ostream& out,
                   std::ostream& err) {
  auto a = assemble(options, env, /*all_engines=*/true, err);
  if (!a) return kExitConfig;
  if (json) {
    Json tools = Json::array();
    for (const auto& t : a->registry->tools()) {
      Json d = protocol::ToolRegistry::describe(*t);
      d["engine"] = t->engine;
      tools.push_back(std::move(d));
    }
    Json engines = Json::array();
    for (std::size_t i = 0; i < a->modules.size(); ++i) {
      engines.push_back({{"name", a->modules[i]->name()},
                         {"enabled", static_cast<bool>(a->enabled[i])},
                         {"enable_hint", a->modules[i]->enableHint()}});
    }
    Json clients = Json::array();
    for (const auto& c : a->http.auth.clients) {
      clients.push_back({{"name", c.name},
                         {"scope", c.scope.toString()},
                         {"tools", visibleTools(c.scope, *a->registry)}});
    }
    Json warnings = a->warnings;
    out << Json{{"config", a->config.source}, {"valid", true},  {"warnings", warnings},
                {"engines", engines},         {"tools", tools}, {"clients", clients}}
               .dump(2, ' ', false, Json::error_handler_t::replace)
        << "\n";
    return kExitOk;
  }
  out << "config: " << a->config.source << " (valid)\n";
  out << "limits: max_rows=" << a->config.limits.max_rows
      << " max_bytes=" << a->config.limits.max_bytes
      << " timeout_ms=" << a->config.limits.timeout.count() << "\n";
  for (const auto& w : a->warnings) out << "warning: " << w << "\n";
  std::size_t served = 0;
  std::vector<std::string> unused;
  for (std::size_t i = 0; i < a->modules.size(); ++i) {
    const auto& m = *a->modules[i];
    const auto tools = toolsOf(*a->registry, m.name());
    if (a->enabled[i]) {
      served += tools.size();
      printServedEngine(out, m, tools);
    } else if (!tools.empty()) {
      printUnservedEngine(out, m, tools);
    } else {
      unused.push_back(std::string(m.name()) + " (" + std::string(m.enableHint()) + ")");
    }
  }
  if (a->modules.empty()) out << "\n(no engines in this build)\n";
  if (!unused.empty()) {
    out << "\nnot used (no tools in the config, environment not set):\n";
    for (const auto& u : unused) out << "  - " << u << "\n";
  }
  if (!a->http.auth.clients.empty()) out << "\nhttp clients (what each key can see and call):\n";
  for (const auto& c : a->http.auth.clients) {
    const auto visible = visibleTools(c.scope, *a->registry);
    out << "  - " << c.name << " (scope " << c.scope.toString() << "): " << visible.size()
        << " tool" << (visible.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < visible.size(); ++i) out << (i == 0 ? ": " : ", ") << visible[i];
    out << "\n";
  }
  const std::size_t declared = a->registry->size();
  out << "\n" << plural(served, "tool") << " served now with this environment";
  if (declared != served) out << " (" << declared << " declared by the config)";
  out << "\n";
  return kExitOk;
}

}  // namespace mcpdb::app
