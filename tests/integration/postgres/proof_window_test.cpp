// The window of the read-only proof: no call runs on a proof older than postgres.proof.interval_s.
// A function redefined after the proof (into one that takes a lock and returns another value) is
// never run by a call made once the interval has passed, even on an idle server (no call between
// to have the proof made again in the background): that call waits for the new proof, which
// refuses it. The interval is one second here (the config's minimum is ten; the runtime is built
// from the parsed section with the interval shortened).
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "engines/postgres/config.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using std::chrono::milliseconds;

// The schema of the running test: each test has its own, so tests run in parallel (ctest -j) never
// redefine or drop each other's function.
std::string schema() {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return "proof_window_" + std::to_string(std::hash<std::string>{}(test) % 1000000);
}

std::string statement() {
  return "SELECT " + schema() + ".f() AS v";
}

std::string yaml() {
  return R"(
postgres:
  pool: {size: 2}
  tools:
    value:
      description: A function that changes under the proof.
      statement: )" +
         statement() + "\n";
}

std::shared_ptr<Runtime> runtimeWithInterval(std::chrono::seconds interval) {
  config::Diagnostics diag("itest.yaml");
  config::Config cfg = config::parseConfig(yaml(), "itest.yaml", {"postgres"}, diag);
  Settings section;
  if (diag.ok()) {
    config::Node root(cfg.root, "", diag);
    section = parseSettings(root.child("postgres"), cfg.limits);
  }
  for (const auto& e : diag.errors()) ADD_FAILURE() << e;
  section.proof.interval = interval;
  auto rt = std::make_shared<Runtime>(section, envWithDsn(requireEnv("POSTGRES_DSN")));
  EXPECT_TRUE(rt->proveNow().ok());
  return rt;
}

void define(const char* body) {
  ASSERT_EQ(superuserExec("CREATE OR REPLACE FUNCTION " + schema() +
                          ".f() RETURNS int LANGUAGE sql AS '" + body + "'"),
            "");
}

void createSchema() {
  ASSERT_EQ(superuserExec("SET client_min_messages = warning; CREATE SCHEMA IF NOT EXISTS " +
                          schema() + "; GRANT USAGE ON SCHEMA " + schema() + " TO mcp_reader;"),
            "");
  define("SELECT 1");
}

TEST(PostgresProofWindow, ARedefinedFunctionNeverRunsOnceTheIntervalHasPassed) {
  createSchema();
  // Several rounds: the redefinition lands at a different point of the proof's life each time.
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    define("SELECT 1");
    auto rt = runtimeWithInterval(std::chrono::seconds(1));
    auto first = call(*rt, "value", Json::object());
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->structured["rows"][0]["v"], 1);
    std::this_thread::sleep_for(milliseconds(100 * round));
    define("SELECT 2 FROM (SELECT pg_catalog.pg_advisory_lock(4281)) AS s");
    // Idle: no call until the interval since the proof has passed.
    std::this_thread::sleep_for(milliseconds(1100 - 100 * round));
    auto r = call(*rt, "value", Json::object());
    ASSERT_FALSE(r.ok()) << "the redefined body ran: " << r->structured.dump();
    EXPECT_EQ(r.error().code, Code::PermissionDenied) << r.error().message;
    EXPECT_NE(r.error().message.find("refused by the read-only proof"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(adminQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = "
                         "4281"),
              "0");
  }
  EXPECT_EQ(superuserExec("DROP SCHEMA " + schema() + " CASCADE"), "");
}

// Many calls finding an expired proof at once: one proof is made for all of them (no herd on the
// catalog), and each goes on with it.
TEST(PostgresProofWindow, CallsWaitingForAnExpiredProofShareOne) {
  createSchema();
  auto rt = runtimeWithInterval(std::chrono::seconds(1));
  auto before = rt->latestProof();
  ASSERT_TRUE(before.ok());
  std::this_thread::sleep_for(milliseconds(1100));
  std::atomic<int> ok{0};
  {
    std::vector<std::jthread> callers;
    for (int i = 0; i < 8; ++i) {
      callers.emplace_back([&] {
        auto r = call(*rt, "value", Json::object());
        if (r.ok() && r->structured["rows"][0]["v"] == 1) ++ok;
      });
    }
  }  // joined
  EXPECT_EQ(ok.load(), 8);
  auto after = rt->latestProof();
  ASSERT_TRUE(after.ok());
  EXPECT_NE(after->get(), before->get()) << "the calls ran on the expired proof";
  EXPECT_EQ(superuserExec("DROP SCHEMA " + schema() + " CASCADE"), "");
}

// A call that cannot wait for the new proof (its deadline has passed) fails closed at once, saying
// why, instead of running on the expired one.
TEST(PostgresProofWindow, AnExpiredProofNotRemadeInTimeFailsTheCallClosed) {
  createSchema();
  auto rt = runtimeWithInterval(std::chrono::seconds(1));
  std::this_thread::sleep_for(milliseconds(1100));
  const auto start = Clock::now();
  auto r = rt->requireProof(statement(), Clock::now());
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::TimedOut) << r.error().message;
  EXPECT_NE(r.error().message.find("read-only proof"), std::string::npos) << r.error().message;
  // The proof asked for meanwhile lets the next call through.
  std::string message;
  for (int i = 0; i < 50; ++i) {
    auto again = call(*rt, "value", Json::object());
    if (again.ok()) break;
    message = again.error().message;
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(call(*rt, "value", Json::object()).ok()) << message;
  EXPECT_EQ(superuserExec("DROP SCHEMA " + schema() + " CASCADE"), "");
}

}  // namespace
}  // namespace mcpdb::postgres::itest
