#pragma once

#include <functional>
// The engines' read-only self-checks as the application runs them: at start-up (serve) and in
// `doctor`, with one verdict rule for both.

#include <string>
#include <string_view>
#include <vector>

#include "app/app.hpp"

namespace mcpdb::app {

using Severity = engines::Finding::Severity;

std::string_view severityName(Severity s);

// The three outcomes of a read-only proof; a verdict is never more confident than its evidence.
enum class Verdict { ProvedReadOnly, Violation, Inconclusive };

struct EngineReport {
  std::string name;
  std::string state;  // "checked", "not enabled", "not used"
  std::string hint;
  std::vector<engines::Finding> findings;
};

// The self-check (and, with check_tools, the proof that each tool can run: doctor and the start-up
// self-check) of every engine the config uses. An engine the
// config uses whose environment is unset could not be checked: inconclusive.
// `each` sees every engine's report as soon as it is made (the start-up self-check logs it then,
// so what was found is logged even when the server stops before the last engine is checked).
std::vector<EngineReport> checkEngines(Assembly& a, bool check_tools,
                                       const std::function<void(const EngineReport&)>& each = {});

// Violation if any finding is one; Inconclusive if any check could not be made or nothing was
// checked; otherwise ProvedReadOnly.
Verdict verdictOf(const std::vector<EngineReport>& reports);

}  // namespace mcpdb::app
