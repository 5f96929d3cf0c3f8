// Per-source bulkheads (issue #28): a source's calls running at once are capped server-wide,
// the rest wait in the source's own queue (no worker held), so a hung source fails only its own
// tools.

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "protocol/bulkhead.hpp"
#include "protocol/session.hpp"

namespace mcpdb::protocol {
namespace {

using namespace std::chrono_literals;

// ---- the Bulkhead itself ---------------------------------------------------------------------

TEST(Bulkhead, HandsOutItsLimitThenRefusesUntilASlotComesBack) {
  Bulkhead b("the postgres source 'reports'", 2);
  auto s1 = b.tryAcquire();
  auto s2 = b.tryAcquire();
  EXPECT_TRUE(s1);
  EXPECT_TRUE(s2);
  EXPECT_EQ(b.inUse(), 2U);
  auto s3 = b.tryAcquire();
  EXPECT_FALSE(s3);
  EXPECT_EQ(b.inUse(), 2U);  // a refusal holds nothing
  s1.release();
  s1.release();  // releasing twice gives back one slot, not two
  EXPECT_EQ(b.inUse(), 1U);
  s3 = b.tryAcquire();
  EXPECT_TRUE(s3);
  {
    Bulkhead::Slot moved = std::move(s2);  // a moved slot is held once, by its new owner
    EXPECT_FALSE(s2);                      // NOLINT(bugprone-use-after-move): tests the move
    EXPECT_EQ(b.inUse(), 2U);
  }
  EXPECT_EQ(b.inUse(), 1U);  // released when its owner goes
  s3 = Bulkhead::Slot();     // assigning over a held slot releases it
  EXPECT_EQ(b.inUse(), 0U);
}

TEST(Bulkhead, ALimitOfZeroStillLetsOneCallRun) {
  Bulkhead b("x", 0);
  EXPECT_EQ(b.limit(), 1U);
  auto s = b.tryAcquire();
  EXPECT_TRUE(s);
  EXPECT_FALSE(b.tryAcquire());
}

TEST(Bulkhead, NeverExceedsItsLimitUnderConcurrency) {
  constexpr std::size_t kLimit = 3;
  Bulkhead b("x", kLimit);
  std::atomic<std::size_t> holding{0};
  std::atomic<std::size_t> most{0};
  std::atomic<std::size_t> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        auto s = b.tryAcquire();
        if (!s) continue;
        ++granted;
        const std::size_t now = ++holding;
        std::size_t seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        --holding;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(most.load(), kLimit);
  EXPECT_GT(granted.load(), 0U);
  EXPECT_EQ(b.inUse(), 0U);
}

// ---- waiting for a slot ----------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

// What a waiter was told, in order, across threads.
struct Told {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;  // "granted <n>", "timed_out <n>", "cancelled <n>", "closed <n>"
  std::vector<Bulkhead::Slot> slots;  // the slots granted, held until the test drops them
  std::vector<std::thread::id> threads;
  void add(std::string event, Bulkhead::Slot slot = {}) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::move(event));
    threads.push_back(std::this_thread::get_id());
    if (slot) slots.push_back(std::move(slot));
    cv.notify_all();
  }
  bool waitFor(std::size_t n, std::chrono::milliseconds within = 5000ms) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, within, [&] { return events.size() >= n; });
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }
  // Drops the oldest granted slot (given back, so handed on to the next waiter).
  void dropOldest() {
    Bulkhead::Slot s;
    {
      std::lock_guard<std::mutex> lock(mu);
      s = std::move(slots.front());
      slots.erase(slots.begin());
    }
  }
};

Bulkhead::Waiter waiterOf(Told& told, int n) {
  Bulkhead::Waiter w;
  w.granted = [&told, n](Bulkhead::Slot s) {
    told.add("granted " + std::to_string(n), std::move(s));
  };
  w.refused = [&told, n](Bulkhead::Refusal why) {
    const char* what = why == Bulkhead::Refusal::TimedOut    ? "timed_out "
                       : why == Bulkhead::Refusal::Cancelled ? "cancelled "
                                                             : "closed ";
    told.add(what + std::to_string(n));
  };
  return w;
}

Clock::time_point in(std::chrono::milliseconds d) {
  return Clock::now() + d;
}

TEST(BulkheadWait, ASlotGoesToTheFirstWaiterStillHeldAndNobodyJumpsTheQueue) {
  WaitTimer timer;
  Told told;
  {
    Bulkhead b("x", 1, 8, &timer);
    auto held = b.tryAcquire();
    ASSERT_TRUE(held);
    for (int n = 1; n <= 3; ++n) {
      auto w = waiterOf(told, n);
      const auto a = b.acquireOrWait(in(10s), w);
      EXPECT_FALSE(a.slot);
      EXPECT_NE(a.ticket, 0U);
      EXPECT_FALSE(w.granted) << "a queued waiter is moved into the queue";
    }
    EXPECT_EQ(b.waiting(), 3U);
    held.release();
    ASSERT_TRUE(told.waitFor(1));
    EXPECT_EQ(b.inUse(), 1U) << "handed on, not freed";
    EXPECT_EQ(b.waiting(), 2U);
    EXPECT_FALSE(b.tryAcquire()) << "a newcomer does not take a slot while others wait";
    told.dropOldest();
    told.dropOldest();
    ASSERT_TRUE(told.waitFor(3));
    EXPECT_EQ(told.seen(), (std::vector<std::string>{"granted 1", "granted 2", "granted 3"}));
    told.dropOldest();
    EXPECT_EQ(b.inUse(), 0U);
    EXPECT_EQ(b.waiting(), 0U);
    EXPECT_TRUE(b.tryAcquire()) << "free again once nobody waits";
  }
}

TEST(BulkheadWait, AWaiterWhoseDeadlinePassesIsToldSoEvenIfNoSlotEverFrees) {
  WaitTimer timer;
  Told told;
  Bulkhead b("x", 1, 8, &timer);
  auto held = b.tryAcquire();  // a hung call: never given back during the wait
  auto w1 = waiterOf(told, 1);
  auto w2 = waiterOf(told, 2);
  const auto started = Clock::now();
  ASSERT_NE(b.acquireOrWait(in(400ms), w1).ticket, 0U);
  ASSERT_NE(b.acquireOrWait(in(100ms), w2).ticket, 0U);  // a shorter timeout, queued later
  ASSERT_TRUE(told.waitFor(1));
  EXPECT_EQ(told.seen(), std::vector<std::string>{"timed_out 2"}) << "by deadline, not queue order";
  EXPECT_GE(Clock::now() - started, 100ms);
  ASSERT_TRUE(told.waitFor(2));
  EXPECT_EQ(told.seen().back(), "timed_out 1");
  EXPECT_GE(Clock::now() - started, 400ms);
  EXPECT_NE(told.threads[0], std::this_thread::get_id());
  EXPECT_EQ(b.waiting(), 0U);
  EXPECT_EQ(b.inUse(), 1U);
  held.release();  // nobody waits any more: the slot is free, not handed to an expired waiter
  EXPECT_EQ(b.inUse(), 0U);
  EXPECT_EQ(told.seen().size(), 2U);
  // A deadline already past when the call comes: told at once, holding nothing.
  held = b.tryAcquire();
  auto w3 = waiterOf(told, 3);
  ASSERT_NE(b.acquireOrWait(Clock::now() - 1s, w3).ticket, 0U);
  ASSERT_TRUE(told.waitFor(3, 1000ms));
  EXPECT_EQ(told.seen().back(), "timed_out 3");
  held.release();
  EXPECT_EQ(b.inUse(), 0U);
}

TEST(BulkheadWait, ACancelledWaiterLeavesTheQueueAndIsToldOffTheCancellingThread) {
  WaitTimer timer;
  Told told;
  Bulkhead b("x", 1, 8, &timer);
  auto held = b.tryAcquire();
  auto w1 = waiterOf(told, 1);
  auto w2 = waiterOf(told, 2);
  const auto t1 = b.acquireOrWait(in(10s), w1).ticket;
  ASSERT_NE(b.acquireOrWait(in(10s), w2).ticket, 0U);
  {
    // A session cancels under its own lock, which the answer takes: no deadlock, since the
    // answer runs on the timer's thread.
    std::lock_guard<std::mutex> lock(told.mu);
    b.cancel(t1);
    EXPECT_EQ(b.waiting(), 1U);
  }
  ASSERT_TRUE(told.waitFor(1));
  EXPECT_EQ(told.seen(), std::vector<std::string>{"cancelled 1"});
  EXPECT_NE(told.threads[0], std::this_thread::get_id());
  b.cancel(t1);  // again: nothing
  held.release();
  ASSERT_TRUE(told.waitFor(2));
  EXPECT_EQ(told.seen().back(), "granted 2") << "the slot skips the cancelled waiter";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(told.seen().size(), 2U) << "each waiter is told once";
  told.dropOldest();
  EXPECT_EQ(b.inUse(), 0U);
  EXPECT_EQ(b.waiting(), 0U);
}

TEST(BulkheadWait, AFullQueueRefusesAtOnceAndKeepsNothing) {
  WaitTimer timer;
  Told told;
  Bulkhead b("x", 2, 3, &timer);
  auto s1 = b.tryAcquire();
  auto s2 = b.tryAcquire();
  for (int n = 1; n <= 3; ++n) {
    auto w = waiterOf(told, n);
    ASSERT_NE(b.acquireOrWait(in(10s), w).ticket, 0U);
  }
  auto w4 = waiterOf(told, 4);
  const auto refused = b.acquireOrWait(in(10s), w4);
  EXPECT_FALSE(refused.slot);
  EXPECT_EQ(refused.ticket, 0U);
  EXPECT_TRUE(w4.granted) << "a refused waiter is left to its caller";
  EXPECT_EQ(b.waiting(), 3U);
  EXPECT_EQ(b.inUse(), 2U);
  // No queue at all: refused at once, as without a timer.
  Bulkhead none("y", 1, 0, &timer);
  auto only = none.tryAcquire();
  auto w5 = waiterOf(told, 5);
  EXPECT_EQ(none.acquireOrWait(in(10s), w5).ticket, 0U);
  Bulkhead no_timer("z", 1, 8, nullptr);
  auto z = no_timer.tryAcquire();
  EXPECT_EQ(no_timer.acquireOrWait(in(10s), w5).ticket, 0U);
  s1.release();
  s2.release();
  ASSERT_TRUE(told.waitFor(2));
  told.dropOldest();
  ASSERT_TRUE(told.waitFor(3));
  told.dropOldest();
  told.dropOldest();
  EXPECT_EQ(b.inUse(), 0U);
  EXPECT_EQ(told.seen().size(), 3U);
}

TEST(BulkheadWait, AFreeSlotIsTakenAtOnceRatherThanWaitedFor) {
  WaitTimer timer;
  Told told;
  Bulkhead b("x", 1, 8, &timer);
  auto w = waiterOf(told, 1);
  auto a = b.acquireOrWait(in(10s), w);
  EXPECT_TRUE(a.slot);
  EXPECT_EQ(a.ticket, 0U);
  EXPECT_TRUE(w.granted) << "not queued, so not moved";
  EXPECT_EQ(b.inUse(), 1U);
  a.slot.release();
  EXPECT_EQ(b.inUse(), 0U);
}

TEST(BulkheadWait, ClosingTellsEveryWaiterAndQueuesNoMore) {
  WaitTimer timer;
  Told told;
  auto b = std::make_unique<Bulkhead>("x", 1, 8, &timer);
  auto held = b->tryAcquire();
  for (int n = 1; n <= 3; ++n) {
    auto w = waiterOf(told, n);
    ASSERT_NE(b->acquireOrWait(in(10s), w).ticket, 0U);
  }
  b->close();
  ASSERT_TRUE(told.waitFor(3));
  EXPECT_EQ(told.seen(), (std::vector<std::string>{"closed 1", "closed 2", "closed 3"}));
  auto w4 = waiterOf(told, 4);
  EXPECT_EQ(b->acquireOrWait(in(10s), w4).ticket, 0U);
  held.release();
  EXPECT_EQ(b->inUse(), 0U);
  EXPECT_EQ(b->waiting(), 0U);
  // Destroyed with waiters: they are told too.
  held = b->tryAcquire();
  Bulkhead c("y", 1, 8, &timer);
  auto held_c = c.tryAcquire();
  auto w5 = waiterOf(told, 5);
  ASSERT_NE(c.acquireOrWait(in(10s), w5).ticket, 0U);
  held_c.release();  // handed to waiter 5, which keeps it in `told`
  ASSERT_TRUE(told.waitFor(4));
  EXPECT_EQ(told.seen().back(), "granted 5");
  told.dropOldest();
  EXPECT_EQ(c.inUse(), 0U);
}

// A waiter that drops the slot it is handed (the pool refused its job) passes it on to the next
// without recursing once per waiter: a long queue is drained iteratively.
TEST(BulkheadWait, SlotsDroppedOnHandOffPassDownALongQueueWithoutRecursion) {
  WaitTimer timer;
  constexpr int kWaiters = 200000;
  Bulkhead b("x", 1, kWaiters, &timer);
  auto held = b.tryAcquire();
  std::atomic<int> granted{0};
  for (int n = 0; n < kWaiters; ++n) {
    Bulkhead::Waiter w;
    w.granted = [&granted](Bulkhead::Slot s) {
      ++granted;
      s.release();
    };
    w.refused = [](Bulkhead::Refusal) { ADD_FAILURE() << "refused"; };
    ASSERT_NE(b.acquireOrWait(in(60s), w).ticket, 0U);
  }
  held.release();
  EXPECT_EQ(granted.load(), kWaiters);
  EXPECT_EQ(b.inUse(), 0U);
  EXPECT_EQ(b.waiting(), 0U);
}

// Many threads acquiring, waiting with deadlines that race the releases, cancelling waits that
// race their hand-off: the limit is never exceeded, every waiter is told exactly once, and when
// all is done no slot is held and nobody waits.
TEST(BulkheadWait, HammeredFromManyThreadsNoSlotLeaksAndEachWaiterIsToldOnce) {
  WaitTimer timer;
  constexpr std::size_t kLimit = 3;
  constexpr int kThreads = 8;
  constexpr int kRounds = 1500;
  Bulkhead b("x", kLimit, 6, &timer);
  std::atomic<std::size_t> holding{0};
  std::atomic<std::size_t> most{0};
  std::atomic<int> told{0};
  std::atomic<int> queued{0};
  std::atomic<int> twice{0};
  auto hold = [&](Bulkhead::Slot s) {
    const std::size_t now = ++holding;
    std::size_t seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::yield();
    --holding;
    s.release();
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        auto once = std::make_shared<std::atomic<bool>>(false);
        auto mark = [&, once] {
          if (once->exchange(true)) ++twice;
          ++told;
        };
        Bulkhead::Waiter w;
        w.granted = [&, mark](Bulkhead::Slot s) {
          mark();
          hold(std::move(s));
        };
        w.refused = [mark](Bulkhead::Refusal) { mark(); };
        // Deadlines from already past to a few hundred microseconds: they race the releases.
        const auto deadline = Clock::now() + std::chrono::microseconds((i * 37 + t * 11) % 400);
        auto a = b.acquireOrWait(deadline, w);
        if (a.slot) {
          hold(std::move(a.slot));
        } else if (a.ticket != 0) {
          ++queued;
          if ((i + t) % 3 == 0) b.cancel(a.ticket);  // races the hand-off and the deadline
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < 500 && told.load() < queued.load(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(told.load(), queued.load()) << "every queued waiter told";
  EXPECT_EQ(twice.load(), 0) << "none told twice";
  EXPECT_LE(most.load(), kLimit);
  EXPECT_GT(queued.load(), 0);
  EXPECT_EQ(b.inUse(), 0U);
  EXPECT_EQ(b.waiting(), 0U);
}

// ---- in a session ----------------------------------------------------------------------------

class Outbox_ : public Outbox {
 public:
  void send(const Json& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(message);
    cv_.notify_all();
  }
  // The answer with this id (an element of a batch too), waiting up to `within` for it.
  Json answer(const Json& id, std::chrono::milliseconds within = 5000ms) {
    std::unique_lock<std::mutex> lock(mu_);
    Json found;
    cv_.wait_for(lock, within, [&] {
      found = findLocked(id);
      return !found.is_null();
    });
    return found;
  }
  // The answer with this id if there is one already.
  Json peek(const Json& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return findLocked(id);
  }
  std::stop_token gone() const override { return gone_.get_token(); }
  // The client goes away (an HTTP connection closed).
  void leave() { gone_.request_stop(); }

 private:
  Json findLocked(const Json& id) const {
    for (const auto& m : messages_) {
      for (const auto& a : m.is_array() ? m : Json::array({m})) {
        if (a.contains("id") && a["id"] == id) return a;
      }
    }
    return nullptr;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Json> messages_;
  std::stop_source gone_;
};

// Tools of two sources: `hang_a` (source a) runs until cancelled, `fast_b` (source b) answers at
// once, `fail_a`, `throw_a`, `timeout_a` end badly on source a, `slow_a` takes 40 ms, `stall_a`
// waits for its deadline (a source that accepts and never answers), `hung_a` ignores its short
// deadline until cancelled, `remaining_a` reports what is left of its deadline, `list_c` has no
// source of its own.
std::shared_ptr<ToolRegistry> twoSources() {
  auto reg = std::make_shared<ToolRegistry>();
  Tool base;
  base.engine = "fake";
  base.title = "t";
  base.description = "d";
  base.input_schema = {
      {"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}};
  base.output_schema = {{"type", "object"}};
  auto add = [&](const std::string& name, const std::string& source, ToolHandler h) {
    Tool t = base;
    t.name = name;
    t.source = source;
    t.handler = std::move(h);
    EXPECT_TRUE(reg->add(std::move(t)).ok());
  };
  add("hang_a", "a", [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    while (!ctx.stop.stop_requested()) std::this_thread::sleep_for(2ms);
    return makeError(Code::Cancelled, "cancelled");
  });
  add("fast_b", "b", [](const Json&, CallContext&) -> Result<ToolOutput> {
    return ToolOutput{Json{{"ok", true}}, 1};
  });
  add("fail_a", "a", [](const Json&, CallContext&) -> Result<ToolOutput> {
    return makeError(Code::Unavailable, "database unreachable");
  });
  add("throw_a", "a",
      [](const Json&, CallContext&) -> Result<ToolOutput> { throw std::runtime_error("boom"); });
  add("brief_a", "a", [](const Json&, CallContext&) -> Result<ToolOutput> {
    std::this_thread::sleep_for(1ms);
    return ToolOutput{Json{{"ok", true}}, 1};
  });
  add("slow_a", "a", [](const Json&, CallContext&) -> Result<ToolOutput> {
    std::this_thread::sleep_for(40ms);
    return ToolOutput{Json{{"ok", true}}, 1};
  });
  base.limits.timeout = 5000ms;
  add("remaining_a", "a", [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        ctx.deadline - std::chrono::steady_clock::now());
    return ToolOutput{Json{{"left_ms", left.count()}}, 1};
  });
  base.limits.timeout = 2500ms;
  add("stall_a", "a", [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    while (std::chrono::steady_clock::now() < ctx.deadline && !ctx.stop.stop_requested())
      std::this_thread::sleep_for(2ms);
    return makeError(Code::TimedOut, "the statement ran out of time");
  });
  base.limits.timeout = 100ms;
  add("timeout_a", "a", [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    while (std::chrono::steady_clock::now() < ctx.deadline) std::this_thread::sleep_for(2ms);
    return makeError(Code::TimedOut, "the statement ran out of time");
  });
  base.limits.timeout = 200ms;
  add("hung_a", "a", [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    while (!ctx.stop.stop_requested()) std::this_thread::sleep_for(2ms);
    return makeError(Code::Cancelled, "cancelled");
  });
  base.limits.timeout = 5000ms;
  add("list_c", "", [](const Json&, CallContext&) -> Result<ToolOutput> {
    return ToolOutput{Json{{"ok", true}}, 0};
  });
  Resource r;
  r.uri = "mcpdb://fake/tools/hang_a";
  r.name = "hang_a";
  r.title = "t";
  r.engine = "fake";
  r.tools = {"hang_a"};
  r.read = [](CallContext&) -> Result<Json> { return Json{{"tool", "hang_a"}}; };
  EXPECT_TRUE(reg->addResource(std::move(r)).ok());
  return reg;
}

std::string call(int id, const std::string& tool) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":")" + tool + R"(","arguments":{}}})";
}

std::string cancel(int id) {
  return R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
         std::to_string(id) + "}}";
}

struct Server {
  explicit Server(ServerOptions o) : core(std::move(o), twoSources()) {}
  std::shared_ptr<Session> session(const std::string& version = "2025-03-26") {
    auto s = std::make_shared<Session>(core, Principal{});
    auto out = std::make_shared<Outbox_>();
    s->handleText(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":")" +
                      version + R"(","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
                  out);
    s->handleText(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", out);
    sessions.push_back(s);
    return s;
  }
  Bulkhead& of(const std::string& tool) { return *core.bulkheadFor(*core.registry().find(tool)); }
  // Waits until the bulkhead of `tool` holds `n` slots and has `waiting` calls queued (or 5 s).
  bool waitInUse(const std::string& tool, std::size_t n, std::size_t waiting = 0) {
    auto there = [&] { return of(tool).inUse() == n && of(tool).waiting() == waiting; };
    for (int i = 0; i < 2500 && !there(); ++i) std::this_thread::sleep_for(2ms);
    return there();
  }
  ~Server() {
    for (auto& s : sessions) {
      s->cancelAll();
      s->drain(3000ms);
    }
  }
  ServerCore core;
  std::vector<std::shared_ptr<Session>> sessions;
};

std::string textOf(const Json& answer) {
  if (!answer.contains("result") || !answer["result"].contains("content")) return {};
  return answer["result"]["content"][0]["text"].get<std::string>();
}

bool succeeded(const Json& answer) {
  return answer.contains("result") && !answer["result"].value("isError", true);
}

// Refused at once because source `source`'s queue is full.
bool refusedForSource(const Json& answer, const std::string& source) {
  if (!answer.contains("result") || !answer["result"].value("isError", false)) return false;
  const auto text = textOf(answer);
  return text.find("resource_exhausted") != std::string::npos &&
         text.find("source '" + source + "'") != std::string::npos &&
         text.find("waiting") != std::string::npos && text.find("Retry") != std::string::npos;
}

// Timed out waiting for a slot of source `source`, named as configured.
bool timedOutWaitingFor(const Json& answer, const std::string& source) {
  if (!answer.contains("result") || !answer["result"].value("isError", false)) return false;
  const auto text = textOf(answer);
  return text.find("Error (timed_out)") == 0 && text.find("waited") != std::string::npos &&
         text.find("source '" + source + "'") != std::string::npos;
}

ServerOptions options(std::size_t workers, std::size_t per_source) {
  ServerOptions o;
  o.workers = workers;
  o.calls_per_source = per_source;
  return o;
}

// An agent's burst of parallel calls to one source slow for a moment: more than its share, so
// some wait, and all succeed (the soak test's concurrency 8 refused before calls could wait).
TEST(SessionBulkhead, ABurstOverTheShareWaitsAndEveryCallSucceeds) {
  for (const std::size_t share : {std::size_t{1}, std::size_t{2}, std::size_t{0}}) {
    Server srv(options(4, share));  // 0: the default, three quarters of 4
    const std::size_t limit = srv.of("slow_a").limit();
    const int burst = static_cast<int>(limit * (kWaitingPerSlot + 1));  // the most that fits
    auto s = srv.session();
    auto out = std::make_shared<Outbox_>();
    for (int id = 1; id <= burst; ++id) s->handleText(call(id, "slow_a"), out);
    // And as one batch, in another session.
    auto batch_session = srv.session();
    auto bout = std::make_shared<Outbox_>();
    std::string batch = "[";
    for (int i = 0; i < burst; ++i) batch += (i ? "," : "") + call(1000 + i, "slow_a");
    batch += "]";
    batch_session->handleText(batch, bout);
    for (int id = 1; id <= burst; ++id) {
      const Json a = out->answer(id, 10s);
      EXPECT_TRUE(succeeded(a)) << "share " << share << ": " << a.dump();
    }
    for (int i = 0; i < burst; ++i) {
      const Json a = bout->answer(1000 + i, 10s);
      // The batch came while the first burst filled the queue: its calls either waited and
      // succeeded or were refused at once for source a; none failed otherwise.
      EXPECT_TRUE(succeeded(a) || refusedForSource(a, "a")) << a.dump();
    }
    EXPECT_TRUE(srv.waitInUse("slow_a", 0)) << "share " << share;
  }
}

// A source that accepts and never answers: its calls time out (the waiting ones too, although no
// slot ever frees), while a second source's calls keep answering on the workers left.
TEST(SessionBulkhead, AHungSourcesCallsTimeOutWhileAnotherSourceKeepsAnswering) {
  for (const std::size_t share : {std::size_t{2}, std::size_t{0}}) {
    Server srv(options(4, share));  // 0: the default, 3 of 4 workers
    const std::size_t limit = srv.of("stall_a").limit();
    ASSERT_LT(limit, 4U);
    auto s = srv.session();
    auto out = std::make_shared<Outbox_>();
    const int stuck = static_cast<int>(limit);  // the share, running until the engine's timeout
    for (int id = 1; id <= stuck; ++id) s->handleText(call(id, "stall_a"), out);
    ASSERT_TRUE(srv.waitInUse("stall_a", limit, 0));
    // Three more wait (a 200 ms timeout, no slot ever frees in time): told so by the bulkhead,
    // naming the source as configured, while the stuck calls still run.
    for (int id = 51; id <= 53; ++id) s->handleText(call(id, "hung_a"), out);
    for (int id = 51; id <= 53; ++id) {
      const Json a = out->answer(id);
      EXPECT_TRUE(timedOutWaitingFor(a, "a")) << a.dump();
    }
    for (int id = 100; id < 120; ++id) {
      s->handleText(call(id, "fast_b"), out);
      const Json ok = out->answer(id);
      EXPECT_TRUE(succeeded(ok)) << ok.dump();
    }
    // All that while every running call to a was stuck.
    for (int id = 1; id <= stuck; ++id) EXPECT_TRUE(out->peek(id).is_null()) << id;
    // Then they end by the engine's timeout.
    for (int id = 1; id <= stuck; ++id) {
      const Json a = out->answer(id, 10s);
      EXPECT_EQ(textOf(a).find("Error (timed_out)"), 0U) << a.dump();
    }
    EXPECT_TRUE(srv.waitInUse("stall_a", 0));
  }
}

TEST(SessionBulkhead, AWaitersDeadlinePassesEvenWhenNoSlotEverFrees) {
  Server srv(options(4, 1));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  s->handleText(call(1, "hang_a"), out);  // holds source a's one slot until cancelled
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  const auto started = std::chrono::steady_clock::now();
  s->handleText(call(2, "hung_a"), out);  // a 200 ms timeout, from when it came
  const Json a = out->answer(2);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(timedOutWaitingFor(a, "a")) << a.dump();
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 3000ms);
  EXPECT_NE(textOf(a).find("200 ms"), std::string::npos) << a.dump();
  EXPECT_EQ(srv.of("hang_a").inUse(), 1U);
  EXPECT_EQ(srv.of("hang_a").waiting(), 0U);
  EXPECT_EQ(s->inFlight(), 1U) << "the timed-out call is finished";
}

// A waiting call keeps the deadline it had when it came: it runs with what is left.
TEST(SessionBulkhead, AWaitedCallRunsWithWhatIsLeftOfItsDeadline) {
  Server srv(options(4, 1));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  s->handleText(call(1, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  s->handleText(call(2, "remaining_a"), out);  // 5000 ms
  ASSERT_TRUE(srv.waitInUse("hang_a", 1, 1));
  std::this_thread::sleep_for(600ms);
  s->handleText(cancel(1), out);
  const Json a = out->answer(2);
  ASSERT_TRUE(succeeded(a)) << a.dump();
  EXPECT_LE(a["result"]["structuredContent"]["left_ms"].get<int>(), 4400) << a.dump();
  // Not waited: the whole timeout.
  s->handleText(call(3, "remaining_a"), out);
  const Json b = out->answer(3);
  ASSERT_TRUE(succeeded(b)) << b.dump();
  EXPECT_GT(b["result"]["structuredContent"]["left_ms"].get<int>(), 4400) << b.dump();
}

TEST(SessionBulkhead, AFullQueueIsRefusedAtOnceForThatSourceOnly) {
  Server srv(options(4, 2));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  const int fits = static_cast<int>(2 * (kWaitingPerSlot + 1));
  for (int id = 1; id <= fits; ++id) s->handleText(call(id, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 2, 2 * kWaitingPerSlot));
  s->handleText(call(100, "fail_a"), out);
  const Json refused = out->answer(100, 1000ms);
  EXPECT_TRUE(refusedForSource(refused, "a")) << refused.dump();
  EXPECT_EQ(srv.of("hang_a").waiting(), 2 * kWaitingPerSlot) << "a refusal holds nothing";
  s->handleText(call(101, "fast_b"), out);
  EXPECT_TRUE(succeeded(out->answer(101)));
  for (int id = 1; id <= fits; ++id) EXPECT_TRUE(out->peek(id).is_null()) << id;
}

// Cancelled while it waits (notifications/cancelled, or the HTTP client gone): out of the queue
// at once, no answer (MCP), and the next slot goes to the next waiter.
TEST(SessionBulkhead, ACallCancelledWhileItWaitsLeavesTheQueueUnanswered) {
  Server srv(options(4, 1));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  s->handleText(call(1, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  s->handleText(call(2, "hang_a"), out);
  s->handleText(call(3, "fast_b"), out);  // another source: not queued behind a
  EXPECT_TRUE(succeeded(out->answer(3)));
  s->handleText(call(4, "slow_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1, 2));
  s->handleText(cancel(2), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1, 1));
  for (int i = 0; i < 500 && s->inFlight() != 2; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(s->inFlight(), 2U) << "the cancelled call is finished";
  s->handleText(cancel(1), out);  // the slot goes to call 4, not the cancelled call 2
  EXPECT_TRUE(succeeded(out->answer(4)));
  EXPECT_TRUE(out->peek(1).is_null());
  EXPECT_TRUE(out->peek(2).is_null());
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));

  // The client goes away: its waiting calls leave too, another client's stay queued.
  auto gone = std::make_shared<Outbox_>();
  auto stays = std::make_shared<Outbox_>();
  s->handleText(call(10, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  s->handleText(call(11, "hang_a"), gone);
  s->handleText(call(12, "hang_a"), gone);
  s->handleText(call(13, "slow_a"), stays);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1, 3));
  gone->leave();
  ASSERT_TRUE(srv.waitInUse("hang_a", 1, 1));
  s->handleText(cancel(10), out);
  EXPECT_TRUE(succeeded(stays->answer(13)));
  EXPECT_TRUE(gone->peek(11).is_null());
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));
}

TEST(SessionBulkhead, BatchesAndOtherSessionsShareTheSourcesLimit) {
  Server srv(options(8, 3));
  auto first = srv.session();
  auto out1 = std::make_shared<Outbox_>();
  first->handleText(call(1, "hang_a"), out1);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  // A batch of ten calls to source a, in another session: two run, eight wait.
  auto second = srv.session();
  auto out2 = std::make_shared<Outbox_>();
  std::string batch = "[";
  for (int i = 0; i < 10; ++i) batch += (i ? "," : "") + call(100 + i, "hang_a");
  batch += "]";
  second->handleText(batch, out2);
  ASSERT_TRUE(srv.waitInUse("hang_a", 3, 8));
  // A stateless (2026-07-28) request in yet another session waits behind them.
  auto third = std::make_shared<Session>(srv.core, Principal{});
  srv.sessions.push_back(third);
  auto out3 = std::make_shared<Outbox_>();
  third->handleText(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow_a","arguments":{},)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{}}}})",
      out3);
  ASSERT_TRUE(srv.waitInUse("hang_a", 3, 9));
  // The queue (4 per slot: 12) counts them all: three more fit, the fourth is refused.
  for (int id = 2; id <= 4; ++id) first->handleText(call(id, "hang_a"), out1);
  first->handleText(call(5, "hang_a"), out1);
  EXPECT_TRUE(refusedForSource(out1->answer(5, 1000ms), "a"));
  EXPECT_EQ(srv.of("hang_a").waiting(), 12U);
  // The batch's session ends its calls: the stateless call gets a slot, before first's 2..4.
  second->cancelAll();
  const Json modern = out3->answer(7);
  EXPECT_TRUE(succeeded(modern)) << modern.dump();
  EXPECT_TRUE(out2->peek(100).is_null()) << "cancelled calls get no answer";
  ASSERT_TRUE(srv.waitInUse("hang_a", 3, 1));
  first->cancelAll();
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));
}

// However a call ends (an error, a throw, a timeout, a cancellation, a refusal further on), its
// source's slot comes back, and before its answer is sent.
TEST(SessionBulkhead, TheSlotComesBackHoweverTheCallEnds) {
  Server srv(options(4, 1));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  int id = 1;
  for (const char* tool : {"fail_a", "throw_a", "timeout_a", "fail_a"}) {
    s->handleText(call(id, tool), out);
    const Json a = out->answer(id++);
    ASSERT_TRUE(a.contains("result")) << tool;
    EXPECT_TRUE(a["result"]["isError"].get<bool>()) << tool;
    // The answer is out: the slot was given back before it (a limit of 1 lets the next call run).
    EXPECT_EQ(srv.of("fail_a").inUse(), 0U) << tool;
  }
  // Cancelled: no answer, the slot back.
  s->handleText(call(id, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  s->handleText(cancel(id), out);
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));
  ++id;
  // The worker pool full (its queue too): the source's slot is not kept by a call refused there,
  // at once or once it is handed a slot it waited for.
  ServerOptions no_queue = options(1, 4);
  no_queue.max_queue = 0;
  Server full(no_queue);
  auto f = full.session();
  auto fout = std::make_shared<Outbox_>();
  f->handleText(call(1, "hang_a"), fout);
  ASSERT_TRUE(full.waitInUse("hang_a", 1));
  f->handleText(call(2, "fail_a"), fout);  // a slot of a is free, but no worker is
  const Json busy = fout->answer(2);
  EXPECT_NE(busy.dump().find("busy"), std::string::npos) << busy.dump();
  EXPECT_EQ(full.of("hang_a").inUse(), 1U);
  ServerOptions one = options(1, 1);
  one.max_queue = 0;
  one.calls_by_source = {{"fake/b", 1}};
  Server handed(one);
  auto h = handed.session();
  auto hout = std::make_shared<Outbox_>();
  h->handleText(call(1, "hang_a"), hout);
  ASSERT_TRUE(handed.waitInUse("hang_a", 1));
  h->handleText(call(2, "fast_b"), hout);  // b's slot free, the one worker taken: busy
  EXPECT_NE(hout->answer(2).dump().find("busy"), std::string::npos);
  EXPECT_EQ(handed.of("fast_b").inUse(), 0U);
  // Handed the slot it waited for, but the pool has no room (its one worker is the one giving the
  // slot back): answered busy, and the slot given back rather than kept.
  h->handleText(call(3, "fail_a"), hout);
  ASSERT_TRUE(handed.waitInUse("hang_a", 1, 1));
  h->handleText(cancel(1), hout);
  const Json late = hout->answer(3);
  EXPECT_NE(late.dump().find("busy"), std::string::npos) << late.dump();
  EXPECT_TRUE(handed.waitInUse("hang_a", 0));
  // The slot is given back before the call leaves the session's in-flight set: wait for both.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (h->inFlight() != 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(h->inFlight(), 0U);
}

TEST(SessionBulkhead, AResourceReadWaitsForItsToolsSourceSlot) {
  Server srv(options(4, 1));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  s->handleText(call(1, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  const std::string read =
      R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"mcpdb://fake/tools/hang_a"}})";
  s->handleText(read, out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1, 1));
  EXPECT_TRUE(out->peek(2).is_null()) << "it waits";
  s->handleText(cancel(1), out);
  const Json a = out->answer(2);
  EXPECT_TRUE(a.contains("result")) << a.dump();
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));
  // Cancelled while it waits: no answer, out of the queue.
  s->handleText(call(3, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  std::string again = read;
  again.replace(again.find("\"id\":2"), 6, "\"id\":4");
  s->handleText(again, out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1, 1));
  s->handleText(cancel(4), out);
  EXPECT_TRUE(srv.waitInUse("hang_a", 1, 0));
  s->handleText(cancel(3), out);
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(out->peek(4).is_null());
}

// A transport that runs calls on threads of its own (stdio runs one on its reader): the source's
// limit is checked before the transport is asked, so it holds there too; a waiting call, once it
// has its slot, goes to the worker pool.
TEST(SessionBulkhead, ATransportsOwnDispatchIsHeldToTheLimit) {
  Server srv(options(4, 2));
  auto s = srv.session();
  std::vector<std::thread> threads;
  std::mutex mu;
  s->setDispatch([&](CallJob& job, bool) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(job), nullptr);
    return true;
  });
  auto out = std::make_shared<Outbox_>();
  for (int id = 1; id <= 4; ++id) s->handleText(call(id, "hang_a"), out);
  s->handleText(call(5, "slow_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 2, 3));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(threads.size(), 2U);
  }
  s->handleText(cancel(3), out);
  s->handleText(cancel(4), out);
  s->handleText(cancel(1), out);  // its slot goes to call 5, on the pool
  EXPECT_TRUE(succeeded(out->answer(5)));
  s->cancelAll();
  for (auto& t : threads) t.join();
  EXPECT_EQ(threads.size(), 2U);
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));
}

// Sessions on several threads calling one source, cancelling calls as they wait, run or end,
// with timeouts racing the hand-offs: every call ends (answered, or cancelled unanswered), and
// afterwards no slot is held and nobody waits.
TEST(SessionBulkhead, RacingCallsCancelsAndTimeoutsLeaveNothingHeld) {
  Server srv(options(4, 2));
  constexpr int kThreads = 4;
  constexpr int kCalls = 60;
  std::vector<std::shared_ptr<Session>> sessions;
  std::vector<std::shared_ptr<Outbox_>> outs;
  for (int t = 0; t < kThreads; ++t) {
    sessions.push_back(srv.session());
    outs.push_back(std::make_shared<Outbox_>());
  }
  // The most calls seen waiting at once: the race is run through the queue, not beside it.
  std::atomic<bool> done{false};
  std::atomic<std::size_t> most_waiting{0};
  std::thread watch([&] {
    while (!done) {
      most_waiting = std::max(most_waiting.load(), srv.of("brief_a").waiting());
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const int id = 1 + i;
        const char* tool = i % 5 == 0 ? "hung_a" : i % 5 == 1 ? "slow_a" : "brief_a";
        sessions[t]->handleText(call(id, tool), outs[t]);
        if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200 * (i % 7)));
        if (i % 4 == 0 || i % 5 == 0) sessions[t]->handleText(cancel(id), outs[t]);
      }
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  watch.join();
  EXPECT_GT(most_waiting.load(), 0U);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < 1000 && sessions[t]->inFlight() != 0; ++i)
      std::this_thread::sleep_for(10ms);
    EXPECT_EQ(sessions[t]->inFlight(), 0U) << "thread " << t;
    for (int i = 0; i < kCalls; ++i) {
      if (i % 4 == 0 || i % 5 == 0) continue;  // cancelled: answered or not, by the race
      const Json a = outs[t]->peek(1 + i);
      EXPECT_TRUE(succeeded(a) || refusedForSource(a, "a") || timedOutWaitingFor(a, "a"))
          << a.dump();
    }
  }
  EXPECT_TRUE(srv.waitInUse("brief_a", 0, 0));
}

// Shutting down with calls waiting: each is answered (the pool refuses the jobs it is handed),
// none is lost, no slot is left held.
TEST(SessionBulkhead, ShuttingDownAnswersTheCallsStillWaiting) {
  auto out = std::make_shared<Outbox_>();
  std::shared_ptr<Session> s;
  {
    ServerCore core(options(4, 1), twoSources());
    s = std::make_shared<Session>(core, Principal{});
    s->handleText(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
        out);
    s->handleText(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", out);
    for (int id = 1; id <= 3; ++id) s->handleText(call(id, "slow_a"), out);
    Bulkhead& a = *core.bulkheadFor(*core.registry().find("slow_a"));
    EXPECT_EQ(a.waiting(), 2U);
  }
  EXPECT_TRUE(succeeded(out->peek(1)));
  for (int id = 2; id <= 3; ++id) {
    const Json a = out->peek(id);
    EXPECT_TRUE(a.contains("result") && a["result"]["isError"].get<bool>()) << a.dump();
  }
  EXPECT_EQ(s->inFlight(), 0U);
}

TEST(SessionBulkhead, SizesByDefaultAndBySource) {
  {
    ServerOptions o;
    o.workers = 8;
    Server srv(o);
    EXPECT_EQ(srv.of("hang_a").limit(), 6U);  // three quarters of the workers
    EXPECT_EQ(srv.of("hang_a").maxWaiting(), 6U * kWaitingPerSlot);
    EXPECT_EQ(&srv.of("hang_a"), &srv.of("fail_a"));
    EXPECT_NE(&srv.of("hang_a"), &srv.of("fast_b"));
    EXPECT_EQ(srv.of("fast_b").limit(), 6U);
    EXPECT_NE(srv.of("list_c").name().find("the fake sources"), std::string::npos);
  }
  {
    ServerOptions o;
    o.workers = 1;
    Server srv(o);
    EXPECT_EQ(srv.of("hang_a").limit(), 1U);  // at least one
  }
  {
    ServerOptions o = options(8, 3);
    o.calls_by_source = {{"fake/b", 6}, {"fake/*", 1}};
    Server srv(o);
    EXPECT_EQ(srv.of("hang_a").limit(), 3U);
    EXPECT_EQ(srv.of("fast_b").limit(), 6U);
    EXPECT_EQ(srv.of("list_c").limit(), 1U);
    EXPECT_EQ(srv.of("list_c").maxWaiting(), kWaitingPerSlot);
  }
  {
    // One source only: nothing to keep apart, its limit is the pool's.
    auto reg = std::make_shared<ToolRegistry>();
    Tool t;
    t.name = "only";
    t.engine = "fake";
    t.source = "a";
    t.input_schema = {{"type", "object"}};
    t.output_schema = {{"type", "object"}};
    t.handler = [](const Json&, CallContext&) -> Result<ToolOutput> { return ToolOutput{}; };
    ASSERT_TRUE(reg->add(t).ok());
    ServerOptions o;
    o.workers = 8;
    o.max_queue = 64;
    ServerCore core(o, reg);
    EXPECT_EQ(core.bulkheadFor(*reg->find("only")), nullptr);
    EXPECT_TRUE(core.bulkheads().empty());
    o.calls_per_source = 5;  // unless the operator sets one
    ServerCore sized(o, reg);
    ASSERT_NE(sized.bulkheadFor(*reg->find("only")), nullptr);
    EXPECT_EQ(sized.bulkheadFor(*reg->find("only"))->limit(), 5U);
  }
}

}  // namespace
}  // namespace mcpdb::protocol
