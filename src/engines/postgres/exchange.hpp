#pragma once
// What the two pipelined exchanges of executor.cpp share (running a statement, describing one):
// the check that an idle pooled connection is still there before anything is sent, the wait for
// results that cancels the statement on stop or deadline, the record of the first failure, and
// the way back to an idle connection (or to one marked broken). Internal to the engine.

#include <libpq-fe.h>

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/call_waits.hpp"
#include "common/result.hpp"
#include "common/side_task.hpp"
#include "engines/postgres/executor.hpp"
#include "engines/postgres/pool.hpp"

namespace mcpdb::postgres {

// Releases every session-level advisory lock the session holds (they outlive ROLLBACK).
// Schema-qualified so that no function earlier on the search_path can stand in for it.
inline constexpr const char* kUnlockAll = "SELECT pg_catalog.pg_advisory_unlock_all()";

// Why the statement in flight was cancelled.
enum class Why { None, Stop, Deadline, Cap };

// How an idle pooled connection looked before the batch was sent (see checkIdle in exchange.cpp).
// Unasked: something arrived unasked on it (in practice the FATAL message of a terminating
// backend) but no EOF behind it yet.
enum class Idle { Open, Gone, Unasked };

std::string sqlstateOf(const PGresult* r);
Error lostConnection();

// What every pipelined exchange checks before it sends anything: not cancelled, the deadline not
// passed (`what`: what would have started), the connection alive and idle; how idle it was.
Result<Idle> readyToSend(PGconn* conn, const std::stop_token& stop, Clock::time_point deadline,
                         ExecOutcome& outcome, std::string_view what);

// Waits for the results of the commands in flight, honouring stop and deadline by PQcancel, and
// the call's waits (`waits`, may be null): every wait for the server's socket goes through them
// (the runner may run other calls meanwhile), and they are handed on before a cancel request
// connects.
class Waiter {
 public:
  Waiter(PGconn* conn, PGcancel* cancel, const std::stop_token& stop, Clock::time_point deadline,
         CallWaits* waits, ExecOutcome& outcome)
      : conn_(conn),
        cancel_(cancel),
        stop_(stop),
        deadline_(deadline),
        waits_(waits),
        outcome_(outcome) {}

  // The next result, or null when the command is complete (or the connection is lost / stuck:
  // then failed() is true).
  PgResultPtr next();
  // Sends a cancel request for the statement in flight (once).
  void cancel(Why why);

  Why why() const { return why_; }
  bool failed() const { return failed_; }
  bool connectionLost() const { return lost_; }
  // From now on only COMMIT/ROLLBACK run: no cancelling, a short grace of their own.
  void startCleanup();

 private:
  // How long the next poll may wait, after cancelling the statement on stop or deadline (and
  // sending the cancel again while it runs on); negative when the connection is given up.
  int nextWait();
  // The server's socket for at most `timeout` ms, and what arrived read; false when the
  // connection is lost.
  bool awaitInput(int timeout);
  void resendCancel();
  void lost();

  PGconn* conn_;
  PGcancel* cancel_;
  const std::stop_token& stop_;
  Clock::time_point deadline_;
  Clock::time_point cancel_deadline_{};
  Clock::time_point last_cancel_{};
  CallWaits* waits_;
  ExecOutcome& outcome_;
  Why why_ = Why::None;
  bool cleanup_ = false;
  bool failed_ = false;
  bool lost_ = false;
};

// Cancels the running statement at once when the client cancels (the wait loop would also notice
// within a slice), from a thread of its own: PQcancel connects to the server, and the thread that
// requests the stop (a reader, an I/O thread) never waits for the database. The cancel is sent
// before this object is gone (common/side_task.hpp), so never after the exchange ended.
class CancelOnStop {
 public:
  // `waits`: the call's runner's, handed on before waiting for a cancel still on its way.
  CancelOnStop(const std::stop_token& stop, PGcancel* cancel, CallWaits* waits);
  ~CancelOnStop();
  CancelOnStop(const CancelOnStop&) = delete;
  CancelOnStop& operator=(const CancelOnStop&) = delete;

 private:
  CallWaits* waits_;
  SideTask side_;
  std::optional<std::stop_callback<std::function<void()>>> on_stop_;
};

// One pipelined batch on one connection, from entering pipeline mode to leaving it: the wait, the
// first error (the one the caller sees), and the connection's state for the pool (`outcome`).
class Exchange {
 public:
  Exchange(PGconn* conn, PGcancel* cancel, const std::stop_token& stop, Clock::time_point deadline,
           CallWaits* waits, ExecOutcome& outcome)
      : conn_(conn),
        outcome_(outcome),
        waiter_(conn, cancel, stop, deadline, waits, outcome),
        on_stop_(stop, cancel, waits) {}

  PGconn* conn() const { return conn_; }
  Waiter& waiter() { return waiter_; }
  ExecOutcome& outcome() { return outcome_; }
  const std::optional<Error>& error() const { return error_; }
  // The first error wins.
  void setError(Error e) {
    if (!error_) error_ = std::move(e);
  }

  // Enters pipeline mode; only refused when the connection is not idle (an unexpected state,
  // nothing was sent).
  Status enterPipeline();
  // libpq could not write the batch: the connection is broken. When that is because the peer had
  // gone, nothing ran (stale: the caller may retry elsewhere).
  Error unsent();
  // The connection can still be read (a lost or stuck one is given up, pipeline and all).
  bool readable() const { return !waiter_.failed() && PQstatus(conn_) == CONNECTION_OK; }

  // Reads the results of one command up to its end; true when one of them was `expect`. Any
  // other result goes to `failed`, except the ones the server skipped after an earlier error.
  template <class Failed>
  bool readCommand(ExecStatusType expect, Failed&& failed) {
    bool answered = false;
    while (auto r = waiter_.next()) {
      const ExecStatusType st = PQresultStatus(r.get());
      answered = answered || st == expect;
      if (st != expect && st != PGRES_PIPELINE_ABORTED) failed(r.get());
    }
    return answered;
  }
  // Records a failed command when it is the first: the server's message and SQLSTATE for the
  // caller (outcome), and the error: a lost connection, or what `classify` makes of the SQLSTATE.
  template <class Classify>
  void recordFailure(const PGresult* r, Classify&& classify) {
    if (error_) return;
    const std::string state = sqlstateOf(r);
    if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) outcome_.server_message = m;
    outcome_.sqlstate = state;
    error_ = PQstatus(conn_) == CONNECTION_BAD ? lostConnection() : classify(state);
  }

  // True, with the connection marked broken and stale, when the backend had announced its end
  // before the batch was sent and answered nothing (not even BEGIN): it ran nothing, so the
  // caller may retry on a new connection.
  bool goneBeforeBegin(bool begun, Idle idle);
  // The sync that ends the batch; false when the connection could not be read to it.
  bool readSync();
  // The errors of the batch as a whole, unless one came first: a wait given up (a lost
  // connection, or `given_up(why)` for a server that did not stop in time), a connection lost
  // meanwhile, an answer that was not `complete`.
  template <class GivenUp>
  void settle(bool complete, GivenUp&& given_up) {
    if (error_) return;
    if (waiter_.failed()) {
      error_ = waiter_.connectionLost() ? lostConnection() : given_up(waiter_.why());
    } else if (PQstatus(conn_) == CONNECTION_BAD) {
      error_ = lostConnection();
    } else if (!complete) {
      error_ = makeError(Code::Internal, "unexpected reply from PostgreSQL");
    }
  }
  // Brings the connection back to idle and clean: out of pipeline mode, out of any transaction,
  // and (unless `unlocked`) no advisory lock held; a connection that cannot be is marked broken.
  void returnToIdle(bool synced, bool unlocked);

 private:
  PGconn* conn_;
  ExecOutcome& outcome_;
  Waiter waiter_;
  const CancelOnStop on_stop_;
  std::optional<Error> error_;
};

}  // namespace mcpdb::postgres
