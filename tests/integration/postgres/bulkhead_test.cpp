// Issue #28: a source that accepts connections and never answers fails only its own tools. Two
// named sources through the module and the session as the server assembles them: `main` (the
// real server) and `hung` (a listener in this test that accepts and never says a word). With the
// hung source's calls filling its bulkhead (by default: two sources, so three quarters of the
// workers each) and more waiting for it, a call to `main` answers about as fast as before, the
// waiting calls time out naming the source, and neither more calls, batches nor other sessions get
// the hung source more of the workers.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "engines/postgres/module.hpp"
#include "integration/postgres/fixture.hpp"
#include "support/loopback_listener.hpp"
#include "protocol/session.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::postgres::itest {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kHungVar = "MCPDB_TEST_PG_HUNG_DSN";

// Accepts TCP connections on a loopback port and never answers: a database server that hangs.
class HungServer {
 public:
  HungServer() {
    std::uint16_t port = 0;
    fd_ = mcpdb::testing::listenOnLoopback(128, &port);
    EXPECT_GE(fd_, 0);
    port_ = port;
    thread_ = std::thread([this] {
      while (!stop_) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) break;
        std::lock_guard<std::mutex> lock(mu_);
        held_.push_back(c);  // kept open, never written to
      }
    });
  }
  ~HungServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int c : held_) ::close(c);
  }
  int port() const { return port_; }
  std::size_t accepted() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.size();
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<int> held_;
  std::thread thread_;
};

class Answers : public protocol::Outbox {
 public:
  void send(const Json& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& m : message.is_array() ? message : Json::array({message})) {
      if (m.contains("id")) answers_[m["id"].dump()] = m;
    }
    cv_.notify_all();
  }
  // The answer to `id`, waiting up to `limit`; null when none came.
  Json answer(const Json& id, std::chrono::milliseconds limit = 30s) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [&] { return answers_.count(id.dump()) > 0; });
    auto it = answers_.find(id.dump());
    return it == answers_.end() ? Json() : it->second;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Json> answers_;
};

// A source's share of the default 8 workers: three quarters, by default on a server of several
// sources; at most four times as many calls wait for a slot.
constexpr std::size_t kShare = 6;
constexpr std::size_t kWaiting = protocol::kWaitingPerSlot * kShare;

std::string yaml() {
  return R"(
postgres:
  sources:
    main: {dsn_env: POSTGRES_DSN}
    hung: {dsn_env: MCPDB_TEST_PG_HUNG_DSN}
  pool: {connect_timeout_ms: 8000}
  tools:
    main_items:
      source: main
      description: A constant from the main source (no relation, no integer, so other tests'
        catalog objects on the shared server cannot change the proof's verdict).
      statement: SELECT 'ok'::text AS v
    hung_items:
      source: hung
      description: Items, from a server that never answers.
      statement: SELECT id, name FROM pgtest.items ORDER BY id
)";
}

struct Server {
  HungServer hung;
  engines::EngineModulePtr module = makeModule();
  std::shared_ptr<protocol::ToolRegistry> registry = std::make_shared<protocol::ToolRegistry>();
  std::optional<Env> env;
  engines::EngineServices services;
  std::optional<protocol::ServerCore> core;
  std::vector<std::shared_ptr<protocol::Session>> sessions;

  // `share`: server.max_calls_per_source as set (0: not set, the default).
  explicit Server(std::size_t share = 0) {
    ensureTestSchema();
    const std::string dsn = requireEnv("POSTGRES_DSN");
    const std::string hung_dsn = "host=127.0.0.1 port=" + std::to_string(hung.port()) +
                                 " dbname=hung user=hung sslmode=disable";
    env.emplace([dsn, hung_dsn](std::string_view name) -> std::optional<std::string> {
      if (name == kHungVar) return hung_dsn;
      return Env::process().get(name);
    });
    config::Diagnostics diag("bulkhead_test.yaml");
    config::Config cfg = config::parseConfig(yaml(), "bulkhead_test.yaml", {"postgres"}, diag);
    if (diag.ok())
      module->configure(config::Node(cfg.root, "", diag).child("postgres"), cfg.limits);
    for (const auto& e : diag.errors()) ADD_FAILURE() << e;
    services.env = &*env;
    services.defaults = cfg.limits;
    if (auto st = module->registerTools(*registry, services); !st)
      ADD_FAILURE() << st.error().message;
    protocol::ServerOptions o;  // 8 workers
    o.calls_per_source = share;
    core.emplace(o, registry);
  }
  ~Server() {
    for (auto& s : sessions) {
      s->cancelAll();
      s->drain(10s);
    }
  }
  std::shared_ptr<protocol::Session> session() {
    auto s = std::make_shared<protocol::Session>(*core, protocol::Principal{});
    auto out = std::make_shared<Answers>();
    s->handleText(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26",)"
        R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
        out);
    s->handleText(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", out);
    sessions.push_back(s);
    return s;
  }
  std::size_t hungInUse() const {
    return core->bulkheadFor(*registry->find("hung_items"))->inUse();
  }
  std::size_t hungWaiting() const {
    return core->bulkheadFor(*registry->find("hung_items"))->waiting();
  }
};

std::string call(int id, const std::string& tool) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":")" + tool + R"(","arguments":{}}})";
}

// Answered by the main source itself: a result, not an error (not refused for want of a worker or
// a share, and not refused by the proof: the statement reads no relation, so other tests' catalog
// objects on the shared server cannot change its verdict).
bool ok(const Json& a) {
  return a.contains("result") && !a["result"].value("isError", false);
}

// Refused for the hung source (its queue full), naming it as configured, without its host or
// port.
void expectRefusedForHung(const Json& a, int port) {
  ASSERT_TRUE(a.contains("result")) << a.dump();
  EXPECT_TRUE(a["result"]["isError"].get<bool>());
  const std::string text = a["result"]["content"][0]["text"].get<std::string>();
  EXPECT_EQ(text.find("Error (resource_exhausted)"), 0U) << text;
  EXPECT_NE(text.find("source 'hung'"), std::string::npos) << text;
  EXPECT_EQ(text.find("127.0.0.1"), std::string::npos) << text;
  EXPECT_EQ(text.find(std::to_string(port)), std::string::npos) << text;
}

// The time one call to `main_items` takes, answered ok.
Clock::duration timeMainCall(protocol::Session& s, int id) {
  auto out = std::make_shared<Answers>();
  const auto t0 = Clock::now();
  s.handleText(call(id, "main_items"), out);
  const Json a = out->answer(id);
  const auto took = Clock::now() - t0;
  EXPECT_TRUE(ok(a)) << a.dump();
  return took;
}

TEST(PostgresBulkhead, AHungSourceDoesNotSlowAHealthyOne) {
  Server srv;
  auto s = srv.session();
  timeMainCall(*s, 1);  // the first opens the pool and proves the statement
  std::vector<Clock::duration> base;
  for (int i = 0; i < 5; ++i) base.push_back(timeMainCall(*s, 10 + i));
  std::sort(base.begin(), base.end());
  const auto baseline = base[base.size() / 2];

  // 16 calls to the hung source, from two sessions: 6 (three quarters of the workers, by default)
  // wait on it, 10 wait for a slot without a worker, and the hung server holds no more than those
  // 6's connection attempts.
  auto other = srv.session();
  auto hung_out = std::make_shared<Answers>();
  const auto hung_sent = Clock::now();
  for (int i = 0; i < 16; ++i)
    (i % 2 ? *other : *s).handleText(call(100 + i, "hung_items"), hung_out);
  EXPECT_EQ(srv.hungInUse(), kShare);
  EXPECT_EQ(srv.hungWaiting(), 16 - kShare);

  // The healthy source answers promptly while the hung one is saturated: a generous bound over
  // the baseline (without the bulkhead this call waited for a hung connection attempt, 8 s).
  std::vector<Clock::duration> during;
  for (int i = 0; i < 5; ++i) during.push_back(timeMainCall(*s, 200 + i));
  std::sort(during.begin(), during.end());
  const auto bound = 20 * baseline + 1s;
  EXPECT_LT(during.back(), bound)
      << "slowest healthy call "
      << std::chrono::duration_cast<std::chrono::milliseconds>(during.back()).count()
      << " ms, baseline " << std::chrono::duration_cast<std::chrono::microseconds>(baseline).count()
      << " us";
  // Many healthy calls at once still all run: the other quarter of the workers is theirs.
  auto many = std::make_shared<Answers>();
  for (int i = 0; i < 4; ++i) s->handleText(call(300 + i, "main_items"), many);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ok(many->answer(300 + i, 5s))) << i;
  EXPECT_EQ(srv.hungInUse(), kShare);
  // The waiting calls end by their deadline (the tool's 5 s timeout from when they came):
  // timed_out, never naming the host. (The running calls time out at about the same moment and
  // hand their slots to waiters with milliseconds left, which then time out in the engine rather
  // than in the queue; the queue's own timeout, naming the source, is tested in
  // tests/unit/protocol/bulkhead_test.cpp.)
  for (int i = static_cast<int>(kShare); i < 16; ++i) {
    const Json a = hung_out->answer(100 + i, 30s);
    ASSERT_TRUE(a.contains("result")) << a.dump();
    const std::string text = a["result"]["content"][0]["text"].get<std::string>();
    EXPECT_EQ(text.find("Error (timed_out)"), 0U) << text;
    EXPECT_EQ(text.find("127.0.0.1"), std::string::npos) << text;
    EXPECT_EQ(text.find(std::to_string(srv.hung.port())), std::string::npos) << text;
  }
  const auto waited = Clock::now() - hung_sent;
  EXPECT_GE(waited, 4900ms);
  EXPECT_LT(waited, 20s);
  EXPECT_EQ(srv.hungWaiting(), 0U);
}

TEST(PostgresBulkhead, BatchesAndOtherSessionsDoNotBypassTheLimit) {
  Server srv(kShare);  // set by the operator: the same share as the default here
  auto s = srv.session();
  auto out = std::make_shared<Answers>();
  for (int i = 0; i < static_cast<int>(kShare); ++i) s->handleText(call(1 + i, "hung_items"), out);
  ASSERT_EQ(srv.hungInUse(), kShare);
  // A batch of 20 to the hung source in a fresh session: every call waits on its own, in the one
  // queue of the source.
  auto batcher = srv.session();
  auto batch_out = std::make_shared<Answers>();
  std::string batch = "[";
  for (int i = 0; i < 20; ++i) batch += (i ? "," : "") + call(500 + i, "hung_items");
  batch += "]";
  batcher->handleText(batch, batch_out);
  EXPECT_EQ(srv.hungWaiting(), 20U);
  // Stateless 2026-07-28 requests (their own session each time, as HTTP runs them) fill the rest
  // of the queue; the next is refused at once.
  auto modern = [&](int id) {
    auto m = std::make_shared<protocol::Session>(*srv.core, protocol::Principal{});
    srv.sessions.push_back(m);
    auto m_out = std::make_shared<Answers>();
    m->handleText(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                      R"(,"method":"tools/call","params":{"name":"hung_items","arguments":{},)"
                      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                      R"("io.modelcontextprotocol/clientCapabilities":{}}}})",
                  m_out);
    return m_out;
  };
  for (int id = 9; id < 9 + static_cast<int>(kWaiting) - 20; ++id) modern(id);
  EXPECT_EQ(srv.hungWaiting(), kWaiting);
  expectRefusedForHung(modern(99)->answer(99, 5s), srv.hung.port());
  s->handleText(call(98, "hung_items"), out);
  expectRefusedForHung(out->answer(98, 5s), srv.hung.port());
  EXPECT_EQ(srv.hungInUse(), kShare);
  EXPECT_EQ(srv.hungWaiting(), kWaiting);
  // (Their slots coming back is tested in tests/unit/protocol/bulkhead_test.cpp.)
  for (auto& session : srv.sessions) session->cancelAll();
}

}  // namespace
}  // namespace mcpdb::postgres::itest
