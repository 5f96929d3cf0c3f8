// Per-source bulkheads (issue #28): a source's calls running or queued are capped server-wide,
// checked before a call takes a worker or a queue slot, so a hung source fails only its own tools.

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

// ---- in a session ----------------------------------------------------------------------------

class Outbox_ : public Outbox {
 public:
  void send(const Json& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(message);
    cv_.notify_all();
  }
  // The answer with this id (an element of a batch too), waiting up to 5 s for it.
  Json answer(const Json& id) {
    std::unique_lock<std::mutex> lock(mu_);
    Json found;
    cv_.wait_for(lock, 5s, [&] {
      for (const auto& m : messages_) {
        for (const auto& a : m.is_array() ? m : Json::array({m})) {
          if (a.contains("id") && a["id"] == id) {
            found = a;
            return true;
          }
        }
      }
      return false;
    });
    return found;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Json> messages_;
};

// Tools of two sources: `hang_a` (source a) runs until cancelled, `fast_b` (source b) answers at
// once, `fail_a`, `throw_a`, `timeout_a` end badly on source a, `list_c` has no source of its own.
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
  base.limits.timeout = 100ms;
  add("timeout_a", "a", [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    while (std::chrono::steady_clock::now() < ctx.deadline) std::this_thread::sleep_for(2ms);
    return makeError(Code::TimedOut, "the statement ran out of time");
  });
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
  // Waits until the bulkhead of `tool` holds `n` slots (or 5 s).
  bool waitInUse(const std::string& tool, std::size_t n) {
    for (int i = 0; i < 2500 && of(tool).inUse() != n; ++i) std::this_thread::sleep_for(2ms);
    return of(tool).inUse() == n;
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

bool refusedForSource(const Json& answer, const std::string& source) {
  if (!answer.contains("result") || !answer["result"].value("isError", false)) return false;
  const auto text = answer["result"]["content"][0]["text"].get<std::string>();
  return text.find("resource_exhausted") != std::string::npos &&
         text.find("source '" + source + "'") != std::string::npos &&
         text.find("Retry") != std::string::npos;
}

ServerOptions options(std::size_t workers, std::size_t per_source) {
  ServerOptions o;
  o.workers = workers;
  o.calls_per_source = per_source;
  return o;
}

TEST(SessionBulkhead, AHungSourceFailsOnlyItsOwnTools) {
  Server srv(options(4, 2));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  s->handleText(call(1, "hang_a"), out);
  s->handleText(call(2, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 2));
  // Source a is full: a third call to it is refused at once, naming the source, and holds nothing.
  s->handleText(call(3, "fail_a"), out);
  const Json refused = out->answer(3);
  EXPECT_TRUE(refusedForSource(refused, "a")) << refused.dump();
  EXPECT_EQ(srv.of("hang_a").inUse(), 2U);
  // Source b still has the workers a may not take.
  for (int id = 10; id < 14; ++id) {
    s->handleText(call(id, "fast_b"), out);
    const Json ok = out->answer(id);
    ASSERT_TRUE(ok.contains("result")) << ok.dump();
    EXPECT_FALSE(ok["result"]["isError"].get<bool>()) << ok.dump();
  }
  EXPECT_EQ(srv.of("fast_b").inUse(), 0U);
}

TEST(SessionBulkhead, BatchesAndOtherSessionsShareTheSourcesLimit) {
  Server srv(options(8, 3));
  auto first = srv.session();
  auto out1 = std::make_shared<Outbox_>();
  first->handleText(call(1, "hang_a"), out1);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  // A batch of ten calls to source a, in another session: two fit, eight are refused.
  auto second = srv.session();
  auto out2 = std::make_shared<Outbox_>();
  std::string batch = "[";
  for (int i = 0; i < 10; ++i) batch += (i ? "," : "") + call(100 + i, "hang_a");
  batch += "]";
  second->handleText(batch, out2);
  ASSERT_TRUE(srv.waitInUse("hang_a", 3));
  // Refused answers are held back until the batch is whole; cancel the two that run.
  second->cancelAll();
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    const Json a = out2->answer(100 + i);
    if (!a.is_null() && refusedForSource(a, "a")) ++refused;
  }
  EXPECT_EQ(refused, 8);
  // A stateless (2026-07-28) request in yet another session is held to the same count.
  auto third = std::make_shared<Session>(srv.core, Principal{});
  srv.sessions.push_back(third);
  auto out3 = std::make_shared<Outbox_>();
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  first->handleText(call(2, "hang_a"), out1);
  first->handleText(call(3, "hang_a"), out1);
  ASSERT_TRUE(srv.waitInUse("hang_a", 3));
  third->handleText(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hang_a","arguments":{},)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{}}}})",
      out3);
  const Json modern = out3->answer(7);
  EXPECT_TRUE(refusedForSource(modern, "a")) << modern.dump();
  EXPECT_EQ(srv.of("hang_a").inUse(), 3U);
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
  s->handleText(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
                    std::to_string(id) + "}}",
                out);
  EXPECT_TRUE(srv.waitInUse("hang_a", 0));
  ++id;
  // The worker pool full (its queue too): the source's slot is not kept by a call refused there.
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
}

TEST(SessionBulkhead, AResourceReadTakesItsToolsSourceSlot) {
  Server srv(options(4, 1));
  auto s = srv.session();
  auto out = std::make_shared<Outbox_>();
  s->handleText(call(1, "hang_a"), out);
  ASSERT_TRUE(srv.waitInUse("hang_a", 1));
  s->handleText(
      R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"mcpdb://fake/tools/hang_a"}})",
      out);
  const Json a = out->answer(2);
  ASSERT_TRUE(a.contains("error")) << a.dump();
  EXPECT_NE(a["error"]["message"].get<std::string>().find("source 'a'"), std::string::npos);
  s->cancelAll();
  ASSERT_TRUE(srv.waitInUse("hang_a", 0));
  s->handleText(
      R"({"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"mcpdb://fake/tools/hang_a"}})",
      out);
  EXPECT_TRUE(out->answer(3).contains("result"));
  EXPECT_EQ(srv.of("hang_a").inUse(), 0U);
}

// A transport that runs calls on threads of its own (stdio runs one on its reader): the source's
// limit is checked before the transport is asked, so it holds there too.
TEST(SessionBulkhead, ATransportsOwnDispatchIsHeldToTheLimit) {
  Server srv(options(4, 2));
  auto s = srv.session();
  std::vector<std::thread> threads;
  std::mutex mu;
  s->setDispatch([&](std::function<void()>& job, bool) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(job));
    return true;
  });
  auto out = std::make_shared<Outbox_>();
  for (int id = 1; id <= 5; ++id) s->handleText(call(id, "hang_a"), out);
  int refused = 0;
  for (int id = 3; id <= 5; ++id) refused += refusedForSource(out->answer(id), "a") ? 1 : 0;
  EXPECT_EQ(refused, 3);
  EXPECT_EQ(srv.of("hang_a").inUse(), 2U);
  s->cancelAll();
  for (auto& t : threads) t.join();
  EXPECT_EQ(srv.of("hang_a").inUse(), 0U);
}

TEST(SessionBulkhead, SizesByDefaultAndBySource) {
  {
    ServerOptions o;
    o.workers = 8;
    {
      // Not on by default (ServerCore::callsFor says why): no source has a share of its own.
      Server none(o);
      EXPECT_EQ(none.core.bulkheadFor(*none.core.registry().find("hang_a")), nullptr);
      EXPECT_EQ(none.core.bulkheadFor(*none.core.registry().find("fast_b")), nullptr);
    }
    o.calls_per_source = 6;
    Server srv(o);
    EXPECT_EQ(srv.of("hang_a").limit(), 6U);
    EXPECT_EQ(&srv.of("hang_a"), &srv.of("fail_a"));
    EXPECT_NE(&srv.of("hang_a"), &srv.of("fast_b"));
    EXPECT_NE(srv.of("list_c").name().find("the fake sources"), std::string::npos);
  }
  {
    ServerOptions o = options(8, 3);
    o.calls_by_source = {{"fake/b", 6}, {"fake/*", 1}};
    Server srv(o);
    EXPECT_EQ(srv.of("hang_a").limit(), 3U);
    EXPECT_EQ(srv.of("fast_b").limit(), 6U);
    EXPECT_EQ(srv.of("list_c").limit(), 1U);
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
    o.calls_per_source = 5;  // unless the operator sets one
    ServerCore sized(o, reg);
    ASSERT_NE(sized.bulkheadFor(*reg->find("only")), nullptr);
    EXPECT_EQ(sized.bulkheadFor(*reg->find("only"))->limit(), 5U);
  }
}

}  // namespace
}  // namespace mcpdb::protocol
