// Measures (does not assert on time): the server's added latency per call over a direct libpq
// round trip, for one allowlisted query and for semantic search (embedding excluded: a fixed fake
// embedder), on one connection each. Prints p50/p99; run it in a release build for real figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using ConnPtr = Owned<PGconn, PQfinish>;
using ResPtr = Owned<PGresult, PQclear>;

constexpr int kRounds = 2000;

struct Stats {
  double p50_us;
  double p99_us;
};

template <class F>
Stats measure(F&& f) {
  for (int i = 0; i < 100; ++i) f();  // warm-up
  std::vector<double> us;
  us.reserve(kRounds);
  for (int i = 0; i < kRounds; ++i) {
    const auto t0 = Clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return Stats{us[us.size() / 2], us[us.size() * 99 / 100]};
}

void report(const char* what, Stats raw, Stats handler) {
  std::printf(
      "[latency] %s: raw libpq p50 %.1f us p99 %.1f us | handler p50 %.1f us p99 %.1f us | added "
      "p50 %.1f us\n",
      what, raw.p50_us, raw.p99_us, handler.p50_us, handler.p99_us, handler.p50_us - raw.p50_us);
}

TEST(PostgresLatency, HandlerOverheadOverRawLibpq) {
  auto rt = makeRuntime(defaultSectionOnTestSchema());
  const std::string dsn = requireEnv("POSTGRES_DSN");
  ConnPtr raw(PQconnectdb(dsn.c_str()));
  ASSERT_EQ(PQstatus(raw.get()), CONNECTION_OK);

  const char* get_sql =
      "SELECT id, title, body, category, tags, published FROM pgtest.documents WHERE id = $1";
  const char* id = "doc-c";
  Stats raw_get = measure([&] {
    ResPtr r(PQexecParams(raw.get(), get_sql, 1, nullptr, &id, nullptr, nullptr, 0));
    ASSERT_EQ(PQntuples(r.get()), 1);
  });
  Stats handler_get = measure([&] {
    auto r = call(*rt, "get_document", Json{{"id", "doc-c"}});
    ASSERT_TRUE(r.ok());
  });
  report("get_document", raw_get, handler_get);

  const std::string& search_sql = rt->section().search.statement;
  const char* search_values[4] = {"[0,1,0,0]", "5", nullptr, nullptr};
  const Oid search_types[4] = {0, oid::kInt8, oid::kText, oid::kText};
  Stats raw_search = measure([&] {
    ResPtr r(PQexecParams(raw.get(), search_sql.c_str(), 4, search_types, search_values, nullptr,
                          nullptr, 0));
    ASSERT_EQ(PQresultStatus(r.get()), PGRES_TUPLES_OK);
  });
  Stats handler_search = measure([&] {
    auto r = call(*rt, "semantic_search_documents", Json{{"query", "kubernetes"}, {"k", 5}});
    ASSERT_TRUE(r.ok());
  });
  report("semantic_search_documents (fake embedder)", raw_search, handler_search);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
