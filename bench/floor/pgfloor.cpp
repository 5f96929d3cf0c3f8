// mcpdb-pgfloor: the physical floor for one allowlisted query: the same SQL, same role, through
// libpq directly, so the latency an MCP server adds on top can be reported.
//   mcpdb-pgfloor --sql 'SELECT ...$1' --param doc-01 [--requests N] [--warmup W] [--threads T]
//                 [--max-seconds S] [--shape S]... [--busy-wait] [--expect-rows N]
// Shapes (--shape, may repeat; default all):
//   bare      one PQexecParams per call
//   txn       BEGIN READ ONLY; the statement; COMMIT, each waited for (three round trips: what
//             mcp-dbserver did before it pipelined them)
//   pipeline  the same three commands in libpq pipeline mode, one sync, one round trip (what
//             mcp-dbserver did before it prepared them; rows fetched whole, not in single-row mode)
//   prepared  as pipeline, but each command is a named statement prepared once per connection and
//             run with PQsendQueryPrepared, the statement's rows fetched in single-row mode (what
//             mcp-dbserver does)
// --busy-wait: every shape waits for the server by spinning on PQconsumeInput + PQisBusy on a
// non-blocking connection instead of sleeping in poll(); its shapes are keyed "<shape>_busy".
// Each shape also says "wait": "block" | "busy". Every call checks the statement's row count
// (against --expect-rows when given). Throughput counts only the timed calls, from the moment
// every thread has finished its warm-up. Connects with $POSTGRES_DSN. Prints one JSON object.
#include <libpq-fe.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/stats.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using ConnPtr = std::unique_ptr<PGconn, ConnDeleter>;
struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

enum class Wait { Block, Busy };

struct Options {
  std::string sql;
  std::vector<std::string> params;
  std::vector<std::string> shapes;
  long requests = 2000;
  long warmup = 200;
  int threads = 1;
  double max_seconds = 30;
  long expect_rows = -1;  // -1: any count, as long as every call succeeds
  Wait wait = Wait::Block;
};

// Names of the prepared statements of the `prepared` shape (per connection).
constexpr const char* kBeginName = "pgfloor_begin";
constexpr const char* kStmtName = "pgfloor_stmt";
constexpr const char* kCommitName = "pgfloor_commit";

// Busy: spins until libpq has written everything queued (reading meanwhile, so a server blocked on
// writing to us cannot stall the two). Blocking connections have flushed in the send calls.
bool flushAll(PGconn* c, Wait w) {
  if (w == Wait::Block) return true;
  for (;;) {
    const int f = PQflush(c);
    if (f == 0) return true;
    if (f < 0 || PQconsumeInput(c) == 0) return false;
  }
}

// The next result: PQgetResult blocking in poll(), or only once spinning on the socket has made
// it ready. A lost connection stops the spin; PQgetResult then reports it.
ResultPtr nextResult(PGconn* c, Wait w) {
  if (w == Wait::Busy) {
    while (PQisBusy(c) != 0) {
      if (PQconsumeInput(c) == 0) break;
    }
  }
  return ResultPtr(PQgetResult(c));
}

// The rows of one finished result of status `want` (a single-row result counts one), else -1.
long rowsOf(const PGresult* r, ExecStatusType want) {
  if (r == nullptr) return -1;
  const ExecStatusType st = PQresultStatus(r);
  if (st == want) return PQntuples(r);
  if (st == PGRES_SINGLE_TUPLE && want == PGRES_TUPLES_OK) return 1;
  std::cerr << "pgfloor: " << PQresStatus(st) << ": " << PQresultErrorMessage(r);
  return -1;
}

// All results of one command, up to the null that ends them: its row count, or -1.
long readCommand(PGconn* c, Wait w, ExecStatusType want) {
  long rows = 0;
  bool any = false;
  while (ResultPtr r = nextResult(c, w)) {
    const long n = rowsOf(r.get(), want);
    if (n < 0) return -1;
    rows += n;
    any = true;
  }
  return any ? rows : -1;
}

// One command outside a pipeline. Blocking keeps PQexecParams (the floor as first measured).
long execOne(PGconn* c, Wait w, const char* sql, const std::vector<const char*>& vals,
             ExecStatusType want) {
  const int n = static_cast<int>(vals.size());
  const char* const* v = vals.empty() ? nullptr : vals.data();
  if (w == Wait::Block) {
    const ResultPtr r(PQexecParams(c, sql, n, nullptr, v, nullptr, nullptr, 0));
    return rowsOf(r.get(), want);
  }
  if (PQsendQueryParams(c, sql, n, nullptr, v, nullptr, nullptr, 0) != 1 || !flushAll(c, w))
    return -1;
  return readCommand(c, w, want);
}

// BEGIN READ ONLY, the statement, COMMIT in one pipeline with one sync: one round trip.
long runPipeline(PGconn* c, const Options& o, const std::vector<const char*>& vals, bool prepared) {
  const int n = static_cast<int>(vals.size());
  const char* const* v = vals.empty() ? nullptr : vals.data();
  if (PQenterPipelineMode(c) != 1) return -1;
  bool sent = false;
  if (prepared) {
    sent = PQsendQueryPrepared(c, kBeginName, 0, nullptr, nullptr, nullptr, 0) == 1 &&
           PQsendQueryPrepared(c, kStmtName, n, v, nullptr, nullptr, 0) == 1 &&
           PQsendQueryPrepared(c, kCommitName, 0, nullptr, nullptr, nullptr, 0) == 1;
  } else {
    sent = PQsendQueryParams(c, "BEGIN READ ONLY", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
           PQsendQueryParams(c, o.sql.c_str(), n, nullptr, v, nullptr, nullptr, 0) == 1 &&
           PQsendQueryParams(c, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
  }
  sent = sent && PQpipelineSync(c) == 1 && flushAll(c, o.wait);
  long rows = -1;
  if (sent && readCommand(c, o.wait, PGRES_COMMAND_OK) >= 0) {
    // In pipeline mode single-row mode applies to the command whose results come next: now.
    if (prepared && PQsetSingleRowMode(c) != 1) return -1;
    rows = readCommand(c, o.wait, PGRES_TUPLES_OK);
    if (rows >= 0 && readCommand(c, o.wait, PGRES_COMMAND_OK) < 0) rows = -1;
    if (rows >= 0) {
      const ResultPtr sync = nextResult(c, o.wait);
      if (sync == nullptr || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) rows = -1;
    }
  }
  if (PQexitPipelineMode(c) != 1) rows = -1;
  return rows;
}

// One call of `shape`: the statement's row count, or -1 when anything failed.
long runOnce(PGconn* c, const Options& o, const std::vector<const char*>& vals,
             const std::string& shape) {
  if (shape == "bare") return execOne(c, o.wait, o.sql.c_str(), vals, PGRES_TUPLES_OK);
  if (shape == "txn") {
    if (execOne(c, o.wait, "BEGIN READ ONLY", {}, PGRES_COMMAND_OK) < 0) return -1;
    const long rows = execOne(c, o.wait, o.sql.c_str(), vals, PGRES_TUPLES_OK);
    if (execOne(c, o.wait, "COMMIT", {}, PGRES_COMMAND_OK) < 0) return -1;
    return rows;
  }
  return runPipeline(c, o, vals, shape == "prepared");
}

bool prepareAll(PGconn* c, const Options& o) {
  const int n = static_cast<int>(o.params.size());
  auto prep = [&](const char* name, const char* sql, int nparams) {
    const ResultPtr r(PQprepare(c, name, sql, nparams, nullptr));
    return rowsOf(r.get(), PGRES_COMMAND_OK) >= 0;
  };
  return prep(kBeginName, "BEGIN READ ONLY", 0) && prep(kStmtName, o.sql.c_str(), n) &&
         prep(kCommitName, "COMMIT", 0);
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--busy-wait") {
      o.wait = Wait::Busy;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    const std::string v = argv[++i];
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
    else if (a == "--expect-rows")
      o.expect_rows = std::stol(v);
    else
      throw std::invalid_argument("unknown option " + a);
  }
  if (o.shapes.empty()) o.shapes = {"bare", "txn", "pipeline", "prepared"};
  for (const auto& s : o.shapes) {
    if (s != "bare" && s != "txn" && s != "pipeline" && s != "prepared")
      throw std::invalid_argument("unknown shape " + s);
  }
  return o;
}

using mcpdb::bench::summarize;

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parseArgs(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "pgfloor: " << e.what() << "\n";
    return 2;
  }
  const char* dsn = std::getenv("POSTGRES_DSN");
  if (o.sql.empty() || dsn == nullptr || o.threads < 1 || o.threads > 256 || o.requests < 1) {
    std::cerr << "pgfloor: needs --sql and $POSTGRES_DSN\n";
    return 2;
  }
  const bool busy = o.wait == Wait::Busy;
  json out{{"threads", o.threads}, {"wait", busy ? "busy" : "block"}, {"shapes", json::object()}};
  for (const auto& shape : o.shapes) {
    std::vector<ConnPtr> conns;
    for (int t = 0; t < o.threads; ++t) {
      ConnPtr c(PQconnectdb(dsn));
      if (PQstatus(c.get()) != CONNECTION_OK) {
        std::cerr << "pgfloor: connection failed\n";  // the message may hold the DSN: not printed
        return 1;
      }
      if (shape == "prepared" && !prepareAll(c.get(), o)) return 1;
      if (busy && PQsetnonblocking(c.get(), 1) != 0) {
        std::cerr << "pgfloor: could not make the connection non-blocking\n";
        return 1;
      }
      conns.push_back(std::move(c));
    }
    std::vector<const char*> vals;
    for (const auto& p : o.params) vals.push_back(p.c_str());
    std::vector<long long> all;
    std::mutex mu;
    bool failed = false;
    long rows_seen = -1;
    const long per_thread = std::max(1L, o.requests / o.threads);
    const auto limit =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.max_seconds));
    // The clock starts once every thread has warmed up, so throughput counts timed calls only.
    Clock::time_point m0;
    Clock::time_point stop;
    std::barrier warmed(o.threads, [&]() noexcept {
      m0 = Clock::now();
      stop = m0 + limit;
    });
    // A call that fails or returns an unexpected row count ends this thread's run.
    auto good = [&](long rows) {
      if (rows >= 0 && (o.expect_rows < 0 || rows == o.expect_rows)) return true;
      std::lock_guard<std::mutex> lock(mu);
      if (!failed && rows >= 0)
        std::cerr << "pgfloor: " << shape << " returned " << rows << " row(s), expected "
                  << o.expect_rows << "\n";
      failed = true;
      return false;
    };
    auto work = [&](PGconn* c) {
      long rows = -1;
      bool fine = true;
      for (long i = 0; fine && i < o.warmup / o.threads; ++i)
        fine = good(rows = runOnce(c, o, vals, shape));
      warmed.arrive_and_wait();
      if (!fine) return;
      std::vector<long long> lat;
      lat.reserve(static_cast<std::size_t>(std::min(per_thread, 1L << 16)));
      for (long i = 0; i < per_thread && Clock::now() < stop; ++i) {
        const auto s = Clock::now();
        rows = runOnce(c, o, vals, shape);
        const auto e = Clock::now();
        if (!good(rows)) break;
        lat.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(e - s).count());
      }
      std::lock_guard<std::mutex> lock(mu);
      all.insert(all.end(), lat.begin(), lat.end());
      if (rows >= 0) rows_seen = rows;
    };
    std::vector<std::thread> threads;
    for (auto& c : conns) threads.emplace_back(work, c.get());
    for (auto& t : threads) t.join();
    const double wall = std::chrono::duration<double>(Clock::now() - m0).count();
    conns.clear();
    const std::size_t n = all.size();
    out["shapes"][busy ? shape + "_busy" : shape] = {
        {"latency_us", summarize(all)},
        {"throughput_rps", wall > 0 ? static_cast<double>(n) / wall : 0.0},
        {"seconds", wall},
        {"rows", rows_seen},
        {"wait", busy ? "busy" : "block"},
        {"single_row", shape == "prepared"},
        {"failed", failed}};
    if (failed) {
      std::cout << out.dump() << "\n";
      return 1;
    }
  }
  std::cout << out.dump() << "\n";
  return 0;
}
