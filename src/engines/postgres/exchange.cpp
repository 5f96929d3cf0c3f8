#include "engines/postgres/exchange.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "engines/postgres/sqlstate.hpp"

namespace mcpdb::postgres {
namespace {

// How long a cancelled statement may take to stop before its connection is dropped instead. A
// loaded server (seen under the whole test suite on 2 cores) once took more than 2 s to end a
// statement streaming rows after a cap's cancel; the connection is only given up after this.
constexpr std::chrono::milliseconds kCancelGrace{5000};
// How often the wait loop looks at the stop token and the deadline (the stop callback also
// cancels at once; this covers a stop that lands between two statements).
constexpr int kPollSliceMs = 50;
// A cancel request that reaches the backend between two protocol messages (e.g. after Parse,
// before Execute) is ignored by the server; until the statement stops it is sent again this often.
constexpr std::chrono::milliseconds kCancelRepeat{200};

// Whether the server side of an idle pooled connection is still there. A terminated backend (or a
// restarted server) leaves its FATAL message and EOF waiting on the socket; reading them before
// anything is sent is what makes "nothing ran, retry on a new connection" certain. Usually one
// poll() that does not wait.
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

}  // namespace

std::string sqlstateOf(const PGresult* r) {
  const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  return s != nullptr ? s : "";
}

Error lostConnection() {
  return makeError(Code::Unavailable,
                   "lost the connection to PostgreSQL (the server may have restarted); retry");
}

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

PgResultPtr Waiter::next() {
  if (failed_) return nullptr;  // given up: nothing more is read from this connection
  if (PQstatus(conn_) == CONNECTION_BAD) {
    lost();
    return nullptr;
  }
  while (PQisBusy(conn_) != 0) {
    const int timeout = nextWait();
    if (timeout < 0) {
      failed_ = true;
      outcome_.broken = true;
      return nullptr;
    }
    if (!awaitInput(timeout)) {
      // libpq has an error result ready for a lost connection; hand it over if it does. (When
      // nothing was read, libpq is still busy as the loop found it: nothing to hand over.)
      if (PQisBusy(conn_) == 0) return PgResultPtr(PQgetResult(conn_));
      return nullptr;
    }
  }
  return PgResultPtr(PQgetResult(conn_));
}

int Waiter::nextWait() {
  if (cleanup_) {
    // COMMIT/ROLLBACK are not cancelled; they get a short grace, then the connection is dropped.
    if (Clock::now() >= deadline_) return -1;
    return pollTimeout(deadline_, kPollSliceMs);
  }
  if (why_ == Why::None) {
    if (stop_.stop_requested()) {
      cancel(Why::Stop);
    } else if (Clock::now() >= deadline_) {
      cancel(Why::Deadline);
    }
  }
  if (why_ == Why::None) return pollTimeout(deadline_, kPollSliceMs);
  // The server did not react to the cancel in time: give the connection up.
  if (Clock::now() >= cancel_deadline_) return -1;
  if (Clock::now() - last_cancel_ >= kCancelRepeat) resendCancel();
  return pollTimeout(cancel_deadline_, kPollSliceMs);
}

bool Waiter::awaitInput(int timeout) {
  // The server's socket, through the call's runner when it offers waits: it may run other work
  // meanwhile (common/call_waits.hpp).
  const int fd = PQsocket(conn_);
  if (fd < 0) {
    lost();
    return false;
  }
  const int revents = waitFor(waits_, fd, POLLIN, timeout);
  if (revents < 0 && errno != EINTR) {
    lost();
    return false;
  }
  if (revents > 0 && PQconsumeInput(conn_) == 0) {
    lost();
    return false;
  }
  return true;
}

void Waiter::cancel(Why why) {
  if (why_ != Why::None) return;
  why_ = why;
  outcome_.cancel_sent = true;
  cancel_deadline_ = Clock::now() + kCancelGrace;
  resendCancel();
}

void Waiter::resendCancel() {
  handOn(waits_);  // PQcancel connects to the server: a wait it cannot watch
  char err[256];
  (void)PQcancel(cancel_, err, sizeof err);  // err may name the host: not used
  last_cancel_ = Clock::now();
}

void Waiter::startCleanup() {
  cleanup_ = true;
  deadline_ = Clock::now() + kCancelGrace;
}

void Waiter::lost() {
  failed_ = true;
  lost_ = true;
  outcome_.broken = true;
}

CancelOnStop::CancelOnStop(const std::stop_token& stop, PGcancel* cancel, CallWaits* waits)
    : waits_(waits) {
  on_stop_.emplace(stop, [this, cancel] {
    side_.start([cancel] {
      char err[256];
      (void)PQcancel(cancel, err, sizeof err);  // err may name the host: not used
    });
  });
}

CancelOnStop::~CancelOnStop() {
  on_stop_.reset();  // waits for a callback running on another thread
  // The cancel may still be connecting (a slow server): not on the runner's thread.
  if (side_.running()) handOn(waits_);
  side_.join();
}

Status Exchange::enterPipeline() {
  if (PQenterPipelineMode(conn_) == 1) return {};
  outcome_.broken = outcome_.stale = true;
  return makeError(Code::Unavailable, "the PostgreSQL connection was not idle; retry");
}

Error Exchange::unsent() {
  outcome_.broken = true;
  outcome_.stale = PQstatus(conn_) == CONNECTION_BAD;
  return lostConnection();
}

bool Exchange::goneBeforeBegin(bool begun, Idle idle) {
  if (begun || idle != Idle::Unasked || PQstatus(conn_) != CONNECTION_BAD) return false;
  outcome_.broken = outcome_.stale = true;
  return true;
}

bool Exchange::readSync() {
  if (!readable()) return false;
  auto r = waiter_.next();
  return r && PQresultStatus(r.get()) == PGRES_PIPELINE_SYNC;
}

void Exchange::returnToIdle(bool synced, bool unlocked) {
  // After an error (or a late cap-cancel) the server skipped the batch's ROLLBACK and unlock and
  // may hold a failed transaction block: end it and unlock (one extra round trip, on that path
  // only).
  if (synced && !outcome_.broken && PQexitPipelineMode(conn_) == 1) {
    if (PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      waiter_.startCleanup();
      if (Status st = control(conn_, "ROLLBACK", waiter_); !st) setError(st.error());
    }
    if (!unlocked && PQtransactionStatus(conn_) == PQTRANS_IDLE) {
      waiter_.startCleanup();
      if (!control(conn_, kUnlockAll, waiter_, PGRES_TUPLES_OK)) outcome_.broken = true;
    }
    if (PQtransactionStatus(conn_) != PQTRANS_IDLE) outcome_.broken = true;
  } else {
    outcome_.broken = true;
  }
}

}  // namespace mcpdb::postgres
