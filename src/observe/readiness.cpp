#include "observe/readiness.hpp"

namespace mcpdb::observe {

std::string_view selfCheckName(SelfCheckState state) {
  switch (state) {
    case SelfCheckState::Pending: return "pending";
    case SelfCheckState::Passed: return "passed";
    case SelfCheckState::Failed: return "failed";
    case SelfCheckState::Off: return "off";
  }
  return "pending";
}

Readiness::Readiness(std::vector<ReadinessTarget> targets, SelfCheckState self_check,
                     ReadinessTimes times)
    : times_(times), self_check_(self_check) {
  for (auto& t : targets) {
    auto s = std::make_unique<Source>();
    s->target = std::move(t);
    sources_.push_back(std::move(s));
  }
  // A thread per source: one source whose driver ignores its deadline never delays the probes of
  // the others. Each sleeps until a report asks for a probe.
  for (auto& s : sources_) {
    s->thread =
        std::jthread([this, src = s.get()](const std::stop_token& stop) { probeLoop(*src, stop); });
  }
}

Readiness::~Readiness() {
  for (auto& s : sources_) s->thread.request_stop();
  for (auto& s : sources_) {
    if (s->thread.joinable()) s->thread.join();
  }
}

void Readiness::setSelfCheck(SelfCheckState state) {
  self_check_.store(state);
}

std::uint64_t Readiness::probesStarted() const {
  return probes_.load();
}

void Readiness::probeLoop(Source& s, const std::stop_token& stop) {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(s.mu);
      if (!s.wake.wait(lock, stop, [&s] { return s.wanted; })) return;
      s.wanted = false;
      s.in_flight = true;
      s.started = Clock::now();
    }
    probes_.fetch_add(1);
    const Status st = s.target.probe(Clock::now() + times_.timeout, stop);
    std::lock_guard<std::mutex> lock(s.mu);
    s.in_flight = false;
    s.probed = true;
    s.ok = st.ok();
    s.ended = Clock::now();
  }
}

bool Readiness::judge(Source& s, Clock::time_point now) {
  if (!s.in_flight && (!s.probed || now - s.started >= times_.interval) && !s.wanted) {
    s.wanted = true;
    s.wake.notify_one();
  }
  // Out longer than its deadline: whatever the last one said, the source does not answer now.
  if (s.in_flight && now - s.started > times_.timeout) return false;
  return s.probed && s.ok && now - s.ended <= times_.fresh;
}

ReadinessReport Readiness::report() {
  ReadinessReport r;
  r.self_check = self_check_.load();
  const Clock::time_point now = Clock::now();
  for (auto& s : sources_) {
    bool ready = false;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      ready = judge(*s, now);
    }
    r.sources.push_back({s->target.engine, s->target.source, ready});
    if (ready) ++r.sources_ready;
  }
  r.sources_total = sources_.size();
  const bool checked =
      r.self_check == SelfCheckState::Passed || r.self_check == SelfCheckState::Off;
  r.ready = checked && r.sources_ready == r.sources_total;
  return r;
}

}  // namespace mcpdb::observe
