#include "app/readiness.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace mcpdb::app {
namespace {

// `probe`, logging when its outcome changes (not on every probe: a flood of /readyz writes no
// flood of lines). The first failure is logged too; the first success only after a failure.
observe::ProbeFn logChanges(std::string engine, std::string source, observe::ProbeFn probe) {
  auto failing = std::make_shared<std::atomic<bool>>(false);
  return [engine = std::move(engine), source = std::move(source), probe = std::move(probe),
          failing](std::chrono::steady_clock::time_point deadline, const std::stop_token& stop) {
    Status st = probe(deadline, stop);
    if (!st && !stop.stop_requested() && !failing->exchange(true)) {
      spdlog::warn("readiness: {} source '{}' does not answer: {}", engine, source,
                   operatorText(st.error()));
    } else if (st && failing->exchange(false)) {
      spdlog::info("readiness: {} source '{}' answers again", engine, source);
    }
    return st;
  };
}

}  // namespace

std::shared_ptr<observe::Readiness> makeReadiness(Assembly& a) {
  std::vector<observe::ReadinessTarget> targets;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    if (!a.enabled[i]) continue;
    const std::string engine(a.modules[i]->name());
    for (auto& p : a.modules[i]->probes(a.services)) {
      targets.push_back({engine, p.source, logChanges(engine, p.source, std::move(p.probe))});
    }
  }
  const auto self_check = a.config.server.self_check == config::SelfCheckMode::Off
                              ? observe::SelfCheckState::Off
                              : observe::SelfCheckState::Pending;
  return std::make_shared<observe::Readiness>(std::move(targets), self_check);
}

void publishSelfCheck(const Assembly& a, Verdict verdict) {
  if (!a.readiness) return;
  a.readiness->setSelfCheck(verdict == Verdict::Violation ? observe::SelfCheckState::Failed
                                                          : observe::SelfCheckState::Passed);
}

}  // namespace mcpdb::app
