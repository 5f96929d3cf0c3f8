// The tool surface swap of a config reload (ServerCore::replaceTools): a call finishes on the
// surface it started on (its tool's statement with its own runtime, never the new one's), new
// calls see the new surface, the old generation lives exactly as long as its last call, bulkheads
// keep their count across a swap, and sessions hear of list changes.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "protocol/session.hpp"

namespace mcpdb::protocol {
namespace {

class Collect : public Outbox {
 public:
  void send(const Json& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(message);
    cv_.notify_all();
  }
  // The first message matching `pred` within 5 s (null when none).
  Json waitFor(const std::function<bool(const Json&)>& pred) {
    std::unique_lock<std::mutex> lock(mu_);
    Json found;
    cv_.wait_for(lock, std::chrono::seconds(5), [&] {
      for (const auto& m : messages_) {
        if (pred(m)) {
          found = m;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  std::size_t count(const std::string& method) {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t n = 0;
    for (const auto& m : messages_) n += m.value("method", "") == method ? 1 : 0;
    return n;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Json> messages_;
};

// A gate a tool's handler waits on, so a call can be held in flight across a swap.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  bool entered = false;
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  void waitEntered() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(5), [this] { return entered; });
  }
};

// What a tool's "runtime" is here: a value only its own registry's handler returns, standing for
// the statement and proof that belong together.
struct FakeRuntime {
  std::string statement;
};

Tool toolOf(const std::string& name, std::shared_ptr<FakeRuntime> rt,
            std::shared_ptr<Gate> gate = nullptr, const std::string& source = "a") {
  Tool t;
  t.name = name;
  t.description = "test";
  t.engine = "fake";
  t.source = source;
  t.input_schema = Json{{"type", "object"}};
  t.output_schema = Json{{"type", "object"}};
  t.handler = [rt, gate](const Json&, CallContext&) -> Result<ToolOutput> {
    if (gate) {
      std::unique_lock<std::mutex> lock(gate->mu);
      gate->entered = true;
      gate->cv.notify_all();
      gate->cv.wait_for(lock, std::chrono::seconds(10), [&] { return gate->open; });
    }
    return ToolOutput{Json{{"ran", rt->statement}}, 1};
  };
  return t;
}

std::string call(const std::string& id, const std::string& tool) {
  return R"({"jsonrpc":"2.0","id":")" + id + R"(","method":"tools/call","params":{"name":")" +
         tool + R"(","arguments":{}}})";
}

bool answers(const Json& m, const std::string& id) {
  return m.contains("id") && m["id"] == id;
}

void init(Session& s, const std::shared_ptr<Outbox>& out) {
  s.handleText(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      out);
  s.handleText(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", out);
}

TEST(ReloadSwap, CallInFlightFinishesOnItsOwnSurfaceAndNewCallsSeeTheNewOne) {
  auto gate = std::make_shared<Gate>();
  auto old_rt = std::make_shared<FakeRuntime>(FakeRuntime{"old statement"});
  auto reg1 = std::make_shared<ToolRegistry>();
  ASSERT_TRUE(reg1->add(toolOf("query", old_rt, gate)));
  // The owner stands for the assembly the registry came from: it must live while a call of its
  // generation runs, and not a moment longer.
  auto owner1 = std::make_shared<int>(1);
  std::weak_ptr<int> owner1_alive = owner1;
  ServerCore core(ServerOptions{}, reg1, std::move(owner1));
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<Collect>();
  init(*session, out);

  session->handleText(call("slow", "query"), out);
  gate->waitEntered();

  auto new_rt = std::make_shared<FakeRuntime>(FakeRuntime{"new statement"});
  auto reg2 = std::make_shared<ToolRegistry>();
  ASSERT_TRUE(reg2->add(toolOf("query", new_rt)));
  ASSERT_TRUE(reg2->add(toolOf("added", new_rt)));
  EXPECT_EQ(core.replaceTools(reg2, SourceLimits{}, std::make_shared<int>(2)), 2U);
  EXPECT_EQ(core.surface()->generation(), 2U);
  EXPECT_FALSE(owner1_alive.expired()) << "the old generation died under its call";

  // New calls run the new tool (and the tool that did not exist before).
  session->handleText(call("fresh", "query"), out);
  const Json fresh = out->waitFor([](const Json& m) { return answers(m, "fresh"); });
  EXPECT_EQ(fresh["result"]["structuredContent"]["ran"], "new statement");
  session->handleText(call("added", "added"), out);
  const Json added = out->waitFor([](const Json& m) { return answers(m, "added"); });
  EXPECT_EQ(added["result"]["structuredContent"]["ran"], "new statement");

  // The held call finishes with its own generation's statement.
  gate->release();
  const Json slow = out->waitFor([](const Json& m) { return answers(m, "slow"); });
  EXPECT_EQ(slow["result"]["structuredContent"]["ran"], "old statement");
  session->drain(std::chrono::seconds(5));
  // Its last call ended: the old generation is gone.
  for (int i = 0; i < 100 && !owner1_alive.expired(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(owner1_alive.expired()) << "the old generation outlived its calls";
}

TEST(ReloadSwap, ACallQueuedBeforeTheSwapRunsTheToolItWasAdmittedWith) {
  // One worker, held by a call, so the next call waits in the queue across the swap: when it runs
  // it must run the tool (statement, runtime and proof) it was admitted with, not a newer one.
  auto gate = std::make_shared<Gate>();
  auto old_rt = std::make_shared<FakeRuntime>(FakeRuntime{"old statement"});
  auto reg1 = std::make_shared<ToolRegistry>();
  ASSERT_TRUE(reg1->add(toolOf("block", old_rt, gate)));
  ASSERT_TRUE(reg1->add(toolOf("query", old_rt)));
  ServerOptions o;
  o.workers = 1;
  ServerCore core(o, reg1);
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<Collect>();
  init(*session, out);
  session->handleText(call("hold", "block"), out);
  gate->waitEntered();
  session->handleText(call("queued", "query"), out);

  auto new_rt = std::make_shared<FakeRuntime>(FakeRuntime{"new statement"});
  auto reg2 = std::make_shared<ToolRegistry>();
  ASSERT_TRUE(reg2->add(toolOf("block", new_rt)));
  ASSERT_TRUE(reg2->add(toolOf("query", new_rt)));
  core.replaceTools(reg2, SourceLimits{});
  gate->release();
  const Json queued = out->waitFor([](const Json& m) { return answers(m, "queued"); });
  EXPECT_EQ(queued["result"]["structuredContent"]["ran"], "old statement");
  session->drain(std::chrono::seconds(5));
}

TEST(ReloadSwap, AToolRemovedByAReloadIsUnknownToNewCalls) {
  auto rt = std::make_shared<FakeRuntime>(FakeRuntime{"s"});
  auto reg1 = std::make_shared<ToolRegistry>();
  ASSERT_TRUE(reg1->add(toolOf("gone", rt)));
  ASSERT_TRUE(reg1->add(toolOf("stays", rt)));
  ServerCore core(ServerOptions{}, reg1);
  auto reg2 = std::make_shared<ToolRegistry>();
  ASSERT_TRUE(reg2->add(toolOf("stays", rt)));
  core.replaceTools(reg2, SourceLimits{});
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<Collect>();
  init(*session, out);
  session->handleText(call("x", "gone"), out);
  const Json m = out->waitFor([](const Json& j) { return answers(j, "x"); });
  ASSERT_TRUE(m.contains("error"));
  EXPECT_NE(m["error"]["message"].get<std::string>().find("Unknown tool"), std::string::npos);
  // tools/list shows the new surface (the unscoped page cache is per generation).
  session->handleText(R"({"jsonrpc":"2.0","id":"l","method":"tools/list"})", out);
  const Json list = out->waitFor([](const Json& j) { return answers(j, "l"); });
  ASSERT_EQ(list["result"]["tools"].size(), 1U);
  EXPECT_EQ(list["result"]["tools"][0]["name"], "stays");
}

TEST(ReloadSwap, ABulkheadKeepsItsHeldSlotsAcrossASwapUnlessResized) {
  auto rt = std::make_shared<FakeRuntime>(FakeRuntime{"s"});
  auto reg = [&rt] {
    auto r = std::make_shared<ToolRegistry>();
    EXPECT_TRUE(r->add(toolOf("on_a", rt, nullptr, "a")));
    EXPECT_TRUE(r->add(toolOf("on_b", rt, nullptr, "b")));
    return r;
  };
  ServerOptions o;
  o.calls_per_source = 2;
  ServerCore core(o, reg());
  Bulkhead* before = core.bulkheadFor(*core.registry().find("on_a"));
  ASSERT_NE(before, nullptr);
  auto held = before->tryAcquire();
  ASSERT_TRUE(held);
  core.replaceTools(reg(), SourceLimits{2, {}});
  Bulkhead* same = core.bulkheadFor(*core.registry().find("on_a"));
  EXPECT_EQ(same, before) << "a source whose size stays must keep its bulkhead (and its count)";
  EXPECT_EQ(same->inUse(), 1U);
  // The slot's call holds its generation (as a Job does), so the bulkhead outlives the resize.
  const auto held_generation = core.surface();
  core.replaceTools(reg(), SourceLimits{3, {}});
  Bulkhead* resized = core.bulkheadFor(*core.registry().find("on_a"));
  EXPECT_NE(resized, before);
  EXPECT_EQ(resized->limit(), 3U);
  held.release();
}

TEST(ReloadSwap, ListChangedGoesToTheLegacyStreamOnlyWhenDeclaredAndToListenersThatAsked) {
  auto rt = std::make_shared<FakeRuntime>(FakeRuntime{"s"});
  auto reg = std::make_shared<ToolRegistry>();
  ASSERT_TRUE(reg->add(toolOf("q", rt)));
  ServerCore core(ServerOptions{}, reg);

  // A session whose transport can deliver: declared, then sent.
  auto capable = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<Collect>();
  capable->setNotificationOutbox(out);
  capable->enableListChanged();
  init(*capable, out);
  auto isInit = [](const Json& m) { return m.contains("id") && m["id"] == 0; };
  const Json init_answer = out->waitFor(isInit);
  EXPECT_EQ(init_answer["result"]["capabilities"]["tools"]["listChanged"], true);
  capable->notifyListChanged(true, false);
  EXPECT_EQ(out->count("notifications/tools/list_changed"), 1U);
  EXPECT_EQ(out->count("notifications/resources/list_changed"), 0U);

  // A session that cannot (HTTP without a GET stream): declares false, sends nothing.
  auto mute = std::make_shared<Session>(core, Principal{});
  auto mute_out = std::make_shared<Collect>();
  mute->setNotificationOutbox(mute_out);
  init(*mute, mute_out);
  const Json mute_init = mute_out->waitFor(isInit);
  EXPECT_EQ(mute_init["result"]["capabilities"]["tools"]["listChanged"], false);
  mute->notifyListChanged(true, true);
  EXPECT_EQ(mute_out->count("notifications/tools/list_changed"), 0U);

  // A 2026-07-28 listen stream that asked for tool changes gets them, tagged with its id.
  auto listener = std::make_shared<Session>(core, Principal{});
  auto stream = std::make_shared<Collect>();
  listener->handleText(
      R"({"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}})",
      stream);
  const Json ack = stream->waitFor([](const Json& m) {
    return m.value("method", "") == "notifications/subscriptions/acknowledged";
  });
  EXPECT_EQ(ack["params"]["notifications"]["toolsListChanged"], true);
  listener->notifyListChanged(false, true);  // not asked for: nothing
  EXPECT_EQ(stream->count("notifications/resources/list_changed"), 0U);
  listener->notifyListChanged(true, false);
  const Json changed = stream->waitFor(
      [](const Json& m) { return m.value("method", "") == "notifications/tools/list_changed"; });
  EXPECT_EQ(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
  listener->cancelAll();
}

}  // namespace
}  // namespace mcpdb::protocol
