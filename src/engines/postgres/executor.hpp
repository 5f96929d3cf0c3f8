#pragma once
// Running one read-only statement on one connection. This is the layer below the guardrail: it is
// reached only through Runtime::run (which checks the template first), except from tests that
// prove the transaction itself refuses writes.

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/call_waits.hpp"
#include "common/json.hpp"
#include "common/limits.hpp"
#include "common/result.hpp"
#include "engines/postgres/params.hpp"
#include "engines/postgres/pool.hpp"
#include "engines/postgres/source_cap.hpp"
#include "engines/postgres/type_map.hpp"

namespace mcpdb::postgres {

struct ExecResult {
  Json columns = Json::array();  // [{name, type}]
  Json rows = Json::array();     // objects keyed by column name
  std::uint64_t row_count = 0;
  std::uint64_t bytes = 0;
  bool truncated = false;  // a cap cut rows or values
  std::string note;
  // Values left in the database because their text form was longer than the byte cap:
  // [{row, column}], row an index into rows; each is null in its row.
  Json cut = Json::array();
};

// What happened to the connection, for the caller's pool handling.
struct ExecOutcome {
  bool broken = false;       // the connection must not be reused
  bool stale = false;        // nothing ran, or a prepared plan went stale: safe to retry elsewhere
  bool cancel_sent = false;  // a PQcancel was issued (stop, deadline or row/byte cap)
  // The wrapped statement (ExecRequest::capped) no longer fits the description it was written
  // from (a table altered under SELECT *): describe it again and run the call once more.
  bool reshaped = false;
  // The server's primary message of the first failed command. It can quote a parameter value, so
  // only `doctor`'s all-NULL EXPLAIN reads it (tool_check.cpp); never sent or logged.
  std::string server_message;
  std::string sqlstate;  // of the same command
};

// One statement to run read-only, besides the connection it runs on. It refers to the caller's
// objects (only the limits and the type OIDs, a few numbers, are copied): they must outlive the
// call.
struct ExecRequest {
  std::string_view sql;
  const BoundParams& params;  // bound as $1..$n
  Limits limits;              // the row and byte caps (the timeout only names a deadline error)
  const std::stop_token& stop;
  Clock::time_point deadline;
  TypeInfo types{};  // of the connection's server (vector types), for turning values into JSON
  // The connection's named statements: with it, each command is a named prepared statement of
  // the connection (prepared in the same batch the first time), so the server parses and plans it
  // once per connection. Null: every command unnamed.
  PreparedStatements* prepared = nullptr;
  // Set when `sql` is capped->sql, the configured statement wrapped by capAtSource: the result's
  // last column is the wrapper's NULL map and is not returned, the columns are reported with the
  // statement's own types, and a guarded value that is over the byte cap (cut at the source for
  // the tool's cap, or here for a narrower call's) is returned as null and listed in `cut`.
  const CappedStatement* capped = nullptr;
  // What the call owes its runner while it waits for the server (common/call_waits.hpp); null:
  // nothing.
  CallWaits* waits = nullptr;
  // A W3C traceparent to run the statement under as application_name (telemetry's
  // postgres_application_name): `SET LOCAL application_name` right after BEGIN, in the same
  // pipeline, so it costs no round trip and ends with the transaction. Empty: none. Only text the
  // server made (checked to be a traceparent), never a caller's.
  std::string_view application_name = {};
};

// BEGIN READ ONLY; the statement through the extended protocol with its parameters bound;
// pg_advisory_unlock_all(); ROLLBACK: sent as one libpq pipeline with one sync (one network round
// trip). The unlock runs after every statement, whatever the proof found: it is the defence that
// holds when the proof misses a function that takes a session-level advisory lock. Rows are
// fetched one at a time into a RowBudget (row and byte caps; the rest of a capped result is
// cancelled on the server). The transaction always ends with ROLLBACK. After an error the
// connection is brought back to idle (pipeline drained, ROLLBACK of the failed transaction block,
// then the unlock the server skipped) or marked broken. The request's stop token and deadline
// cancel the running statement with PQcancel. Never throws.
Result<ExecResult> executeReadOnly(PGconn* conn, PGcancel* cancel, const ExecRequest& request,
                                   ExecOutcome& outcome);

// What describing a statement tells, without running it: the types of its parameters ($1..$n)
// and its result columns in order. Column names are the keys a tool's rows use (a repeated name
// gets a suffix, as executeReadOnly does).
struct StatementShape {
  std::vector<Oid> parameters;
  std::vector<std::pair<std::string, Oid>> columns;
  std::vector<int> modifiers;  // per column: its type modifier (PQfmod; -1: none)
};

// One statement to describe, besides the connection. Views of the caller's objects.
struct DescribeRequest {
  std::string_view sql;
  std::span<const Oid> param_types;  // the types a call binds; 0 lets the server infer one
  const std::stop_token& stop;
  Clock::time_point deadline;
  CallWaits* waits = nullptr;  // as ExecRequest::waits
};

// Describes the statement without executing it: BEGIN READ ONLY; Parse as the connection's
// unnamed statement with the request's parameter types; Describe it (libpq's PQsendPrepare +
// PQsendDescribePrepared); pg_advisory_unlock_all(); ROLLBACK; one pipeline, one sync. Nothing is
// bound or executed, and the pooled named statements are untouched. The unlock is there because
// Parse can already run user code (a domain's CHECK coerces a literal while the statement is
// parsed). Honours stop and deadline as executeReadOnly does and
// leaves the connection idle (or marked broken). Never throws.
Result<StatementShape> describeReadOnly(PGconn* conn, PGcancel* cancel,
                                        const DescribeRequest& request, ExecOutcome& outcome);

}  // namespace mcpdb::postgres
