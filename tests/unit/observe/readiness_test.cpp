// The readiness state (observe/readiness.hpp) with fake probes: when it says ready, that asking
// never waits for a probe, that a flood of asks probes each source at most once per interval,
// that a probe out past its bound or a stale success says not ready, and the self-check's say.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "observe/readiness.hpp"

namespace mcpdb::observe {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A source whose answer the test sets: ok, failing, or hanging until released or stopped.
class FakeSource {
 public:
  enum class Mode { Ok, Fail, Hang };
  void set(Mode m) {
    std::lock_guard<std::mutex> lock(mu_);
    mode_ = m;
    cv_.notify_all();
  }
  int calls() const { return calls_.load(); }
  bool sawStop() const { return saw_stop_.load(); }

  ProbeFn probe() {
    return [this](Clock::time_point, const std::stop_token& stop) -> Status {
      ++calls_;
      std::unique_lock<std::mutex> lock(mu_);
      if (mode_ == Mode::Hang) {
        std::condition_variable_any& cv = cv_;
        cv.wait(lock, stop, [this] { return mode_ != Mode::Hang; });
        if (stop.stop_requested()) {
          saw_stop_ = true;
          return makeError(Code::Cancelled, "stopped");
        }
      }
      if (mode_ == Mode::Fail) return makeError(Code::Unavailable, "down (host db.internal:5432)");
      return {};
    };
  }

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  Mode mode_ = Mode::Ok;
  std::atomic<int> calls_{0};
  std::atomic<bool> saw_stop_{false};
};

ReadinessTimes fast() {
  ReadinessTimes t;
  t.interval = 50ms;
  t.timeout = 200ms;
  t.fresh = 5s;
  return t;
}

// Asks until `want` (the ready flag) or `within` passes; the last report.
ReadinessReport waitFor(Readiness& r, bool want, std::chrono::milliseconds within = 3000ms) {
  const auto until = Clock::now() + within;
  ReadinessReport last = r.report();
  while (last.ready != want && Clock::now() < until) {
    std::this_thread::sleep_for(5ms);
    last = r.report();
  }
  return last;
}

TEST(Readiness, NotReadyUntilEverySourceAnsweredThenReady) {
  FakeSource a, b;
  Readiness r({{"postgres", "main", a.probe()}, {"mysql", "shop", b.probe()}}, SelfCheckState::Off,
              fast());
  const ReadinessReport first = r.report();  // nothing probed yet
  EXPECT_FALSE(first.ready);
  EXPECT_EQ(first.sources_total, 2u);
  const ReadinessReport later = waitFor(r, true);
  EXPECT_TRUE(later.ready);
  EXPECT_EQ(later.sources_ready, 2u);
  ASSERT_EQ(later.sources.size(), 2u);
  EXPECT_EQ(later.sources[0].engine, "postgres");
  EXPECT_EQ(later.sources[1].source, "shop");
}

TEST(Readiness, AFailingSourceMakesItNotReadyAndCountsOnlyTheOthers) {
  FakeSource a, b;
  b.set(FakeSource::Mode::Fail);
  Readiness r({{"postgres", "main", a.probe()}, {"mysql", "shop", b.probe()}}, SelfCheckState::Off,
              fast());
  std::this_thread::sleep_for(300ms);
  const ReadinessReport rep = waitFor(r, true, 300ms);
  EXPECT_FALSE(rep.ready);
  EXPECT_EQ(rep.sources_ready, 1u);
  EXPECT_FALSE(rep.sources[1].ready);
  b.set(FakeSource::Mode::Ok);  // back: ready again at a later probe
  EXPECT_TRUE(waitFor(r, true).ready);
  a.set(FakeSource::Mode::Fail);  // and down again
  EXPECT_FALSE(waitFor(r, false).ready);
}

TEST(Readiness, TheSelfCheckDecidesBesideTheSources) {
  FakeSource a;
  Readiness r({{"postgres", "main", a.probe()}}, SelfCheckState::Pending, fast());
  // Sources answer, the check has not run: not ready.
  std::this_thread::sleep_for(200ms);
  ReadinessReport rep = waitFor(r, true, 300ms);
  EXPECT_FALSE(rep.ready);
  EXPECT_EQ(rep.sources_ready, 1u);
  EXPECT_EQ(rep.self_check, SelfCheckState::Pending);
  r.setSelfCheck(SelfCheckState::Passed);
  EXPECT_TRUE(waitFor(r, true).ready);
  r.setSelfCheck(SelfCheckState::Failed);  // a write path found: never ready
  rep = waitFor(r, true, 300ms);
  EXPECT_FALSE(rep.ready);
  EXPECT_EQ(rep.self_check, SelfCheckState::Failed);
}

TEST(Readiness, NoSourcesIsReadyOnceTheSelfCheckPassed) {
  Readiness r({}, SelfCheckState::Pending, fast());
  EXPECT_FALSE(r.report().ready);
  r.setSelfCheck(SelfCheckState::Passed);
  const ReadinessReport rep = r.report();
  EXPECT_TRUE(rep.ready);
  EXPECT_EQ(rep.sources_total, 0u);
}

// A flood of asks: each source probed at most once per interval (plus the first), and every ask
// answered without waiting for a probe.
TEST(Readiness, AFloodOfAsksProbesEachSourceAtMostOncePerInterval) {
  FakeSource a, b;
  ReadinessTimes t = fast();
  t.interval = 100ms;
  Readiness r({{"postgres", "main", a.probe()}, {"mongodb", "docs", b.probe()}},
              SelfCheckState::Off, t);
  const auto start = Clock::now();
  std::vector<std::thread> flood;
  std::atomic<long> asks{0};
  for (int i = 0; i < 4; ++i) {
    flood.emplace_back([&] {
      while (Clock::now() - start < 1000ms) {
        (void)r.report();
        ++asks;
      }
    });
  }
  for (auto& th : flood) th.join();
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  EXPECT_GT(asks.load(), 1000);
  // ceil(elapsed / interval) + 1 per source at most.
  const int bound = static_cast<int>(elapsed / t.interval) + 2;
  EXPECT_LE(a.calls(), bound);
  EXPECT_LE(b.calls(), bound);
  EXPECT_GE(a.calls(), 2);  // and it did keep probing while asked
  EXPECT_EQ(r.probesStarted(), static_cast<std::uint64_t>(a.calls() + b.calls()));
}

TEST(Readiness, NoAsksNoProbes) {
  FakeSource a;
  Readiness r({{"postgres", "main", a.probe()}}, SelfCheckState::Off, fast());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(a.calls(), 0);
}

// A source that stops answering mid-probe: not ready once the probe is out past its bound,
// although its last finished probe succeeded, and asking stays instant meanwhile.
TEST(Readiness, AHungProbeSaysNotReadyAfterItsBoundWithoutHangingTheAsk) {
  FakeSource a, b;
  Readiness r({{"postgres", "main", a.probe()}, {"mysql", "shop", b.probe()}}, SelfCheckState::Off,
              fast());
  ASSERT_TRUE(waitFor(r, true).ready);
  a.set(FakeSource::Mode::Hang);
  std::this_thread::sleep_for(100ms);  // the next probe starts and hangs
  (void)r.report();
  const auto t0 = Clock::now();
  const ReadinessReport rep = waitFor(r, false);
  EXPECT_FALSE(rep.ready);
  // Not ready within interval + timeout (+ slack), not at some driver timeout.
  EXPECT_LT(Clock::now() - t0, 1000ms);
  // The other source is still probed and ready: the hung one delays nobody.
  const int before = b.calls();
  std::this_thread::sleep_for(200ms);
  (void)r.report();
  std::this_thread::sleep_for(50ms);
  (void)r.report();
  EXPECT_GT(b.calls(), before);
  EXPECT_TRUE(r.report().sources[1].ready);
  // One ask costs no probe's time.
  const auto ask = Clock::now();
  for (int i = 0; i < 100; ++i) (void)r.report();
  EXPECT_LT(Clock::now() - ask, 100ms);
}

TEST(Readiness, AStaleSuccessIsNotReady) {
  FakeSource a;
  ReadinessTimes t = fast();
  t.fresh = 300ms;
  Readiness r({{"postgres", "main", a.probe()}}, SelfCheckState::Off, t);
  ASSERT_TRUE(waitFor(r, true).ready);
  std::this_thread::sleep_for(500ms);  // nobody asked: no probe, the success ages out
  EXPECT_FALSE(r.report().ready);
  EXPECT_TRUE(waitFor(r, true).ready);  // the ask woke a probe
}

TEST(Readiness, StoppingEndsAHungProbe) {
  FakeSource a;
  {
    Readiness r({{"postgres", "main", a.probe()}}, SelfCheckState::Off, fast());
    a.set(FakeSource::Mode::Hang);
    (void)r.report();
    std::this_thread::sleep_for(50ms);
  }  // joins: returns only because the probe saw its stop token
  EXPECT_TRUE(a.sawStop());
}

}  // namespace
}  // namespace mcpdb::observe
