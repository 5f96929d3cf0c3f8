#include "engines/postgres/executor.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "common/row_budget.hpp"
#include "engines/postgres/exchange.hpp"
#include "engines/postgres/sqlstate.hpp"
#include "telemetry/trace_context.hpp"

// Pipeline mode (one round trip per call) is in libpq 14 and later; the server side needs nothing
// beyond protocol 3, so there is no runtime fallback to keep.
#ifndef LIBPQ_HAS_PIPELINING
#error "mcp-dbserver needs libpq 14 or newer (pipeline mode)"
#endif

namespace mcpdb::postgres {
namespace {

// A row's JSON is at least its text form's length over this (see StatementRun::fits).
constexpr std::uint64_t kRawPerJsonByte = 2;

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

// Whether the wrapper's result still has the shape the statement's description gave: its columns
// and the NULL map (a boolean array), each passed-through column of its described type and type
// modifier (a varchar(n) is passed through for its n), and each guarded one of its described type
// too when that is a built-in type (a guarded column of a domain comes back as the domain's base
// type: CASE resolves to it). A statement changed since (a table altered under SELECT *) fails the
// call, and the next one describes it again.
bool sameShape(const PGresult* r, const CappedStatement& capped) {
  constexpr Oid kFirstUserOid = 16384;  // FirstNormalObjectId: built-in types are below
  const int n = static_cast<int>(capped.columns.size());
  if (PQnfields(r) != n + 1 || PQftype(r, n) != oid::kBoolArray) return false;
  for (std::size_t c = 0; c < capped.columns.size(); ++c) {
    const Oid described = capped.columns[c].second;
    if ((!capped.guarded[c] || described < kFirstUserOid) &&
        PQftype(r, static_cast<int>(c)) != described)
      return false;
    // A column passed through for its varchar(n) must not have been widened since.
    if (!capped.guarded[c] && PQfmod(r, static_cast<int>(c)) != capped.modifiers[c]) return false;
  }
  return true;
}

// The JSON key of a result column: its name, suffixed when an earlier column has the same key
// (duplicate names would overwrite each other in a JSON object).
std::string columnKey(const std::vector<std::string>& keys, const std::string& name) {
  std::string key = name;
  for (int n = 2; std::find(keys.begin(), keys.end(), key) != keys.end(); ++n)
    key = name + "_" + std::to_string(n);
  return key;
}

// The batch of executeReadOnly: BEGIN READ ONLY, the statement, the unlock, ROLLBACK, one sync.
// Its steps run in this order: send, then the results of each command as they come back.
class StatementRun {
 public:
  StatementRun(Exchange& ex, const ExecRequest& request)
      : ex_(ex), request_(request), budget_(request.limits) {}

  bool send();
  // BEGIN's results; true when the server answered it.
  bool readFirst();
  // The statement's rows, then the unlock's, ROLLBACK's and the sync's results; true when the
  // batch ended with its sync.
  bool readRest() {
    readRows();
    return readEnd();
  }
  void settleErrors(bool synced);
  bool unlocked() const { return unlocked_; }
  Result<ExecResult> finish();

 private:
  void readRows();
  bool readEnd();
  void failed(const PGresult* r);
  Error classify(std::string_view state) const;
  void settleParse(PendingParse& p);
  void describeColumns(const PGresult* r);
  void findCuts(const PGresult* r);
  bool fits(const PGresult* r);
  Json convertRow(const PGresult* r) const;
  void addRow(const PGresult* r);
  void cap();

  Exchange& ex_;
  const ExecRequest& request_;
  std::array<PendingParse, 4> parses_;  // BEGIN, the statement, the unlock, ROLLBACK
  bool named_ = false;                  // SET LOCAL application_name was sent after BEGIN
  bool capped_ = false;
  bool replan_ = false;    // a prepared statement's result shape changed: see planShapeChanged
  bool unlocked_ = false;  // the unlock ran (a late cap-cancel may have stopped it)
  RowBudget budget_;
  ExecResult out_;
  std::vector<std::string> keys_;
  std::vector<Oid> col_types_;
  std::vector<bool> cut_row_;  // per column of the row being added: cut (see findCuts)
};

// One batch, one sync, one round trip: BEGIN READ ONLY, the statement, the release of any
// session-level advisory lock, ROLLBACK. (The unlock runs inside the transaction: after the
// ROLLBACK it would start and end a transaction of its own, which costs the server more.) The
// server runs them in order and skips the rest up to the sync after an error, so the statement
// never runs outside the read-only transaction. Hygiene: ROLLBACK (not COMMIT) undoes whatever
// the call did to its session that is transactional (set_config, SET LOCAL, LISTEN, NOTIFY);
// session-level advisory locks survive ROLLBACK, so they are released too. Nothing of one call is
// visible to the next call on the connection. DISCARD ALL would also drop the prepared statements
// the hot path reuses.
bool StatementRun::send() {
  static const std::string kBegin = "BEGIN READ ONLY";
  static const std::string kRollback = "ROLLBACK";
  static const std::string kUnlock = kUnlockAll;
  PGconn* conn = ex_.conn();
  PreparedStatements* prepared = request_.prepared;
  const BoundParams& params = request_.params;
  const std::string text(request_.sql);
  const std::vector<const char*> values = params.pointers();
  if (!sendCommand(conn, prepared, kBegin, 0, nullptr, nullptr, parses_[0])) return false;
  // The trace context as application_name, inside the transaction (it ends with ROLLBACK). SET
  // takes no parameters, so the value is in the text: only a well-formed traceparent (hex digits
  // and dashes) is ever written there. Unnamed: its text differs every call.
  if (!request_.application_name.empty() &&
      telemetry::parseTraceparent(request_.application_name)) {
    const std::string set =
        "SET LOCAL application_name = '" + std::string(request_.application_name) + "'";
    if (PQsendQueryParams(conn, set.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
      return false;
    named_ = true;
  }
  return sendCommand(conn, prepared, text, static_cast<int>(params.values.size()),
                     params.types.data(), values.data(), parses_[1]) &&
         sendCommand(conn, prepared, kUnlock, 0, nullptr, nullptr, parses_[2]) &&
         sendCommand(conn, prepared, kRollback, 0, nullptr, nullptr, parses_[3]) &&
         PQpipelineSync(conn) == 1;  // flushes the batch
}

// A failed command: the first error wins; the cancel we sent for a cap is not an error.
void StatementRun::failed(const PGresult* r) {
  replan_ = replan_ || planShapeChanged(r);
  // The wrapper's alias list no longer matches the statement's columns (source_cap.hpp: a
  // column more makes its end marker ambiguous, one fewer leaves an alias without a column).
  const std::string state = sqlstateOf(r);
  if (request_.capped != nullptr && (state == "42702" || state == "42P10"))
    ex_.outcome().reshaped = true;
  if (capped_ && state == "57014") return;
  ex_.recordFailure(r, [this](std::string_view s) { return classify(s); });
}

Error StatementRun::classify(std::string_view state) const {
  const Why why = ex_.waiter().why();
  if (state == "57014" && (why == Why::Stop || why == Why::Deadline))
    return stopError(why, request_.limits);
  if (state == "57014" && request_.stop.stop_requested())
    return stopError(Why::Stop, request_.limits);  // cancelled by the stop callback first
  return errorFromSqlstate(state);
}

// The result of a Parse queued ahead of a command; a successful one is remembered by name.
void StatementRun::settleParse(PendingParse& p) {
  if (!p.sent || !ex_.readable()) return;
  if (ex_.readCommand(PGRES_COMMAND_OK, [this](const PGresult* r) { failed(r); }))
    request_.prepared->names.emplace(std::move(p.text), std::move(p.name));
}

bool StatementRun::readFirst() {
  settleParse(parses_[0]);
  const bool begun = ex_.readCommand(PGRES_COMMAND_OK, [this](const PGresult* r) { failed(r); });
  if (named_ && ex_.readable())
    (void)ex_.readCommand(PGRES_COMMAND_OK, [this](const PGresult* r) { failed(r); });
  return begun;
}

// The statement, fetched row at a time so the caps apply while rows arrive. In pipeline mode
// single-row mode is chosen for the command whose results come next, i.e. now.
void StatementRun::readRows() {
  settleParse(parses_[1]);
  if (!ex_.readable()) return;
  (void)PQsetSingleRowMode(ex_.conn());
  while (auto r = ex_.waiter().next()) {
    switch (PQresultStatus(r.get())) {
      case PGRES_SINGLE_TUPLE:
        describeColumns(r.get());
        if (!capped_) addRow(r.get());
        break;
      case PGRES_TUPLES_OK: describeColumns(r.get()); break;
      case PGRES_COMMAND_OK:
      case PGRES_PIPELINE_ABORTED: break;  // BEGIN failed: the error is already recorded
      case PGRES_FATAL_ERROR: failed(r.get()); break;
      default: ex_.setError(makeError(Code::Internal, "unexpected reply from PostgreSQL")); break;
    }
  }
}

void StatementRun::describeColumns(const PGresult* r) {
  if (!keys_.empty() || PQnfields(r) == 0) return;
  const CappedStatement* capped = request_.capped;
  // The wrapper's result is the statement's columns and its NULL map; the names are the keys the
  // description made, so keying them again gives the same keys.
  const int n = capped != nullptr ? static_cast<int>(capped->columns.size()) : PQnfields(r);
  if (capped != nullptr && !sameShape(r, *capped)) {
    ex_.setError(makeError(Code::Internal, "the statement's result columns changed; retry"));
    ex_.outcome().reshaped = true;
    cap();  // nothing of this result is returned
    return;
  }
  for (int c = 0; c < n; ++c) {
    std::string key = columnKey(keys_, PQfname(r, c));
    const Oid type = capped != nullptr ? capped->columns[c].second : PQftype(r, c);
    keys_.push_back(key);
    col_types_.push_back(type);
    // Built member by member: an initializer list costs several times as much per column.
    Json column = Json::object();
    column.emplace("name", key);
    column.emplace("type", typeName(type, request_.types));
    out_.columns.push_back(std::move(column));
  }
  cut_row_.assign(keys_.size(), false);
}

// Which values of the row are cut: a guarded column that is null although the statement's value
// was not (the wrapper left it in the database), or whose text is longer than the call's byte cap
// (a call narrower than the tool's cap the wrapper was written for).
void StatementRun::findCuts(const PGresult* r) {
  const CappedStatement* capped = request_.capped;
  if (capped == nullptr) return;
  const int n = static_cast<int>(keys_.size());
  // The NULL map is a boolean array, "{f,t,...}": the flag of the g-th guarded column is at
  // 1 + 2g (see capAtSource).
  const std::string_view nulls(PQgetvalue(r, 0, n), static_cast<std::size_t>(PQgetlength(r, 0, n)));
  std::size_t g = 0;  // index of the column among the guarded ones
  for (int c = 0; c < n; ++c) {
    cut_row_[c] = false;
    if (!capped->guarded[c]) continue;
    const bool was_null = 1 + 2 * g < nulls.size() && nulls[1 + 2 * g] == 't';
    ++g;
    cut_row_[c] = PQgetisnull(r, 0, c) != 0 ? !was_null
                                            : static_cast<std::uint64_t>(PQgetlength(r, 0, c)) >
                                                  request_.limits.max_bytes;
  }
}

// Whether the row may fit under the caps before it is converted. The row's text as libpq holds it
// bounds its JSON from below: no type's JSON is less than half its text (bytea's hex becomes
// base64: two thirds), except json with padding whitespace, which is then counted at half its
// stored length. A row that cannot fit is never converted. A cut value counts as null.
bool StatementRun::fits(const PGresult* r) {
  std::uint64_t raw = 0;
  for (int c = 0; c < static_cast<int>(keys_.size()); ++c)
    if (!cut_row_[c]) raw += static_cast<std::uint64_t>(PQgetlength(r, 0, c));
  return budget_.admits(raw / kRawPerJsonByte);
}

Json StatementRun::convertRow(const PGresult* r) const {
  Json row = Json::object();
  for (int c = 0; c < static_cast<int>(keys_.size()); ++c) {
    if (cut_row_[c] || PQgetisnull(r, 0, c) != 0) {
      row[keys_[c]] = nullptr;
    } else {
      row[keys_[c]] = valueToJson(
          col_types_[c],
          std::string_view(PQgetvalue(r, 0, c), static_cast<std::size_t>(PQgetlength(r, 0, c))),
          request_.types);
    }
  }
  return row;
}

void StatementRun::addRow(const PGresult* r) {
  findCuts(r);
  if (!fits(r) || !budget_.add(convertRow(r))) {
    cap();
    return;
  }
  for (int c = 0; c < static_cast<int>(keys_.size()); ++c)
    if (cut_row_[c]) out_.cut.push_back(Json{{"row", budget_.rows() - 1}, {"column", keys_[c]}});
}

// A cap is reached: stop the server producing the rest.
void StatementRun::cap() {
  capped_ = true;
  ex_.waiter().cancel(Why::Cap);
}

// The unlock and ROLLBACK (both skipped by the server after an error), then the sync. From here
// on nothing is cancelled; they get a short grace of their own.
bool StatementRun::readEnd() {
  if (!ex_.readable()) return false;
  ex_.waiter().startCleanup();
  auto on_failure = [this](const PGresult* r) { failed(r); };
  settleParse(parses_[2]);
  unlocked_ = ex_.readCommand(PGRES_TUPLES_OK, on_failure);
  settleParse(parses_[3]);
  (void)ex_.readCommand(PGRES_COMMAND_OK, on_failure);
  return ex_.readSync();
}

void StatementRun::settleErrors(bool synced) {
  const Limits& limits = request_.limits;
  ex_.settle(synced, [&](Why why) {
    return why == Why::Stop || why == Why::Deadline
               ? stopError(why, limits)
               : makeError(Code::TimedOut, "the database did not stop the statement in time");
  });
  if (ex_.waiter().why() == Why::Stop) ex_.setError(stopError(Why::Stop, limits));
}

Result<ExecResult> StatementRun::finish() {
  if (replan_) {
    // Every connection holds the same stale statement: the caller drops the idle ones and runs
    // the call again on a new connection, which prepares it afresh (nothing was read or changed).
    ex_.outcome().broken = ex_.outcome().stale = true;
  }
  if (ex_.error()) return *ex_.error();
  out_.truncated = budget_.truncated() || !out_.cut.empty();
  out_.note = budget_.note();
  if (!out_.cut.empty()) {
    const std::size_t n = out_.cut.size();
    out_.note += (out_.note.empty() ? "" : " ") + std::to_string(n) +
                 (n == 1 ? " value" : " values") + " longer than the byte cap (max_bytes, " +
                 std::to_string(request_.limits.max_bytes) + " bytes) " +
                 (n == 1 ? "was" : "were") + " left in the database and " +
                 (n == 1 ? "is" : "are") + " null in its row; `cut` lists each by row and column.";
  }
  out_.row_count = budget_.rows();
  out_.bytes = budget_.bytes();
  out_.rows = budget_.takeRows();
  return std::move(out_);
}

// The batch of describeReadOnly: BEGIN READ ONLY, Parse, Describe, the unlock, ROLLBACK, one sync.
class DescriptionRun {
 public:
  DescriptionRun(Exchange& ex, const DescribeRequest& request) : ex_(ex), request_(request) {}

  bool send();
  // Each command's results, in order; true when the server answered BEGIN. (Judged after all
  // five: a connection lost at BEGIN leaves the rest unread anyway.)
  bool readFirst();
  // The sync's; true when the batch ended with it.
  bool readRest() { return ex_.readSync(); }
  void settleErrors(bool synced);
  bool unlocked() const { return unlocked_; }
  Result<StatementShape> finish();

 private:
  void failed(const PGresult* r);
  void readShape(const PGresult* r);

  Exchange& ex_;
  const DescribeRequest& request_;
  StatementShape shape_;
  bool described_ = false;
  bool unlocked_ = false;  // the unlock ran (skipped by the server after a failed Parse)
};

bool DescriptionRun::send() {
  // The unnamed statement is the connection's scratch slot: the batch's own BEGIN and ROLLBACK
  // (sent unnamed) replace it too, and the named statements of the hot path stay as they are.
  PGconn* conn = ex_.conn();
  const std::string text(request_.sql);
  return PQsendQueryParams(conn, "BEGIN READ ONLY", 0, nullptr, nullptr, nullptr, nullptr, 0) ==
             1 &&
         PQsendPrepare(conn, "", text.c_str(), static_cast<int>(request_.param_types.size()),
                       request_.param_types.data()) == 1 &&
         PQsendDescribePrepared(conn, "") == 1 &&
         PQsendQueryParams(conn, kUnlockAll, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
         PQsendQueryParams(conn, "ROLLBACK", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
         PQpipelineSync(conn) == 1;
}

void DescriptionRun::failed(const PGresult* r) {
  ex_.recordFailure(r, [this](std::string_view state) {
    const Why why = ex_.waiter().why();
    if (state == "57014" && (why == Why::Stop || request_.stop.stop_requested()))
      return makeError(Code::Cancelled, "the call was cancelled");
    if (state == "57014" && why == Why::Deadline)
      return makeError(Code::TimedOut, "describing the statement took longer than the deadline");
    return errorFromSqlstate(state);
  });
}

// BEGIN, Parse, Describe, the unlock, ROLLBACK: each command's results end with a null result.
bool DescriptionRun::readFirst() {
  enum Command { kBegin, kParse, kDescribe, kUnlock, kRollback, kCommands };
  auto on_failure = [this](const PGresult* r) { failed(r); };
  bool begun = false;  // the server answered BEGIN
  for (int command = kBegin; command < kCommands && ex_.readable(); ++command) {
    if (command == kDescribe) {
      while (auto r = ex_.waiter().next()) readShape(r.get());
      continue;
    }
    if (command == kUnlock) {
      ex_.waiter().startCleanup();  // only the unlock and ROLLBACK are left: never cancelled
      unlocked_ = ex_.readCommand(PGRES_TUPLES_OK, on_failure);
      continue;
    }
    const bool answered = ex_.readCommand(PGRES_COMMAND_OK, on_failure);
    begun = begun || (answered && command == kBegin);
  }
  return begun;
}

void DescriptionRun::readShape(const PGresult* r) {
  const ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK) {
    if (st != PGRES_PIPELINE_ABORTED) failed(r);
    return;
  }
  for (int p = 0; p < PQnparams(r); ++p) shape_.parameters.push_back(PQparamtype(r, p));
  std::vector<std::string> keys;
  for (int c = 0; c < PQnfields(r); ++c) {
    const char* name = PQfname(r, c);
    keys.push_back(columnKey(keys, name != nullptr ? name : ""));
    shape_.columns.emplace_back(keys.back(), PQftype(r, c));
    shape_.modifiers.push_back(PQfmod(r, c));
  }
  described_ = true;
}

void DescriptionRun::settleErrors(bool synced) {
  ex_.settle(synced && described_, [](Why why) {
    return why == Why::Stop
               ? makeError(Code::Cancelled, "the call was cancelled")
               : makeError(Code::TimedOut, "the database did not describe the statement in time");
  });
  if (ex_.waiter().why() == Why::Stop || request_.stop.stop_requested())
    ex_.setError(makeError(Code::Cancelled, "the call was cancelled"));
}

Result<StatementShape> DescriptionRun::finish() {
  if (ex_.error()) return *ex_.error();
  return std::move(shape_);
}

// The steps of every pipelined batch: check the connection before anything is sent (`what` names
// what would have started), enter pipeline mode, send the batch, read its results, settle the
// errors, bring the connection back to idle. `Run` knows the batch's commands and results.
template <class Run, class Request>
auto runBatch(PGconn* conn, PGcancel* cancel, const Request& request, ExecOutcome& outcome,
              std::string_view what) -> decltype(std::declval<Run&>().finish()) {
  const auto ready = readyToSend(conn, request.stop, request.deadline, outcome, what);
  if (!ready) return ready.error();
  Exchange ex(conn, cancel, request.stop, request.deadline, request.waits, outcome);
  if (auto st = ex.enterPipeline(); !st) return st.error();
  Run run(ex, request);
  if (!run.send()) return ex.unsent();
  if (ex.goneBeforeBegin(run.readFirst(), *ready)) return lostConnection();
  const bool synced = run.readRest();
  run.settleErrors(synced);
  ex.returnToIdle(synced, run.unlocked());
  return run.finish();
}

}  // namespace

Result<ExecResult> executeReadOnly(PGconn* conn, PGcancel* cancel, const ExecRequest& request,
                                   ExecOutcome& outcome) {
  return runBatch<StatementRun>(conn, cancel, request, outcome, "the query");
}

Result<StatementShape> describeReadOnly(PGconn* conn, PGcancel* cancel,
                                        const DescribeRequest& request, ExecOutcome& outcome) {
  return runBatch<DescriptionRun>(conn, cancel, request, outcome, "the description");
}

}  // namespace mcpdb::postgres
