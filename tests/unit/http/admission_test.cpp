#include "transport/http/admission.hpp"

#include <gtest/gtest.h>

namespace mcpdb::transport::http {
namespace {

struct FakeConn : Evictable {
  void evict() override { evicted = true; }
  bool evicted = false;
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
  a.authenticated(2);  // a client with a valid key: never evicted
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
  full.authenticated(1);
  EXPECT_TRUE(full.admit(2, c2, "b", false, 1, now).admitted);
  full.authenticated(2);
  auto c3 = std::make_shared<FakeConn>();
  const auto v = full.admit(3, c3, "c", false, 2, now);
  EXPECT_FALSE(v.admitted);
  EXPECT_STREQ(v.reason, "connections_full");
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
