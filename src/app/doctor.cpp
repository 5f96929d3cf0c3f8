// `doctor`: the read-only proof and the tool check of every engine the config uses, as a report.
#include <ostream>

#include "app/app.hpp"
#include "app/checks.hpp"

namespace mcpdb::app {
namespace {

Json findingJson(const engines::Finding& f) {
  Json j = {{"severity", severityName(f.severity)}, {"check", f.check}, {"message", f.message}};
  if (!f.fix.empty()) j["fix"] = f.fix;
  return j;
}

void printFinding(std::ostream& out, const Json& f) {
  out << "  [" << f["severity"].get<std::string>() << "] " << f["check"].get<std::string>() << ": "
      << f["message"].get<std::string>() << "\n";
  if (!f.contains("fix")) return;
  // A fix may be several statements, one per line: each gets the same indentation.
  std::string fix = f["fix"].get<std::string>();
  for (std::size_t at = fix.find('\n'); at != std::string::npos; at = fix.find('\n', at + 1)) {
    fix.insert(at + 1, "           ");
  }
  out << "      fix: " << fix << "\n";
}

}  // namespace

int runDoctor(const AppOptions& options, const Env& env, bool json, std::ostream& out,
              std::ostream& err) {
  auto a = assemble(options, env, /*all_engines=*/false, err);
  if (!a) return kExitConfig;
  Json report = {{"config", a->config.source}, {"engines", Json::array()}};
  // Config-level checks (engine templates were already guard-checked while assembling).
  Json config_findings = Json::array();
  config_findings.push_back(
      {{"severity", "ok"},
       {"check", "config.valid"},
       {"message", "config is valid; every allowlisted statement passed the guardrail"}});
  if (a->config.server.self_check == config::SelfCheckMode::Off) {
    config_findings.push_back(
        {{"severity", "warning"},
         {"check", "config.self_check"},
         {"message",
          "server.self_check is off: the server will start even with write-capable credentials"},
         {"fix", "server: {self_check: refuse}"}});
  }
  for (const auto& w : a->warnings)
    config_findings.push_back({{"severity", "warning"}, {"check", "config"}, {"message", w}});
  report["config_findings"] = config_findings;

  const auto engines = checkEngines(*a, /*check_tools=*/true);
  const Verdict verdict = verdictOf(engines);
  std::size_t tools_checked = 0;
  std::size_t tools_unusable = 0;
  for (const auto& r : engines) {
    Json e = {{"name", r.name},
              {"state", r.state},
              {"enabled", r.state != "not enabled"},
              {"findings", Json::array()}};
    if (!r.hint.empty()) e["hint"] = r.hint;
    for (const auto& f : r.findings) {
      e["findings"].push_back(findingJson(f));
      if (f.check.find(".tool.") != std::string::npos ||
          f.check.find(".target.") != std::string::npos) {
        ++tools_checked;
        tools_unusable += f.severity == Severity::Unusable ? 1 : 0;
      }
    }
    report["engines"].push_back(e);
  }
  report["verdict"] = verdict == Verdict::Violation      ? "write-capable"
                      : verdict == Verdict::Inconclusive ? "inconclusive"
                                                         : "read-only";
  report["tools"] = {{"checked", tools_checked}, {"unusable", tools_unusable}};
  if (json) {
    out << report.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    out << "mcp-dbserver doctor — config: " << a->config.source << "\n";
    for (const auto& f : report["config_findings"]) printFinding(out, f);
    for (const auto& e : report["engines"]) {
      out << "\n" << e["name"].get<std::string>() << ": " << e["state"].get<std::string>();
      if (e.contains("hint")) out << " (" << e["hint"].get<std::string>() << ")";
      out << "\n";
      for (const auto& f : e["findings"]) printFinding(out, f);
    }
    out << "\nverdict: ";
    switch (verdict) {
      case Verdict::Violation:
        out << "VIOLATION: the configured credentials can write; an agent with code execution "
               "could change data\n";
        break;
      case Verdict::Inconclusive:
        out << "INCONCLUSIVE: a check could not be made (see [INCONCLUSIVE] above), so nothing "
               "is proved; fix it and run doctor again\n";
        break;
      case Verdict::ProvedReadOnly:
        out << "proved read-only: no write capability found for any engine this config uses\n";
        break;
    }
    if (tools_unusable > 0) {
      out << "tools: " << tools_unusable << " of " << tools_checked
          << " cannot run as the configured principal (see [unusable] above)\n";
    } else if (tools_checked > 0) {
      out << "tools: all " << tools_checked << " can run as the configured principal\n";
    }
  }
  if (verdict == Verdict::Violation) return kExitDoctorViolation;
  if (verdict == Verdict::Inconclusive) return kExitDoctorInconclusive;
  return tools_unusable > 0 ? kExitDoctorToolsUnusable : kExitOk;
}

}  // namespace mcpdb::app
