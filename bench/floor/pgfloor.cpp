// mcpdb-pgfloor: the physical floor for one allowlisted query: the same SQL, same role, through
// libpq directly, so the latency an MCP server adds on top can be reported.
//   mcpdb-pgfloor --sql 'SELECT ...$1' --param doc-01 [--requests N] [--warmup W] [--threads T]
// Shapes (--shape, may repeat; default all):
//   bare      one PQexecParams per call
//   txn       BEGIN READ ONLY; the statement; COMMIT, each waited for (three round trips: what
//             mcp-dbserver did before it pipelined them)
//   pipeline  the same three commands in libpq pipeline mode, one sync, one round trip (what
//             mcp-dbserver does, which also fetches the statement's rows in single-row mode)
// Connects with $POSTGRES_DSN. Prints one JSON object.
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/stats.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Options {
  std::string sql;
  std::vector<std::string> params;
  std::vector<std::string> shapes;
  long requests = 2000;
  long warmup = 200;
  int threads = 1;
  double max_seconds = 30;
};

bool ok(PGresult* r, ExecStatusType want) {
  const bool good = r != nullptr && PQresultStatus(r) == want;
  if (!good && r != nullptr) std::cerr << "pgfloor: " << PQresultErrorMessage(r);
  PQclear(r);
  return good;
}

bool runOnce(PGconn* c, const Options& o, const std::vector<const char*>& vals,
             const std::string& shape) {
  const int n = static_cast<int>(vals.size());
  if (shape == "bare") {
    return ok(PQexecParams(c, o.sql.c_str(), n, nullptr, vals.data(), nullptr, nullptr, 0),
              PGRES_TUPLES_OK);
  }
  if (shape == "txn") {
    return ok(PQexecParams(c, "BEGIN READ ONLY", 0, nullptr, nullptr, nullptr, nullptr, 0),
              PGRES_COMMAND_OK) &&
           ok(PQexecParams(c, o.sql.c_str(), n, nullptr, vals.data(), nullptr, nullptr, 0),
              PGRES_TUPLES_OK) &&
           ok(PQexecParams(c, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0),
              PGRES_COMMAND_OK);
  }
  // pipeline: one round trip for BEGIN, statement, COMMIT.
  if (PQenterPipelineMode(c) != 1) return false;
  bool good =
      PQsendQueryParams(c, "BEGIN READ ONLY", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
      PQsendQueryParams(c, o.sql.c_str(), n, nullptr, vals.data(), nullptr, nullptr, 0) == 1 &&
      PQsendQueryParams(c, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
      PQpipelineSync(c) == 1;
  const ExecStatusType want[] = {PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_COMMAND_OK};
  for (int i = 0; good && i < 3; ++i) {
    good = ok(PQgetResult(c), want[i]);
    PQclear(PQgetResult(c));  // the null that ends each command's results
  }
  if (good) good = ok(PQgetResult(c), PGRES_PIPELINE_SYNC);
  PQexitPipelineMode(c);
  return good;
}

using mcpdb::bench::summarize;

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const std::string v = argv[i + 1];
    if (a == "--sql")
      o.sql = v;
    else if (a == "--param")
      o.params.push_back(v);
    else if (a == "--shape")
      o.shapes.push_back(v);
    else if (a == "--requests")
      o.requests = std::stol(v);
    else if (a == "--warmup")
      o.warmup = std::stol(v);
    else if (a == "--threads")
      o.threads = std::stoi(v);
    else if (a == "--max-seconds")
      o.max_seconds = std::stod(v);
    else {
      std::cerr << "pgfloor: unknown option " << a << "\n";
      return 2;
    }
  }
  if (o.shapes.empty()) o.shapes = {"bare", "txn", "pipeline"};
  const char* dsn = std::getenv("POSTGRES_DSN");
  if (o.sql.empty() || dsn == nullptr || o.threads < 1 || o.threads > 256 || o.requests < 1) {
    std::cerr << "pgfloor: needs --sql and $POSTGRES_DSN\n";
    return 2;
  }
  json out{{"threads", o.threads}, {"shapes", json::object()}};
  for (const auto& shape : o.shapes) {
    std::vector<PGconn*> conns;
    for (int t = 0; t < o.threads; ++t) {
      PGconn* c = PQconnectdb(dsn);
      if (PQstatus(c) != CONNECTION_OK) {
        std::cerr << "pgfloor: connection failed\n";  // the message may hold the DSN: not printed
        return 1;
      }
      conns.push_back(c);
    }
    std::vector<const char*> vals;
    for (const auto& p : o.params) vals.push_back(p.c_str());
    std::vector<long long> all;
    std::mutex mu;
    bool failed = false;
    const long per_thread = std::max(1L, o.requests / o.threads);
    const auto t0 = Clock::now();
    const auto stop = t0 + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(o.max_seconds));
    auto work = [&](PGconn* c) {
      for (long i = 0; i < o.warmup / o.threads; ++i) (void)runOnce(c, o, vals, shape);
      std::vector<long long> lat;
      lat.reserve(static_cast<std::size_t>(per_thread));
      for (long i = 0; i < per_thread && Clock::now() < stop; ++i) {
        const auto s = Clock::now();
        if (!runOnce(c, o, vals, shape)) {
          std::lock_guard<std::mutex> lock(mu);
          failed = true;
          return;
        }
        lat.push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - s).count());
      }
      std::lock_guard<std::mutex> lock(mu);
      all.insert(all.end(), lat.begin(), lat.end());
    };
    std::vector<std::thread> threads;
    const auto m0 = Clock::now();
    for (auto* c : conns) threads.emplace_back(work, c);
    for (auto& t : threads) t.join();
    // Throughput includes each thread's warm-up share only when threads > 1 (a rough ceiling).
    const double wall = std::chrono::duration<double>(Clock::now() - m0).count();
    for (auto* c : conns) PQfinish(c);
    const std::size_t n = all.size();
    out["shapes"][shape] = {{"latency_us", summarize(all)},
                            {"throughput_rps", wall > 0 ? static_cast<double>(n) / wall : 0.0},
                            {"failed", failed}};
    if (failed) {
      std::cout << out.dump() << "\n";
      return 1;
    }
  }
  std::cout << out.dump() << "\n";
  return 0;
}
