#include "engines/postgres/pool.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "engines/postgres/sqlstate.hpp"

namespace mcpdb::postgres {
namespace {

// "host:port" of the server being connected to (for operator-facing errors; no credentials).
std::string serverAddress(PGconn* conn) {
  const char* host = PQhost(conn);
  const char* port = PQport(conn);
  std::string h = host != nullptr && *host != '\0' ? host : "localhost";
  if (h.find(':') != std::string::npos && h.front() != '/') h = "[" + h + "]";
  return h + ":" + (port != nullptr && *port != '\0' ? port : "5432");
}

bool parameterIs(PGconn* conn, const char* name, const char* expected, bool missing_ok) {
  const char* v = PQparameterStatus(conn, name);
  if (v == nullptr) return missing_ok;
  return std::strcmp(v, expected) == 0;
}

}  // namespace

Result<std::unique_ptr<Connection>> openConnection(const ConnParams& params,
                                                   Clock::time_point deadline,
                                                   const std::stop_token& stop) {
  std::vector<const char*> keys;
  std::vector<const char*> values;
  for (std::size_t i = 0; i < params.keys.size(); ++i) {
    keys.push_back(params.keys[i].c_str());
    values.push_back(params.values[i].c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PgConnPtr conn(PQconnectStartParams(keys.data(), values.data(), /*expand_dbname=*/0));
  // libpq returns no connection when out of memory; the server binary's forwarder also when
  // libpq itself cannot be loaded (lazy_pq.cpp).
  if (!conn) {
    return makeError(Code::Unavailable,
                     "cannot connect to PostgreSQL: libpq returned no connection (out of memory, "
                     "or libpq could not be loaded)");
  }
  const std::string where = serverAddress(conn.get());
  if (PQstatus(conn.get()) == CONNECTION_BAD)
    return connectError(PQerrorMessage(conn.get()), where);

  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (st != PGRES_POLLING_OK) {
    if (st == PGRES_POLLING_FAILED) return connectError(PQerrorMessage(conn.get()), where);
    if (stop.stop_requested())
      return makeError(Code::Cancelled, "cancelled while connecting to PostgreSQL");
    if (Clock::now() >= deadline) {
      return Error{Code::Unavailable, "cannot connect to PostgreSQL: connecting timed out",
                   "at " + where + ": no answer within postgres.pool.connect_timeout_ms"};
    }
    pollfd pfd{PQsocket(conn.get()),
               static_cast<short>(st == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0};
    if (pfd.fd < 0) return connectError(PQerrorMessage(conn.get()), where);
    const int n = ::poll(&pfd, 1, pollTimeout(deadline, 100));
    if (n < 0 && errno != EINTR)
      return makeError(Code::Unavailable, "cannot connect to PostgreSQL: poll failed");
    if (n > 0) st = PQconnectPoll(conn.get());
  }
  // The session must be what the guardrail and the type mapping assume, and read-only by default.
  // (default_transaction_read_only is reported by servers >= 14; older ones got it via options.)
  if (!parameterIs(conn.get(), "default_transaction_read_only", "on", true)) {
    return makeError(Code::FailedPrecondition,
                     "the PostgreSQL session is not read-only by default; refusing it");
  }
  if (!parameterIs(conn.get(), "standard_conforming_strings", "on", false) ||
      !parameterIs(conn.get(), "client_encoding", "UTF8", false)) {
    return makeError(
        Code::FailedPrecondition,
        "the PostgreSQL session does not use standard_conforming_strings=on and UTF8; refusing it");
  }
  auto c = std::make_unique<Connection>();
  c->cancel.reset(PQgetCancel(conn.get()));
  if (!c->cancel)
    return makeError(Code::Internal, "cannot create a cancel handle for the connection");
  c->conn = std::move(conn);
  c->opened = Clock::now();
  return c;
}

Pool::Pool(PoolSettings settings, ParamsFn params)
    : settings_(std::move(settings)),
      params_(std::move(params)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE)) {
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

void Pool::wakeParked() {
  // One token per connection given back while calls sleep on the descriptor (semaphore mode:
  // each woken call takes one; one that finds nothing free sleeps again).
  if (parked_ == 0) return;
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.clear();
  }
  ::close(wake_fd_);
}

Pool::Lease::~Lease() {
  if (pool_ == nullptr || !c_) return;
  PGconn* conn = c_->conn.get();
  const bool reusable =
      !broken_ && PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) == PQTRANS_IDLE;
  pool_->release(std::move(c_), reusable);
}

void Pool::release(std::unique_ptr<Connection> c, bool reusable) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reusable) {
      idle_.push_back(std::move(c));
    } else {
      --open_;
    }
    wakeParked();
  }
  cv_.notify_one();
  c.reset();  // a dropped connection is closed outside the lock
}

void Pool::dropIdle() {
  std::vector<std::unique_ptr<Connection>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(idle_);
    open_ -= dropped.size();
    wakeParked();
  }
  cv_.notify_all();
}

std::size_t Pool::openCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

PoolStats Pool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return PoolStats{open_, open_ - idle_.size(), settings_.size};
}

TypeInfo Pool::types() const {
  return TypeInfo{vector_oid_.load(), halfvec_oid_.load()};
}

void Pool::discoverTypes(PGconn* conn) {
  // A fixed catalog query on a fresh, idle, read-only session (not an allowlisted template).
  static const char* kSql =
      "SELECT t.oid::int8, t.typname::text FROM pg_catalog.pg_type t JOIN pg_catalog.pg_extension "
      "e "
      "ON e.extnamespace = t.typnamespace WHERE e.extname = 'vector' AND t.typname IN ('vector', "
      "'halfvec')";
  PgResultPtr r(PQexecParams(conn, kSql, 0, nullptr, nullptr, nullptr, nullptr, 0));
  if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK) return;
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    const Oid o = static_cast<Oid>(std::strtoul(PQgetvalue(r.get(), i, 0), nullptr, 10));
    if (std::strcmp(PQgetvalue(r.get(), i, 1), "vector") == 0) vector_oid_ = o;
    if (std::strcmp(PQgetvalue(r.get(), i, 1), "halfvec") == 0) halfvec_oid_ = o;
  }
  types_known_ = true;
}

Result<Pool::Lease> Pool::acquire(Clock::time_point deadline, const std::stop_token& stop,
                                  CallWaits* waits) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (stop.stop_requested())
        return makeError(Code::Cancelled, "cancelled while waiting for a connection");
      if (!idle_.empty()) {
        auto c = std::move(idle_.back());
        idle_.pop_back();
        lock.unlock();
        if (PQstatus(c->conn.get()) == CONNECTION_OK) return Lease(this, std::move(c), false);
        release(std::move(c), false);
        lock.lock();
        continue;
      }
      if (open_ < settings_.size) {
        ++open_;
        break;
      }
      if (Clock::now() >= deadline) {
        return makeError(Code::ResourceExhausted,
                         "all " + std::to_string(settings_.size) +
                             " PostgreSQL connections are busy; retry shortly");
      }
      // Wake at least every 100 ms to look at the stop token.
      const Clock::time_point until =
          std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
      if (waits != nullptr && waits->suspends()) {
        // The call sleeps through its runner, which runs other calls meanwhile (one of them
        // may be the one to give a connection back): on the wake descriptor, which release()
        // makes readable while any call sleeps so.
        ++parked_;
        lock.unlock();
        (void)waits->wait(wake_fd_, POLLIN, pollTimeout(until, 100));
        std::uint64_t token = 0;
        (void)!::read(wake_fd_, &token, sizeof token);  // one token (or none: EAGAIN)
        lock.lock();
        --parked_;
        continue;
      }
      // About to sleep on the condition variable: the call hands its runner's other work on
      // first (common/call_waits.hpp; the hook may take locks of its own).
      if (waits != nullptr && !waits->handedOn()) {
        lock.unlock();
        waits->handOn();
        lock.lock();
        continue;
      }
      cv_.wait_until(lock, until);
    }
  }
  // A slot is reserved: connect outside the lock. Connecting (and an IAM token) waits in ways
  // that do not watch the call's descriptors: hand on first.
  handOn(waits);
  auto params = params_();
  if (!params) {
    release(nullptr, false);
    return params.error();
  }
  const Clock::time_point connect_deadline =
      std::min(deadline, Clock::now() + settings_.connect_timeout);
  auto c = openConnection(*params, connect_deadline, stop);
  if (!c) {
    release(nullptr, false);
    // The call's own deadline, not connect_timeout_ms, ended the wait: the call timed out (a
    // slow first connection under a short tool timeout is not the database being down).
    if (c.error().code == Code::Unavailable && deadline <= connect_deadline &&
        Clock::now() >= deadline) {
      return Error{Code::TimedOut, "the call's timeout passed while connecting to PostgreSQL",
                   operatorText(c.error())};
    }
    return c.error();
  }
  if (!types_known_) discoverTypes((*c)->conn.get());
  opened_total_.fetch_add(1);
  return Lease(this, std::move(*c), true);
}

}  // namespace mcpdb::postgres
