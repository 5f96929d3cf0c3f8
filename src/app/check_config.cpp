// `check-config`: validates the config and prints the surface it serves, without connecting.
#include <ostream>

#include "app/app.hpp"
#include "app/surface.hpp"

namespace mcpdb::app {

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
  for (std::size_t i = 0; i < a->modules.size(); ++i) {
    const auto& m = a->modules[i];
    std::size_t count = 0;
    for (const auto& t : a->registry->tools()) count += t->engine == m->name() ? 1 : 0;
    out << "\nengine " << m->name() << ": " << count << " tool" << (count == 1 ? "" : "s") << ", "
        << (a->enabled[i] ? "enabled by the environment"
                          : "disabled (" + std::string(m->enableHint()) + ")")
        << "\n";
    out << "  read-only: " << m->securityPosture() << "\n";
    for (const auto& t : a->registry->tools()) {
      if (t->engine != m->name()) continue;
      out << "  - " << t->name << ": " << t->title << "\n";
      const Json& props = t->input_schema.value("properties", Json::object());
      for (const auto& [pname, p] : props.items()) {
        out << "      " << pname << " (" << p.value("type", Json("any")).dump() << ")";
        if (p.contains("minimum") || p.contains("maximum")) {
          out << " " << p.value("minimum", Json("")).dump() << ".."
              << p.value("maximum", Json("")).dump();
        }
        out << "\n";
      }
      out << "      limits: max_rows=" << t->limits.max_rows << " max_bytes=" << t->limits.max_bytes
          << " timeout_ms=" << t->limits.timeout.count() << "\n";
    }
  }
  if (a->modules.empty()) out << "\n(no engines in this build)\n";
  if (!a->http.auth.clients.empty()) out << "\nhttp clients (what each key can see and call):\n";
  for (const auto& c : a->http.auth.clients) {
    const auto visible = visibleTools(c.scope, *a->registry);
    out << "  - " << c.name << " (scope " << c.scope.toString() << "): " << visible.size()
        << " tool" << (visible.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < visible.size(); ++i) out << (i == 0 ? ": " : ", ") << visible[i];
    out << "\n";
  }
  out << "\n"
      << a->registry->size() << " tool" << (a->registry->size() == 1 ? "" : "s") << " in total\n";
  return kExitOk;
}

}  // namespace mcpdb::app
