// Measures (does not assert on time): the server's added latency per call over a direct libpq
// round trip, for one allowlisted query and for semantic search (embedding excluded: a fixed fake
// embedder), on one connection each; the shapes run in alternating blocks so that machine noise
// falls on all alike. Prints p50/p99; run it in a release build for real figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

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

Stats stats(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return Stats{us[us.size() / 2], us[us.size() * 99 / 100]};
}

// Runs the shapes in alternating blocks (each block: a short warm-up, then kBlock calls of one
// shape on its hot connection), so that noise from other processes on the machine falls on all of
// them alike; returns each shape's latency.
std::vector<Stats> measure(const std::vector<std::function<void()>>& shapes) {
  constexpr int kBlock = 200;
  std::vector<std::vector<double>> us(shapes.size());
  for (auto& v : us) v.reserve(kRounds);
  for (int done = 0; done < kRounds; done += kBlock) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      for (int i = 0; i < 20; ++i) shapes[s]();  // warm-up
      for (int i = 0; i < kBlock; ++i) {
        const auto t0 = Clock::now();
        shapes[s]();
        us[s].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
    }
  }
  std::vector<Stats> out;
  for (auto& v : us) out.push_back(stats(std::move(v)));
  return out;
}

void report(const char* what, Stats raw, Stats handler) {
  std::printf(
      "[latency] %s: raw libpq p50 %.1f us p99 %.1f us | handler p50 %.1f us p99 %.1f us | added "
      "p50 %.1f us\n",
      what, raw.p50_us, raw.p99_us, handler.p50_us, handler.p99_us, handler.p50_us - raw.p50_us);
}

// The transaction the handler runs, in libpq alone: BEGIN READ ONLY, the statement, the
// advisory-lock release and ROLLBACK in one pipeline with one sync.
bool pipelinedTransaction(PGconn* c, const char* sql, int n, const char* const* values) {
  if (PQenterPipelineMode(c) != 1) return false;
  bool good =
      PQsendQueryParams(c, "BEGIN READ ONLY", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
      PQsendQueryParams(c, sql, n, nullptr, values, nullptr, nullptr, 0) == 1 &&
      PQsendQueryParams(c, "SELECT pg_catalog.pg_advisory_unlock_all()", 0, nullptr, nullptr,
                        nullptr, nullptr, 0) == 1 &&
      PQsendQueryParams(c, "ROLLBACK", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
      PQpipelineSync(c) == 1;
  const ExecStatusType want[] = {PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_TUPLES_OK,
                                 PGRES_COMMAND_OK};
  for (int i = 0; good && i < 4; ++i) {
    ResPtr r(PQgetResult(c));
    good = PQresultStatus(r.get()) == want[i];
    ResPtr end(PQgetResult(c));
  }
  if (good) {
    ResPtr sync(PQgetResult(c));
    good = PQresultStatus(sync.get()) == PGRES_PIPELINE_SYNC;
  }
  return PQexitPipelineMode(c) == 1 && good;
}

TEST(PostgresLatency, HandlerOverheadOverRawLibpq) {
  auto rt = makeRuntime(defaultSectionOnTestSchema());
  const std::string dsn = requireEnv("POSTGRES_DSN");
  ConnPtr raw(PQconnectdb(dsn.c_str()));
  ASSERT_EQ(PQstatus(raw.get()), CONNECTION_OK);

  const char* get_sql =
      "SELECT id, title, body, category, tags, published FROM pgtest.documents WHERE id = $1";
  const char* id = "doc-c";
  auto get = measure({
      [&] {
        ResPtr r(PQexecParams(raw.get(), get_sql, 1, nullptr, &id, nullptr, nullptr, 0));
        ASSERT_EQ(PQntuples(r.get()), 1);
      },
      [&] { ASSERT_TRUE(pipelinedTransaction(raw.get(), get_sql, 1, &id)); },
      [&] {
        auto r = call(*rt, "get_document", Json{{"id", "doc-c"}});
        ASSERT_TRUE(r.ok());
      },
  });
  report("get_document", get[0], get[2]);
  report("get_document over the same pipelined transaction in libpq", get[1], get[2]);

  const std::string& search_sql = rt->section().search.statement;
  const char* search_values[4] = {"[0,1,0,0]", "5", nullptr, nullptr};
  const Oid search_types[4] = {0, oid::kInt8, oid::kText, oid::kText};
  auto search = measure({
      [&] {
        ResPtr r(PQexecParams(raw.get(), search_sql.c_str(), 4, search_types, search_values,
                              nullptr, nullptr, 0));
        ASSERT_EQ(PQresultStatus(r.get()), PGRES_TUPLES_OK);
      },
      [&] {
        auto r = call(*rt, "semantic_search_documents", Json{{"query", "kubernetes"}, {"k", 5}});
        ASSERT_TRUE(r.ok());
      },
  });
  report("semantic_search_documents (fake embedder)", search[0], search[1]);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
