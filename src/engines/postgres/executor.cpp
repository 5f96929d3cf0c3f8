#include "engines/postgres/executor.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <optional>
#include <cerrno>
#include <mutex>

#include "common/input_watch.hpp"
#include "common/row_budget.hpp"
#include "engines/postgres/sqlstate.hpp"

// Pipeline mode (one round trip per call) is in libpq 14 and later; the server side needs nothing
// beyond protocol 3, so there is no runtime fallback to keep.
#ifndef LIBPQ_HAS_PIPELINING
#error "mcp-dbserver needs libpq 14 or newer (pipeline mode)"
#endif

namespace mcpdb::postgres {
namespace {

// A row's JSON is at least its text form's length over this (see the fetch loop).
constexpr std::uint64_t kRawPerJsonByte = 2;

// How long a cancelled statement may take to stop before its connection is dropped instead. A
// loaded server (seen under the whole test suite on 2 cores) once took more than 2 s to end a
// statement streaming rows after a cap's cancel; the connection is only given up after this.
constexpr std::chrono::milliseconds kCancelGrace{5000};
// How often the wait loop looks at the stop token and the deadline (the stop callback also
// cancels at once; this covers a stop that lands between two statements).
constexpr int kPollSliceMs = 50;

// Releases every session-level advisory lock the session holds (they outlive ROLLBACK).
// Schema-qualified so that no function earlier on the search_path can stand in for it.
constexpr const char* kUnlockAll = "SELECT pg_catalog.pg_advisory_unlock_all()";
// A cancel request that reaches the backend between two protocol messages (e.g. after Parse,
// before Execute) is ignored by the server; until the statement stops it is sent again this often.
constexpr std::chrono::milliseconds kCancelRepeat{200};

enum class Why { None, Stop, Deadline, Cap };

// Waits for the results of the commands in flight, honouring stop and deadline by PQcancel.
class Waiter {
 public:
  Waiter(PGconn* conn, PGcancel* cancel, const std::stop_token& stop, Clock::time_point deadline,
         ExecOutcome& outcome)
      : conn_(conn), cancel_(cancel), stop_(stop), deadline_(deadline), outcome_(outcome) {}

  // The next result, or null when the command is complete (or the connection is lost / stuck:
  // then failed() is true).
  PgResultPtr next() {
    if (failed_) return nullptr;  // given up: nothing more is read from this connection
    if (PQstatus(conn_) == CONNECTION_BAD) {
      lost();
      return nullptr;
    }
    while (PQisBusy(conn_) != 0) {
      if (cleanup_) {
        // COMMIT/ROLLBACK are not cancelled; they get a short grace, then the connection is
        // dropped.
        if (Clock::now() >= deadline_) {
          failed_ = true;
          outcome_.broken = true;
          return nullptr;
        }
      } else if (why_ == Why::None) {
        if (stop_.stop_requested()) {
          cancel(Why::Stop);
        } else if (Clock::now() >= deadline_) {
          cancel(Why::Deadline);
        }
      }
      int timeout = kPollSliceMs;
      if (cleanup_) {
        timeout = millisUntil(deadline_);
      } else if (why_ != Why::None) {
        if (Clock::now() >= cancel_deadline_) {
          // The server did not react to the cancel in time: give the connection up.
          failed_ = true;
          outcome_.broken = true;
          return nullptr;
        }
        if (Clock::now() - last_cancel_ >= kCancelRepeat) {
          input_watch::release();  // PQcancel connects to the server: a wait it cannot watch
          char err[256];
          (void)PQcancel(cancel_, err, sizeof err);
          last_cancel_ = Clock::now();
        }
        timeout = millisUntil(cancel_deadline_);
      } else {
        timeout = std::min(timeout, millisUntil(deadline_));
      }
      // The server's socket, and while this thread holds a stdio reader's role, the reader's
      // descriptors: input waiting there hands the role on (common/input_watch.hpp).
      pollfd pfds[3] = {{PQsocket(conn_), POLLIN, 0}, {-1, POLLIN, 0}, {-1, POLLIN, 0}};
      if (pfds[0].fd < 0) {
        lost();
        return nullptr;
      }
      const input_watch::Watch* watch = input_watch::current();
      if (watch != nullptr) {
        pfds[1].fd = watch->fds[0];
        pfds[2].fd = watch->fds[1];
      }
      const int n = ::poll(pfds, watch != nullptr ? 3 : 1, timeout);
      if (n < 0 && errno != EINTR) {
        lost();
        return nullptr;
      }
      if (watch != nullptr && (pfds[1].revents | pfds[2].revents) != 0) input_watch::release();
      if (n > 0 && pfds[0].revents != 0 && PQconsumeInput(conn_) == 0) {
        lost();
        // libpq has an error result ready for a lost connection; hand it over if it does.
        if (PQisBusy(conn_) == 0) return PgResultPtr(PQgetResult(conn_));
        return nullptr;
      }
    }
    return PgResultPtr(PQgetResult(conn_));
  }

  // Sends a cancel request for the statement in flight (once).
  void cancel(Why why) {
    if (why_ != Why::None) return;
    why_ = why;
    outcome_.cancel_sent = true;
    cancel_deadline_ = Clock::now() + kCancelGrace;
    input_watch::release();  // PQcancel connects to the server: a wait it cannot watch
    char err[256];
    (void)PQcancel(cancel_, err, sizeof err);  // err may name the host: not used
    last_cancel_ = Clock::now();
  }

  Why why() const { return why_; }
  bool failed() const { return failed_; }
  bool connectionLost() const { return lost_; }
  // From now on only COMMIT/ROLLBACK run: no cancelling, a short grace of their own.
  void startCleanup() {
    cleanup_ = true;
    deadline_ = Clock::now() + kCancelGrace;
  }

 private:
  static int millisUntil(Clock::time_point t) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
    return ms <= 0 ? 0 : ms > kPollSliceMs ? kPollSliceMs : static_cast<int>(ms);
  }
  void lost() {
    failed_ = true;
    lost_ = true;
    outcome_.broken = true;
  }

  PGconn* conn_;
  PGcancel* cancel_;
  const std::stop_token& stop_;
  Clock::time_point deadline_;
  Clock::time_point cancel_deadline_{};
  Clock::time_point last_cancel_{};
  ExecOutcome& outcome_;
  Why why_ = Why::None;
  bool cleanup_ = false;
  bool failed_ = false;
  bool lost_ = false;
};

std::string sqlstateOf(const PGresult* r) {
  const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  return s != nullptr ? s : "";
}

Error lostConnection() {
  return makeError(Code::Unavailable,
                   "lost the connection to PostgreSQL (the server may have restarted); retry");
}

// Runs a fixed command ("ROLLBACK", kUnlockAll) through the extended protocol and waits for it.
Status control(PGconn* conn, const char* sql, Waiter& w, ExecStatusType expect = PGRES_COMMAND_OK) {
  if (PQsendQueryParams(conn, sql, 0, nullptr, nullptr, nullptr, nullptr, 0) == 0)
    return lostConnection();
  Status st;
  while (auto r = w.next()) {
    if (PQresultStatus(r.get()) != expect && st.ok()) {
      st = PQstatus(conn) == CONNECTION_BAD ? lostConnection()
                                            : errorFromSqlstate(sqlstateOf(r.get()));
    }
  }
  if (w.failed() && st.ok())
    st = w.connectionLost() ? lostConnection()
                            : makeError(Code::TimedOut, "the database did not answer in time");
  return st;
}

Error stopError(Why why, const Limits& limits) {
  if (why == Why::Stop)
    return makeError(Code::Cancelled,
                     "the call was cancelled; the statement was stopped on the server");
  return makeError(Code::TimedOut, "the statement exceeded the tool's timeout of " +
                                       std::to_string(limits.timeout.count()) +
                                       " ms and was cancelled on the server");
}

// A Parse queued ahead of a command (the first time a connection runs that text): its result
// comes before the command's own, and only a successful one records the name.
struct PendingParse {
  bool sent = false;
  std::string text;
  std::string name;
};

// Queues one command of the batch. With a cache: by the name this connection prepared the text
// under, or (the first time) Parse under a new name and then execute it; without one (or with a
// full cache), unnamed as before. False when libpq could not queue it.
bool sendCommand(PGconn* conn, PreparedStatements* cache, const std::string& text, int n,
                 const Oid* types, const char* const* values, PendingParse& pending) {
  if (cache != nullptr) {
    if (auto it = cache->names.find(text); it != cache->names.end())
      return PQsendQueryPrepared(conn, it->second.c_str(), n, values, nullptr, nullptr, 0) == 1;
    if (cache->names.size() < PreparedStatements::kMax) {
      pending.sent = true;
      pending.text = text;
      pending.name = "mcpdb_" + std::to_string(cache->next++);
      return PQsendPrepare(conn, pending.name.c_str(), text.c_str(), n, types) == 1 &&
             PQsendQueryPrepared(conn, pending.name.c_str(), n, values, nullptr, nullptr, 0) == 1;
    }
  }
  return PQsendQueryParams(conn, text.c_str(), n, types, values, nullptr, nullptr, 0) == 1;
}

// A prepared statement whose cached plan the server refused to reuse because the result's shape
// changed under it (e.g. a column added to a table read with SELECT *). PostgreSQL reports it as
// feature_not_supported from RevalidateCachedQuery; the source function tells it from other 0A000
// errors without depending on the message's language.
bool planShapeChanged(const PGresult* r) {
  const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  const char* where = PQresultErrorField(r, PG_DIAG_SOURCE_FUNCTION);
  return state != nullptr && where != nullptr && std::string_view(state) == "0A000" &&
         std::string_view(where) == "RevalidateCachedQuery";
}

// The JSON key of a result column: its name, suffixed when an earlier column has the same key
// (duplicate names would overwrite each other in a JSON object).
std::string columnKey(const std::vector<std::string>& keys, const std::string& name) {
  std::string key = name;
  for (int n = 2; std::find(keys.begin(), keys.end(), key) != keys.end(); ++n)
    key = name + "_" + std::to_string(n);
  return key;
}

enum class Idle { Open, Gone, Unasked };

// Whether the server side of an idle pooled connection is still there. A terminated backend (or a
// restarted server) leaves its FATAL message and EOF waiting on the socket; reading them before
// anything is sent is what makes "nothing ran, retry on a new connection" certain. Usually one
// poll() that does not wait. Unasked: something arrived unasked on the idle connection (in
// practice the FATAL message of a terminating backend) but no EOF behind it yet.
Idle checkIdle(PGconn* conn) {
  Idle state = Idle::Open;
  // A read returns what is buffered and stops short of the EOF behind it: look again (bounded).
  for (int i = 0; i < 4; ++i) {
    pollfd pfd{PQsocket(conn), POLLIN, 0};
    if (pfd.fd < 0) return Idle::Gone;
    // Nothing (more) waiting. (A poll error: the send will tell.)
    if (::poll(&pfd, 1, 0) <= 0) return state;
    if (PQconsumeInput(conn) == 0) return Idle::Gone;
    (void)PQisBusy(conn);  // parses what arrived (an unexpected message goes to the notice hook)
    if (PQstatus(conn) != CONNECTION_OK) return Idle::Gone;
    state = Idle::Unasked;
  }
  return state;
}

// What every pipelined exchange checks before it sends anything: not cancelled, the deadline not
// passed (`what`: what would have started), the connection alive and idle; how idle it was.
Result<Idle> readyToSend(PGconn* conn, const std::stop_token& stop, Clock::time_point deadline,
                         ExecOutcome& outcome, std::string_view what) {
  if (stop.stop_requested()) return makeError(Code::Cancelled, "the call was cancelled");
  if (Clock::now() >= deadline) {
    return makeError(Code::TimedOut,
                     "the call's deadline passed before " + std::string(what) + " started");
  }
  const Idle idle = PQstatus(conn) == CONNECTION_OK ? checkIdle(conn) : Idle::Gone;
  if (idle == Idle::Gone) {
    outcome.broken = outcome.stale = true;
    return lostConnection();
  }
  return idle;
}

// Cancels the running statement at once when the client cancels (the wait loop would also notice
// within a slice).
class CancelOnStop {
 public:
  CancelOnStop(const std::stop_token& stop, PGcancel* cancel)
      : on_stop_(stop, [cancel] {
          char err[256];
          (void)PQcancel(cancel, err, sizeof err);
        }) {}

 private:
  std::stop_callback<std::function<void()>> on_stop_;
};

// Enters pipeline mode; only refused when the connection is not idle (an unexpected state,
// nothing was sent).
Status enterPipeline(PGconn* conn, ExecOutcome& outcome) {
  if (PQenterPipelineMode(conn) == 1) return {};
  outcome.broken = outcome.stale = true;
  return makeError(Code::Unavailable, "the PostgreSQL connection was not idle; retry");
}

}  // namespace

Result<ExecResult> executeReadOnly(PGconn* conn, PGcancel* cancel, std::string_view sql,
                                   const BoundParams& params, const Limits& limits,
                                   const std::stop_token& stop, Clock::time_point deadline,
                                   const TypeInfo& types, ExecOutcome& outcome,
                                   PreparedStatements* prepared, bool release_locks) {
  const auto ready = readyToSend(conn, stop, deadline, outcome, "the query");
  if (!ready) return ready.error();
  const Idle idle = *ready;
  Waiter w(conn, cancel, stop, deadline, outcome);
  const CancelOnStop on_stop(stop, cancel);

  // One batch, one sync, one round trip: BEGIN READ ONLY, the statement, the release of any
  // session-level advisory lock, ROLLBACK. (The unlock runs inside the transaction: after the
  // ROLLBACK it would start and end a transaction of its own, which costs the server more.) The
  // server runs them in order and skips the rest up to the sync after an error, so the statement
  // never runs outside the read-only transaction. Hygiene: ROLLBACK (not COMMIT) undoes whatever
  // the call did to its session that is transactional (set_config, SET LOCAL, LISTEN, NOTIFY);
  // session-level advisory locks survive ROLLBACK, so they are released too. Nothing of one call is
  // visible to the next call on the connection. DISCARD ALL would also drop the prepared statements
  // the hot path reuses.
  if (auto st = enterPipeline(conn, outcome); !st) return st.error();
  static const std::string kBegin = "BEGIN READ ONLY";
  static const std::string kRollback = "ROLLBACK";
  static const std::string kUnlock = kUnlockAll;
  const std::string text(sql);
  const std::vector<const char*> values = params.pointers();
  std::array<PendingParse, 4> parses;  // BEGIN, the statement, the unlock, ROLLBACK
  const bool sent =
      sendCommand(conn, prepared, kBegin, 0, nullptr, nullptr, parses[0]) &&
      sendCommand(conn, prepared, text, static_cast<int>(params.values.size()), params.types.data(),
                  values.data(), parses[1]) &&
      (!release_locks || sendCommand(conn, prepared, kUnlock, 0, nullptr, nullptr, parses[2])) &&
      sendCommand(conn, prepared, kRollback, 0, nullptr, nullptr, parses[3]) &&
      PQpipelineSync(conn) == 1;  // flushes the batch
  if (!sent) {
    // libpq could not write the batch. When that is because the peer had gone, nothing ran.
    outcome.broken = true;
    outcome.stale = PQstatus(conn) == CONNECTION_BAD;
    return lostConnection();
  }

  std::optional<Error> error;
  bool capped = false;
  bool replan = false;  // a prepared statement's result shape changed: see planShapeChanged
  // A failed command: the first error wins; the cancel we sent for a cap is not an error.
  auto failed = [&](const PGresult* r) {
    replan = replan || planShapeChanged(r);
    const std::string state = sqlstateOf(r);
    if (capped && state == "57014") return;
    if (error) return;
    if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) outcome.server_message = m;
    outcome.sqlstate = state;
    if (PQstatus(conn) == CONNECTION_BAD) {
      error = lostConnection();
    } else if (state == "57014" && (w.why() == Why::Stop || w.why() == Why::Deadline)) {
      error = stopError(w.why(), limits);
    } else if (state == "57014" && stop.stop_requested()) {
      error = stopError(Why::Stop, limits);  // cancelled by the stop callback first
    } else {
      error = errorFromSqlstate(state);
    }
  };
  // The connection can still be read (a lost or stuck one is given up, pipeline and all).
  auto readable = [&] { return !w.failed() && PQstatus(conn) == CONNECTION_OK; };
  // The result of a Parse queued ahead of a command; a successful one is remembered by name.
  auto settleParse = [&](PendingParse& p) {
    if (!p.sent || !readable()) return;
    while (auto r = w.next()) {
      const ExecStatusType st = PQresultStatus(r.get());
      if (st == PGRES_COMMAND_OK) {
        prepared->names.emplace(std::move(p.text), std::move(p.name));
      } else if (st != PGRES_PIPELINE_ABORTED) {
        failed(r.get());
      }
    }
  };

  // 1. BEGIN READ ONLY.
  bool begun = false;  // the server answered BEGIN
  settleParse(parses[0]);
  while (auto r = w.next()) {
    const ExecStatusType st = PQresultStatus(r.get());
    begun = begun || st == PGRES_COMMAND_OK;
    if (st != PGRES_COMMAND_OK && st != PGRES_PIPELINE_ABORTED) failed(r.get());
  }
  if (!begun && idle == Idle::Unasked && PQstatus(conn) == CONNECTION_BAD) {
    // The backend had announced its end before the batch was sent, and answered nothing: it ran
    // nothing, so the caller may retry on a new connection.
    outcome.broken = outcome.stale = true;
    return lostConnection();
  }

  // 2. The statement, fetched row at a time so the caps apply while rows arrive. In pipeline mode
  // single-row mode is chosen for the command whose results come next, i.e. now.
  RowBudget budget(limits);
  ExecResult out;
  std::vector<std::string> keys;
  std::vector<Oid> col_types;
  auto describe = [&](const PGresult* r) {
    if (!keys.empty() || PQnfields(r) == 0) return;
    for (int c = 0; c < PQnfields(r); ++c) {
      std::string key = columnKey(keys, PQfname(r, c));
      keys.push_back(key);
      col_types.push_back(PQftype(r, c));
      out.columns.push_back(Json{{"name", key}, {"type", typeName(PQftype(r, c), types)}});
    }
  };
  settleParse(parses[1]);
  if (readable()) {
    (void)PQsetSingleRowMode(conn);
    while (auto r = w.next()) {
      switch (PQresultStatus(r.get())) {
        case PGRES_SINGLE_TUPLE: {
          describe(r.get());
          if (capped) break;
          // The row's text as libpq holds it bounds its JSON from below: no type's JSON is less
          // than half its text (bytea's hex becomes base64: two thirds), except json with padding
          // whitespace, which is then counted at half its stored length. A row that cannot fit is
          // never converted.
          std::uint64_t raw = 0;
          for (int c = 0; c < static_cast<int>(keys.size()); ++c)
            raw += static_cast<std::uint64_t>(PQgetlength(r.get(), 0, c));
          if (!budget.admits(raw / kRawPerJsonByte)) {
            capped = true;
            w.cancel(Why::Cap);
            break;
          }
          Json row = Json::object();
          for (int c = 0; c < static_cast<int>(keys.size()); ++c) {
            if (PQgetisnull(r.get(), 0, c) != 0) {
              row[keys[c]] = nullptr;
            } else {
              row[keys[c]] = valueToJson(
                  col_types[c],
                  std::string_view(PQgetvalue(r.get(), 0, c),
                                   static_cast<std::size_t>(PQgetlength(r.get(), 0, c))),
                  types);
            }
          }
          if (!budget.add(std::move(row))) {
            // A cap is reached: stop the server producing the rest.
            capped = true;
            w.cancel(Why::Cap);
          }
          break;
        }
        case PGRES_TUPLES_OK: describe(r.get()); break;
        case PGRES_COMMAND_OK:
        case PGRES_PIPELINE_ABORTED: break;  // BEGIN failed: the error is already recorded
        case PGRES_FATAL_ERROR: failed(r.get()); break;
        default:
          if (!error) error = makeError(Code::Internal, "unexpected reply from PostgreSQL");
          break;
      }
    }
  }

  // 3. The unlock and ROLLBACK (both skipped by the server after an error), then the sync. From
  // here on nothing is cancelled; they get a short grace of their own.
  bool synced = false;
  bool unlocked = !release_locks;  // the unlock ran (a late cap-cancel may have stopped it)
  if (readable()) {
    w.startCleanup();
    settleParse(parses[2]);
    while (release_locks) {
      auto r = w.next();
      if (!r) break;
      const ExecStatusType st = PQresultStatus(r.get());
      unlocked = unlocked || st == PGRES_TUPLES_OK;
      if (st != PGRES_TUPLES_OK && st != PGRES_PIPELINE_ABORTED) failed(r.get());
    }
    settleParse(parses[3]);
    while (auto r = w.next()) {
      const ExecStatusType st = PQresultStatus(r.get());
      if (st != PGRES_COMMAND_OK && st != PGRES_PIPELINE_ABORTED) failed(r.get());
    }
    if (readable()) {
      auto r = w.next();
      synced = r && PQresultStatus(r.get()) == PGRES_PIPELINE_SYNC;
    }
  }

  if (w.failed() && !error) {
    error =
        w.connectionLost()
            ? lostConnection()
            : (w.why() == Why::Stop || w.why() == Why::Deadline
                   ? stopError(w.why(), limits)
                   : makeError(Code::TimedOut, "the database did not stop the statement in time"));
  }
  if (!error && PQstatus(conn) == CONNECTION_BAD) error = lostConnection();
  if (!error && !synced) error = makeError(Code::Internal, "unexpected reply from PostgreSQL");
  if (!error && w.why() == Why::Stop) error = stopError(Why::Stop, limits);

  // Bring the connection back to idle and clean: out of pipeline mode, out of any transaction, no
  // advisory lock held. After an error (or a late cap-cancel) the server skipped the batch's
  // ROLLBACK and unlock and may hold a failed transaction block: end it and unlock (one extra
  // round trip, on that path only). A connection that cannot be brought back is dropped.
  if (synced && !outcome.broken && PQexitPipelineMode(conn) == 1) {
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) {
      w.startCleanup();
      Status st = control(conn, "ROLLBACK", w);
      if (!st && !error) error = st.error();
    }
    if (!unlocked && PQtransactionStatus(conn) == PQTRANS_IDLE) {
      w.startCleanup();
      if (!control(conn, kUnlockAll, w, PGRES_TUPLES_OK)) outcome.broken = true;
    }
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) outcome.broken = true;
  } else {
    outcome.broken = true;
  }
  if (replan) {
    // Every connection holds the same stale statement: the caller drops the idle ones and runs
    // the call again on a new connection, which prepares it afresh (nothing was read or changed).
    outcome.broken = outcome.stale = true;
  }
  if (error) return *error;
  out.truncated = budget.truncated();
  out.note = budget.note();
  out.row_count = budget.rows();
  out.bytes = budget.bytes();
  out.rows = budget.takeRows();
  return out;
}

Result<StatementShape> describeReadOnly(PGconn* conn, PGcancel* cancel, std::string_view sql,
                                        const std::vector<Oid>& param_types,
                                        const std::stop_token& stop, Clock::time_point deadline,
                                        ExecOutcome& outcome) {
  const auto ready = readyToSend(conn, stop, deadline, outcome, "the description");
  if (!ready) return ready.error();
  const Idle idle = *ready;
  Waiter w(conn, cancel, stop, deadline, outcome);
  const CancelOnStop on_stop(stop, cancel);
  if (auto st = enterPipeline(conn, outcome); !st) return st.error();
  // The unnamed statement is the connection's scratch slot: the batch's own BEGIN and ROLLBACK
  // (sent unnamed) replace it too, and the named statements of the hot path stay as they are.
  const std::string text(sql);
  const bool sent =
      PQsendQueryParams(conn, "BEGIN READ ONLY", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
      PQsendPrepare(conn, "", text.c_str(), static_cast<int>(param_types.size()),
                    param_types.data()) == 1 &&
      PQsendDescribePrepared(conn, "") == 1 &&
      PQsendQueryParams(conn, "ROLLBACK", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
      PQpipelineSync(conn) == 1;
  if (!sent) {
    outcome.broken = true;
    outcome.stale = PQstatus(conn) == CONNECTION_BAD;
    return lostConnection();
  }

  std::optional<Error> error;
  auto failed = [&](const PGresult* r) {
    if (error) return;
    const std::string state = sqlstateOf(r);
    if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) outcome.server_message = m;
    outcome.sqlstate = state;
    if (PQstatus(conn) == CONNECTION_BAD) {
      error = lostConnection();
    } else if (state == "57014" && (w.why() == Why::Stop || stop.stop_requested())) {
      error = makeError(Code::Cancelled, "the call was cancelled");
    } else if (state == "57014" && w.why() == Why::Deadline) {
      error = makeError(Code::TimedOut, "describing the statement took longer than the deadline");
    } else {
      error = errorFromSqlstate(state);
    }
  };
  auto readable = [&] { return !w.failed() && PQstatus(conn) == CONNECTION_OK; };

  // BEGIN, Parse, Describe, ROLLBACK: each command's results end with a null result.
  StatementShape shape;
  bool begun = false;  // the server answered BEGIN
  bool described = false;
  constexpr int kDescribe = 2;
  for (int command = 0; command < 4 && readable(); ++command) {
    if (command == kDescribe + 1) w.startCleanup();  // only ROLLBACK is left: never cancelled
    while (auto r = w.next()) {
      const ExecStatusType st = PQresultStatus(r.get());
      begun = begun || (st == PGRES_COMMAND_OK && command == 0);
      if (st == PGRES_COMMAND_OK && command == kDescribe) {
        for (int p = 0; p < PQnparams(r.get()); ++p)
          shape.parameters.push_back(PQparamtype(r.get(), p));
        std::vector<std::string> keys;
        for (int c = 0; c < PQnfields(r.get()); ++c) {
          const char* name = PQfname(r.get(), c);
          keys.push_back(columnKey(keys, name != nullptr ? name : ""));
          shape.columns.emplace_back(keys.back(), PQftype(r.get(), c));
        }
        described = true;
      } else if (st != PGRES_COMMAND_OK && st != PGRES_PIPELINE_ABORTED) {
        failed(r.get());
      }
    }
  }
  if (!begun && idle == Idle::Unasked && PQstatus(conn) == CONNECTION_BAD) {
    // As in executeReadOnly: the backend had announced its end and answered nothing.
    outcome.broken = outcome.stale = true;
    return lostConnection();
  }
  bool synced = false;
  if (readable()) {
    auto r = w.next();
    synced = r && PQresultStatus(r.get()) == PGRES_PIPELINE_SYNC;
  }
  if (w.failed() && !error) {
    error = w.connectionLost() ? lostConnection()
            : w.why() == Why::Stop
                ? makeError(Code::Cancelled, "the call was cancelled")
                : makeError(Code::TimedOut, "the database did not describe the statement in time");
  }
  if (!error && PQstatus(conn) == CONNECTION_BAD) error = lostConnection();
  if (!error && (!synced || !described))
    error = makeError(Code::Internal, "unexpected reply from PostgreSQL");
  if (!error && (w.why() == Why::Stop || stop.stop_requested()))
    error = makeError(Code::Cancelled, "the call was cancelled");

  // Back to idle: out of pipeline mode and out of any transaction (after an error the server
  // skipped the batch's ROLLBACK), or the connection is dropped.
  if (synced && !outcome.broken && PQexitPipelineMode(conn) == 1) {
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) {
      w.startCleanup();
      Status st = control(conn, "ROLLBACK", w);
      if (!st && !error) error = st.error();
    }
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) outcome.broken = true;
  } else {
    outcome.broken = true;
  }
  if (error) return *error;
  return shape;
}

}  // namespace mcpdb::postgres
