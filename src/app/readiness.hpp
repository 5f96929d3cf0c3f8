#pragma once
// Readiness of `serve --http` (/readyz, observe/readiness.hpp) from the assembly: a probe per
// source the served tools read, of every enabled engine, and the start-up self-check's verdict.

#include <memory>

#include "app/app.hpp"
#include "app/checks.hpp"
#include "observe/readiness.hpp"

namespace mcpdb::app {

// The readiness of `a`'s enabled engines' sources. The self-check counts as pending until
// publishSelfCheck() is called, or as off with server.self_check: off. A source whose probe
// starts or stops failing is logged once per change (the operator's log: the error in full).
std::shared_ptr<observe::Readiness> makeReadiness(Assembly& a);

// Publishes the self-check's verdict to a.readiness (nothing when it is null: stdio, invoke).
// A violation keeps the server not ready; proved or inconclusive (a check it could not make is
// a warning in the log, not a write path) let reachability decide.
void publishSelfCheck(const Assembly& a, Verdict verdict);

}  // namespace mcpdb::app
