#pragma once
// A small libpq connection pool: at most `size` connections, opened lazily (non-blocking connect
// bounded by connect_timeout, the call's deadline and its stop token), checked on open (read-only
// session, UTF8, standard_conforming_strings) and on return (healthy and idle, else dropped).

#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/call_waits.hpp"
#include "common/handle.hpp"
#include "common/result.hpp"
#include "engines/postgres/conninfo.hpp"
#include "engines/postgres/config.hpp"
#include "engines/postgres/type_map.hpp"

namespace mcpdb::postgres {

using Clock = std::chrono::steady_clock;
using PgConnPtr = Owned<PGconn, PQfinish>;
using PgCancelPtr = Owned<PGcancel, PQfreeCancel>;
using PgResultPtr = Owned<PGresult, PQclear>;

// The statements one connection has prepared on the server, by text. Names are never reused on
// a connection (a counter), so a Parse whose outcome was not seen cannot collide with a later one.
struct PreparedStatements {
  // Bounded: the configured statements are a few dozen; beyond this, statements run unnamed.
  static constexpr std::size_t kMax = 256;
  std::unordered_map<std::string, std::string> names;  // statement text -> statement name
  std::uint64_t next = 0;
};

// One open connection and its cancel handle (PQcancel is safe from any thread).
struct Connection {
  PgConnPtr conn;
  PgCancelPtr cancel;
  Clock::time_point opened;
  PreparedStatements prepared;
};

// Opens one connection with `params`, bounded by `deadline` and `stop`; checks the session
// settings.
Result<std::unique_ptr<Connection>> openConnection(const ConnParams& params,
                                                   Clock::time_point deadline,
                                                   const std::stop_token& stop);

// A consistent snapshot of the pool's counters (metrics).
struct PoolStats {
  std::size_t open = 0;    // connections open or being opened
  std::size_t in_use = 0;  // of those, leased to a call (or being opened for one)
  std::size_t max = 0;     // the configured size
};

class Pool {
 public:
  using ParamsFn = std::function<Result<ConnParams>()>;

  Pool(PoolSettings settings, ParamsFn params);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<Connection> c, bool fresh)
        : pool_(pool), c_(std::move(c)), fresh_(fresh) {}
    Lease(Lease&& o) noexcept
        : pool_(o.pool_), c_(std::move(o.c_)), fresh_(o.fresh_), broken_(o.broken_) {
      o.pool_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    PGconn* conn() const { return c_->conn.get(); }
    PGcancel* cancel() const { return c_->cancel.get(); }
    PreparedStatements* prepared() const { return &c_->prepared; }
    // True when the connection was opened for this lease (not reused from the pool).
    bool fresh() const { return fresh_; }
    void markBroken() { broken_ = true; }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> c_;
    bool fresh_;
    bool broken_ = false;
  };

  // A healthy idle connection, or a new one when fewer than `size` are open; waits for a free one
  // until the deadline (ResourceExhausted), honours `stop` (Cancelled). With `waits` (may be
  // null) that suspend, it sleeps through them until a connection is given back; otherwise it
  // hands them on before it sleeps, and always before it connects (common/call_waits.hpp).
  Result<Lease> acquire(Clock::time_point deadline, const std::stop_token& stop,
                        CallWaits* waits = nullptr);
  // Closes every idle connection (after one was found dead: the server may have restarted).
  void dropIdle();
  // Extension type OIDs (pgvector), known after the first connection.
  TypeInfo types() const;
  std::size_t openCount() const;
  // How many connections this pool has ever opened (a new one may reach a different server, e.g.
  // after a failover: the read-only proof is made again then).
  std::uint64_t connectionsOpened() const { return opened_total_.load(); }
  PoolStats stats() const;
  const PoolSettings& settings() const { return settings_; }

 private:
  void release(std::unique_ptr<Connection> c, bool reusable);
  void discoverTypes(PGconn* conn);
  void wakeParked();  // under mu_

  PoolSettings settings_;
  ParamsFn params_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::size_t open_ = 0;
  // Calls sleeping through their runner (acquire), and the eventfd that wakes them.
  std::size_t parked_ = 0;
  int wake_fd_ = -1;
  std::atomic<std::uint64_t> opened_total_{0};
  std::atomic<bool> types_known_{false};
  std::atomic<Oid> vector_oid_{0};
  std::atomic<Oid> halfvec_oid_{0};
};

}  // namespace mcpdb::postgres
