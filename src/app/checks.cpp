#include "app/checks.hpp"

namespace mcpdb::app {
namespace {

// Whether the config uses engine `i`: it declares tools for it (the built-in allowlist declares
// every engine's demo tools and serves those whose environment is set, so there "declares" means
// "enabled").
bool usesEngine(const Assembly& a, std::size_t i) {
  return a.modules[i]->declaresTools() && (a.enabled[i] || a.config_path.has_value());
}

}  // namespace

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Ok: return "ok";
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Violation: return "VIOLATION";
    case Severity::Inconclusive: return "INCONCLUSIVE";
    case Severity::Unusable: return "unusable";
  }
  return "info";
}

std::vector<EngineReport> checkEngines(Assembly& a, bool check_tools,
                                       const std::function<void(const EngineReport&)>& each) {
  std::vector<EngineReport> reports;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    // The server is stopping (never for doctor): the engines not yet checked are not started on.
    if (a.stopping.stop_requested()) break;
    auto& m = *a.modules[i];
    EngineReport r{std::string(m.name()), "checked", "", {}};
    if (!usesEngine(a, i)) {
      r.state = a.enabled[i] ? "not used" : "not enabled";
      r.hint = a.enabled[i] ? "the config declares no " + r.name + " tools"
                            : std::string(m.enableHint());
    } else if (!a.enabled[i]) {
      r.state = "not enabled";
      r.hint = std::string(m.enableHint());
      r.findings.push_back(
          {Severity::Inconclusive, r.name + ".environment",
           "the config declares " + r.name +
               " tools but its environment is not set, so its credentials "
               "were not checked",
           std::string(m.enableHint()) + ", or remove the " + r.name + " section from the config"});
    } else {
      r.findings = m.selfCheck(a.services);
      if (check_tools) {
        auto tools = m.checkTools(a.services);
        r.findings.insert(r.findings.end(), tools.begin(), tools.end());
      }
    }
    if (each) each(r);
    reports.push_back(std::move(r));
  }
  return reports;
}

Verdict verdictOf(const std::vector<EngineReport>& reports) {
  bool checked = false;
  bool inconclusive = false;
  for (const auto& r : reports) {
    checked = checked || r.state == "checked";
    for (const auto& f : r.findings) {
      if (f.severity == Severity::Violation) return Verdict::Violation;
      inconclusive = inconclusive || f.severity == Severity::Inconclusive;
    }
  }
  return inconclusive || !checked ? Verdict::Inconclusive : Verdict::ProvedReadOnly;
}

}  // namespace mcpdb::app
