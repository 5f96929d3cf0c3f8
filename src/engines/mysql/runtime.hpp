#pragma once
// The MySQL engine at run time: a Runtime per source (made through the engine kit's PerSource),
// each with its connection pool, opened lazily (the first call connects; registering tools never
// does), and the call path of a query tool:
// arguments -> typed parameters -> a pooled connection -> Connection::run (prepared statement in
// START TRANSACTION READ ONLY under the call's time limit, caps while fetching) -> the result
// envelope shared with the Postgres tools (columns, rows, row_count, truncated, note).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"
#include "engines/mysql/config.hpp"
#include "engines/engine.hpp"
#include "engines/mysql/catalog.hpp"
#include "engines/mysql/connection.hpp"
#include "engines/mysql/guard.hpp"
#include "engines/mysql/source_cap.hpp"
#include "engines/kit/module.hpp"
#include "protocol/tool.hpp"

namespace mcpdb::mysql {

struct PoolStats {
  std::size_t open = 0;
  std::size_t in_use = 0;
  std::size_t max = 0;
};

// The connections of one source: at most `size`, reused between calls. A connection comes back
// from its call with the session used (connection.hpp) and is idle again only once reset: by the
// pool's cleaner thread, after the call's answer was handed back, or by the thread giving it back
// when the cleaner is already busy (load: throughput before latency). A connection that failed,
// or whose reset failed, is closed, never reused; at shutdown the ones still waiting are closed.
class SourcePool {
 public:
  SourcePool(Source source, std::uint32_t size, Env env);
  ~SourcePool();
  SourcePool(const SourcePool&) = delete;
  SourcePool& operator=(const SourcePool&) = delete;

  class Lease {
   public:
    Lease(SourcePool* pool, std::unique_ptr<Connection> conn)
        : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    Connection& conn() { return *conn_; }

   private:
    SourcePool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  // A reset connection by `deadline` (opening one when none is idle and the pool is not full);
  // ResourceExhausted when the pool stays full, Unavailable when the server cannot be reached,
  // Cancelled when `stop` is requested while waiting.
  Result<Lease> acquire(std::chrono::steady_clock::time_point deadline,
                        const std::stop_token& stop);
  PoolStats stats() const;
  const Source& source() const { return source_; }
  // The DSN's database (the schema of unqualified names), known once a connection was opened.
  std::string database() const;

 private:
  void giveBack(std::unique_ptr<Connection> conn);
  Result<std::unique_ptr<Connection>> openOne();
  void cleanLoop(const std::stop_token& stop);
  // Back in idle_ when reset (true) or closed; under mu_.
  void settle(std::unique_ptr<Connection>& conn, bool reset);

  Source source_;
  std::size_t size_;
  Env env_;
  TokenSource iam_token_;  // RDS IAM tokens, used when the source's DSN asks for IAM
  mutable std::mutex mu_;
  std::condition_variable_any freed_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::unique_ptr<Connection> dirty_;  // given back, for the cleaner to reset
  std::condition_variable_any dirtied_;
  bool cleaning_ = false;  // the cleaner is resetting a connection
  bool closing_ = false;   // the pool is being destroyed: nothing goes back to idle_
  std::size_t open_ = 0;   // idle, leased, and given back but not yet reset
  std::size_t in_use_ = 0;
  std::string database_;
  std::jthread cleaner_;  // started with the first give-back; last, so it stops first
};

class Runtime {
 public:
  // Serves one source, `source` (one of `settings.sources`), and the tools that read it: its
  // pool, its server's counters, the vetting and byte-cap caches of its tools. A source that
  // cannot connect fails only its own tools, with errors that name it.
  Runtime(Settings settings, Source source, Env env);

  // Runs a query tool of this source; never throws. Errors are safe to show (no value, no
  // credential). Sets ctx.audit.source before anything can fail, and ctx.audit.truncated when a
  // cap cut the rows.
  Result<protocol::ToolOutput> callQuery(const QueryTool& tool, const Json& arguments,
                                         protocol::CallContext& ctx);
  // The shape of `tool`'s statement (result columns, parameter count) on its source, prepared but
  // never executed, after the same vetting of stored functions and views as a call: a refused
  // tool gives PermissionDenied, not a description. Never throws.
  Result<StatementShape> describeTool(const QueryTool& tool, protocol::CallContext& ctx);
  // The stored functions and views `tool` reaches, vetted on the live server (routines.hpp):
  // OK, or PermissionDenied whose message names nothing (the agent reads it) and whose detail
  // says what was refused and why (the operator's). A call compares the server's DDL and
  // privilege counters (readCatalogEpoch, one short round trip, read at most once per
  // kEpochMaxAge per source, so that a busy source pays it on a few calls only) with the
  // verdict's: unchanged, it holds; definitions counted, the server's digest of everything the
  // verdict looked up is compared (fingerprintObjects) and a difference, or any privilege
  // change, is judged again on this call. At most kVetInterval old in any case (a backstop for
  // what no counter shows).
  Status vet(const QueryTool& tool, Connection& conn);
  // doctor: the principal of this source (SHOW GRANTS, roles).
  std::vector<engines::Finding> checkPrivileges(const std::stop_token& stop);
  // doctor: `tool` (one of this source's) can run: vetted now, its statement prepared.
  engines::Finding checkTool(const QueryTool& tool, const std::stop_token& stop);

  // Readiness (EngineModule::probes): kit::kProbeStatement, run as a call runs a statement (READ
  // ONLY, under a time limit that ends by `deadline`, cancelled on `stop`), on a connection of
  // this source's pool that the probe waits for only briefly (kit::probeSlotDeadline).
  Status probe(std::chrono::steady_clock::time_point deadline, const std::stop_token& stop);

  const Settings& settings() const { return settings_; }
  const Source& source() const { return pool_.source(); }
  PoolStats stats() const { return pool_.stats(); }
  SourcePool& pool() { return pool_; }

  static constexpr std::chrono::seconds kVetInterval{60};
  // How long a source's counters, once read, stand for the server's: a definition changed is
  // judged by every call that starts later than this after the change.
  static constexpr std::chrono::milliseconds kEpochMaxAge{50};

 private:
  // A connection of the source whose stored functions and views passed vet() for `tool`, with the
  // call's limits (the tool's narrowed by the call's) and the client layer's form of them.
  struct ToolLease {
    SourcePool::Lease lease;
    Limits limits;
    CallLimits call_limits;
  };
  Result<ToolLease> leaseFor(const QueryTool& tool, protocol::CallContext& ctx);
  // The tool's statement under the byte cap at the source (source_cap.hpp), run on the leased
  // connection: wrapped for the call's caps when a column may exceed the byte cap, described
  // again when the wrapper no longer fits it, run as written when it cannot be wrapped.
  Result<QueryResult> runCapped(const QueryTool& tool, const std::vector<Param>& params,
                                ToolLease& held, const std::stop_token& stop);
  // The wrapper for the call's caps from the statement's columns as last described (while the
  // source's DDL counters have not moved since), or described now on `conn` (`fresh`: in any
  // case) and then *described is set. Null: the statement runs as written.
  Result<std::shared_ptr<const CappedStatement>> cappedStatement(const QueryTool& tool,
                                                                 Connection& conn,
                                                                 const CallLimits& limits,
                                                                 bool fresh, bool* described);
  void markUnwrappable(const QueryTool& tool);
  void markUnwrappableLocked(const QueryTool& tool);  // under cap_mu_
  // The source's DDL counters as last read (recentEpoch), if any.
  std::optional<std::string> definitionsEpoch();

  struct Vetted {
    std::chrono::steady_clock::time_point at;
    Status status;
    std::vector<guard::Name> looked_up;  // every candidate name the verdict looked up
    std::set<std::string> fingerprints;  // of every object found among them
    CatalogEpoch epoch;                  // the server's DDL and privilege counters before it
  };
  Settings settings_;
  SourcePool pool_;
  std::mutex vet_mu_;
  std::map<std::string, Vetted> vetted_;  // by tool name
  struct SourceEpoch {
    std::chrono::steady_clock::time_point at;
    CatalogEpoch epoch;
  };
  std::optional<SourceEpoch> epoch_;  // the source's counters, under vet_mu_
  // The byte cap at the source, per tool: the statement's columns as described, while the
  // source's DDL counters (`epoch`) stand, and the wrapper last written from them.
  struct CapShape {
    std::optional<std::string> epoch;
    std::vector<ShapeColumn> columns;
    bool unwrappable = false;  // the server or the guard refused the wrapper
    std::shared_ptr<const CappedStatement> capped;
  };
  std::mutex cap_mu_;
  std::map<std::string, CapShape> caps_;     // by tool name
  std::set<std::string> unwrappable_noted_;  // tools whose unwrapped run was noted on stderr
  // The source's counters, read on `conn` when the last reading is older than kEpochMaxAge.
  Result<CatalogEpoch> recentEpoch(Connection& conn, std::chrono::steady_clock::time_point now);
};

// A Runtime per source, each made on first use (engines/kit): the engine module's runtime.
using Runtimes = engines::kit::PerSource<Runtime>;
// The runtime of a tool's source, resolved when the tool is registered (null: it has none).
using RuntimeOf = std::function<std::shared_ptr<Runtime>(const QueryTool&)>;

// Tool arguments -> the typed parameters of the binary protocol, in declaration order
// (InvalidArgument naming the parameter, never its value).
Result<std::vector<Param>> bindArguments(const std::vector<sql::ParamSpec>& params,
                                         const Json& arguments);

// The structuredContent of a query result: {columns, rows (objects by column name), row_count,
// truncated, note?, cut?} (cut: the values the byte cap left in the database, as PostgreSQL's).
Json resultEnvelope(QueryResult& result, const Limits& limits);
// Whether the result can carry text from the database (what fence: auto fences): a column that can
// hold free text, or a key that is not the statement's own text (sql/result_keys.hpp).
bool carriesDatabaseText(std::string_view statement, const std::vector<Column>& columns);

}  // namespace mcpdb::mysql
