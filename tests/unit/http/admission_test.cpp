#include "transport/http/admission.hpp"

#include <gtest/gtest.h>

namespace mcpdb::transport::http {
namespace {

struct FakeConn : Evictable {
  void evict() override { evicted = true; }
  bool claimIfIdle() override {
    if (!idle || claimed) return false;
    claimed = true;
    return true;
  }
  bool evicted = false;
  bool idle = false;  // waiting for its next request
  bool claimed = false;
};

using Clock = Admission::Clock;

// Issue #18: half-open connections cannot keep a newer client out: at the per-source cap the
// source's oldest unauthenticated connection makes room; authenticated ones are never evicted.
TEST(Admission, PerSourceCapEvictsTheSourcesOldestUnauthenticated) {
  Admission a({100, 25, 3, 1e6, 1e6});
  const auto now = Clock::now();
  std::vector<std::shared_ptr<FakeConn>> conns;
  for (std::uint64_t id = 1; id <= 3; ++id) {
    conns.push_back(std::make_shared<FakeConn>());
    EXPECT_TRUE(a.admit(id, conns.back(), "10.0.0.1", false, id - 1, now).admitted);
  }
  a.authenticated(2, conns[1], "k");  // a client with a valid key: never evicted for a source
  conns.push_back(std::make_shared<FakeConn>());
  EXPECT_TRUE(a.admit(4, conns.back(), "10.0.0.2", false, 3, now).admitted);  // other source
  conns.push_back(std::make_shared<FakeConn>());
  auto v = a.admit(5, conns.back(), "10.0.0.1", false, 4, now);
  EXPECT_TRUE(v.admitted);
  EXPECT_TRUE(v.evict.empty());  // 2 unauthenticated of 10.0.0.1 (2 authenticated): below 3
  conns.push_back(std::make_shared<FakeConn>());
  v = a.admit(6, conns.back(), "10.0.0.1", false, 5, now);
  ASSERT_EQ(v.evict.size(), 1u);
  EXPECT_EQ(v.evict[0], conns[0]);  // the oldest of that source
  EXPECT_EQ(a.unauthenticated(), 4u);
}

TEST(Admission, ReservedSlotsStayForAuthenticatedConnections) {
  Admission a({10, 4, 100, 1e6, 1e6});
  const auto now = Clock::now();
  std::vector<std::shared_ptr<FakeConn>> conns;
  std::size_t open = 0;
  for (std::uint64_t id = 1; id <= 20; ++id) {
    conns.push_back(std::make_shared<FakeConn>());
    auto v = a.admit(id, conns.back(), "10.0.0." + std::to_string(id), false, open, now);
    EXPECT_TRUE(v.admitted);
    open += 1;
    open -= v.evict.size();
  }
  EXPECT_EQ(a.unauthenticated(), 6u);  // 10 - 4 reserved
  // Every slot held by authenticated connections: a new one is refused, nothing to evict.
  Admission full({2, 1, 100, 1e6, 1e6});
  auto c1 = std::make_shared<FakeConn>();
  auto c2 = std::make_shared<FakeConn>();
  EXPECT_TRUE(full.admit(1, c1, "a", false, 0, now).admitted);
  full.authenticated(1, c1, "k1");
  EXPECT_TRUE(full.admit(2, c2, "b", false, 1, now).admitted);
  full.authenticated(2, c2, "k2");
  auto c3 = std::make_shared<FakeConn>();
  const auto v = full.admit(3, c3, "c", false, 2, now);
  EXPECT_FALSE(v.admitted);  // both have requests in flight: nothing idle to close
  EXPECT_STREQ(v.reason, "connections_full");
}

// Issue #28: one key cannot hold the slots every other key needs. When every slot is taken, an
// idle connection of the key holding the most makes room (never one with a request in flight).
TEST(Admission, FullSlotsCloseAnIdleConnectionOfTheKeyHoldingTheMost) {
  Admission a({6, 1, 100, 1e6, 1e6, 100});
  const auto now = Clock::now();
  std::vector<std::shared_ptr<FakeConn>> conns;
  auto open = [&](std::uint64_t id, const std::string& key) {
    conns.push_back(std::make_shared<FakeConn>());
    const auto v = a.admit(id, conns.back(), "10.0.0.1", false, conns.size() - 1, now);
    EXPECT_TRUE(v.admitted) << id;
    EXPECT_TRUE(a.authenticated(id, conns.back(), key).admitted);
  };
  for (std::uint64_t id = 1; id <= 4; ++id) open(id, "hoarder");
  open(5, "other");
  open(6, "other");
  conns[0]->idle = false;  // the hoarder's oldest has a request in flight
  conns[1]->idle = true;
  conns[2]->idle = true;
  conns[4]->idle = true;  // the other key's oldest is idle too, but it holds fewer
  conns.push_back(std::make_shared<FakeConn>());
  auto v = a.admit(7, conns.back(), "10.0.0.2", false, 6, now);
  EXPECT_TRUE(v.admitted);
  ASSERT_EQ(v.evict.size(), 1u);
  EXPECT_EQ(v.evict[0], conns[1]);  // the hoarder's oldest idle
  EXPECT_EQ(a.ofKey("hoarder"), 3u);
  // The claimed connection is not claimed twice; the next is the hoarder's other idle one (once
  // the newcomer has authenticated: an unauthenticated connection is closed first).
  a.authenticated(7, conns[6], "new");
  conns.push_back(std::make_shared<FakeConn>());
  v = a.admit(8, conns.back(), "10.0.0.2", false, 6, now);
  ASSERT_EQ(v.evict.size(), 1u);
  EXPECT_EQ(v.evict[0], conns[2]);
  // Then the other key's idle one: the hoarder has none left.
  a.authenticated(8, conns[7], "new2");
  conns.push_back(std::make_shared<FakeConn>());
  v = a.admit(9, conns.back(), "10.0.0.2", false, 6, now);
  ASSERT_EQ(v.evict.size(), 1u);
  EXPECT_EQ(v.evict[0], conns[4]);
  a.authenticated(9, conns[8], "new3");
  // Nothing idle left: refused.
  conns.push_back(std::make_shared<FakeConn>());
  v = a.admit(10, conns.back(), "10.0.0.2", false, 6, now);
  EXPECT_FALSE(v.admitted);
  EXPECT_STREQ(v.reason, "connections_full");
}

// At its own cap a key makes room by closing one of its own idle connections; with none idle the
// new connection's request is refused. Other keys, and auth turned off (no key), are not capped.
TEST(Admission, PerKeyCapClosesTheKeysOwnIdleConnectionOrRefuses) {
  Admission a({100, 10, 100, 1e6, 1e6, 2});
  const auto now = Clock::now();
  std::vector<std::shared_ptr<FakeConn>> conns;
  auto conn = [&](std::uint64_t id) {
    conns.push_back(std::make_shared<FakeConn>());
    EXPECT_TRUE(a.admit(id, conns.back(), "10.0.0.1", false, conns.size() - 1, now).admitted);
    return conns.back();
  };
  EXPECT_TRUE(a.authenticated(1, conn(1), "k").admitted);
  EXPECT_TRUE(a.authenticated(2, conn(2), "k").admitted);
  auto third = conn(3);
  auto v = a.authenticated(3, third, "k");
  EXPECT_FALSE(v.admitted);  // both of k's connections are busy
  EXPECT_TRUE(v.evict.empty());
  EXPECT_EQ(a.ofKey("k"), 2u);
  EXPECT_EQ(a.unauthenticated(), 0u);  // it presented a valid key: not evictable as a stranger
  conns[1]->idle = true;
  v = a.authenticated(3, third, "k");
  EXPECT_TRUE(v.admitted);
  ASSERT_EQ(v.evict.size(), 1u);
  EXPECT_EQ(v.evict[0], conns[1]);
  EXPECT_EQ(a.ofKey("k"), 2u);
  // The same connection presenting the same key again is not counted twice.
  EXPECT_TRUE(a.authenticated(3, third, "k").admitted);
  EXPECT_EQ(a.ofKey("k"), 2u);
  // A connection that changes keys moves from one count to the other.
  EXPECT_TRUE(a.authenticated(3, third, "j").admitted);
  EXPECT_EQ(a.ofKey("k"), 1u);
  EXPECT_EQ(a.ofKey("j"), 1u);
  for (std::uint64_t id = 10; id < 15; ++id)
    EXPECT_TRUE(a.authenticated(id, conn(id), "").admitted);
  a.closed(3);
  a.closed(1);
  EXPECT_EQ(a.ofKey("j"), 0u);
  EXPECT_EQ(a.ofKey("k"), 0u);
}

TEST(Admission, NewConnectionRatePerSourceExceptTrustedProxies) {
  Admission a({1000, 10, 1000, 1, 3});
  const auto now = Clock::now();
  std::vector<std::shared_ptr<FakeConn>> conns;
  int admitted = 0;
  for (std::uint64_t id = 1; id <= 10; ++id) {
    conns.push_back(std::make_shared<FakeConn>());
    admitted += a.admit(id, conns.back(), "10.0.0.1", false, id, now).admitted ? 1 : 0;
  }
  EXPECT_EQ(admitted, 3);
  conns.push_back(std::make_shared<FakeConn>());
  EXPECT_TRUE(a.admit(11, conns.back(), "10.0.0.1", false, 3, now + std::chrono::seconds(1))
                  .admitted);  // refilled
  for (std::uint64_t id = 20; id < 30; ++id) {
    conns.push_back(std::make_shared<FakeConn>());
    EXPECT_TRUE(a.admit(id, conns.back(), "10.9.9.9", true, id, now).admitted);
  }
}

}  // namespace
}  // namespace mcpdb::transport::http
