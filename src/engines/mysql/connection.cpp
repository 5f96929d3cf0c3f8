#include "engines/mysql/connection.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>
#include <sstream>

#include "engines/mysql/cancel.hpp"
#include "engines/mysql/errors.hpp"
#include "engines/mysql/params.hpp"
#include "engines/mysql/raw_client.hpp"
#include "engines/mysql/row_reader.hpp"
#include "engines/mysql/time_limit.hpp"

namespace mcpdb::mysql {
namespace {

using StmtPtr = Owned<MYSQL_STMT, mysql_stmt_close>;
using ResPtr = Owned<MYSQL_RES, mysql_free_result>;

std::set<std::string> modeSet(std::string_view modes) {
  std::set<std::string> out;
  std::stringstream in{std::string(modes)};
  for (std::string m; std::getline(in, m, ',');) {
    if (!m.empty()) out.insert(m);
  }
  return out;
}

// The session variable that holds the read-only characteristic (MySQL 8 dropped tx_read_only;
// MariaDB 10.x has only tx_read_only).
std::string_view readOnlyVariable(Flavour flavour) {
  return flavour == Flavour::MariaDB ? "tx_read_only" : "transaction_read_only";
}

Error statementError(MYSQL_STMT* stmt, std::string_view what) {
  return classifyError(mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt), mysql_stmt_error(stmt),
                       what);
}

}  // namespace

Flavour flavourOf(std::string_view version) {
  return version.find("MariaDB") != std::string_view::npos ? Flavour::MariaDB : Flavour::MySQL;
}

Result<Connection> Connection::open(const Dsn& dsn, const ConnectOptions& options) {
  auto handle = connectRaw(dsn, options.io_timeout);
  if (!handle) return handle.error();
  Connection c(std::move(*handle), dsn);
  auto info = c.queryValue("SELECT CONCAT(@@max_allowed_packet, ' ', VERSION())");
  if (!info) return info.error();
  const auto space = info->find(' ');
  c.server_.max_packet = std::strtoull(info->substr(0, space).c_str(), nullptr, 10);
  c.server_.version = space == std::string::npos ? "" : info->substr(space + 1);
  c.server_.flavour = flavourOf(c.server_.version);
  c.server_.version_number = mysql_get_server_version(c.handle_.get());
  if (auto s = c.setUpSession(/*readBack=*/true); !s) return s.error();
  return c;
}

unsigned long Connection::threadId() const {
  return handle_ != nullptr ? mysql_thread_id(handle_.get()) : 0;
}

Error Connection::lastError(std::string_view what) {
  Error e = lastErrorOf(handle_.get(), what);
  if (e.code == Code::Unavailable) broken_ = true;
  return e;
}

Status Connection::exec(std::string_view sql, std::string_view what) {
  auto r = queryFirstValue(handle_.get(), sql, what);
  if (!r) {
    if (r.error().code == Code::Unavailable) broken_ = true;
    return r.error();
  }
  return {};
}

Result<std::string> Connection::queryValue(std::string_view sql) {
  if (!usable()) return makeError(Code::Unavailable, "query: the connection is closed");
  auto r = queryFirstValue(handle_.get(), sql, "query");
  if (!r) {
    if (r.error().code == Code::Unavailable) broken_ = true;
    return r.error();
  }
  return r->value_or("");
}

Result<std::vector<std::optional<std::string>>> Connection::queryColumn(std::string_view sql) {
  if (!usable()) return makeError(Code::Unavailable, "query: the connection is closed");
  if (mysql_real_query(handle_.get(), sql.data(), sql.size()) != 0) return lastError("query");
  ResPtr res(mysql_store_result(handle_.get()));
  std::vector<std::optional<std::string>> out;
  if (res == nullptr) {
    if (mysql_field_count(handle_.get()) != 0) return lastError("query");
    return out;  // a statement without a result set
  }
  if (mysql_num_fields(res.get()) == 0) return out;
  while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
    const unsigned long* lengths = mysql_fetch_lengths(res.get());
    if (row[0] == nullptr || lengths == nullptr) {
      out.emplace_back();
    } else {
      out.emplace_back(std::string(row[0], lengths[0]));
    }
  }
  return out;
}

Result<std::vector<Connection::TextRow>> Connection::queryRows(std::string_view sql,
                                                               std::size_t max_rows) {
  if (!usable()) return makeError(Code::Unavailable, "query: the connection is closed");
  if (mysql_real_query(handle_.get(), sql.data(), sql.size()) != 0) return lastError("query");
  ResPtr res(mysql_store_result(handle_.get()));
  std::vector<TextRow> out;
  if (res == nullptr) {
    if (mysql_field_count(handle_.get()) != 0) return lastError("query");
    return out;
  }
  const unsigned columns = mysql_num_fields(res.get());
  while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
    if (out.size() == max_rows) {
      return makeError(Code::ResourceExhausted,
                       "query: more than " + std::to_string(max_rows) + " rows");
    }
    const unsigned long* lengths = mysql_fetch_lengths(res.get());
    TextRow r(columns);
    for (unsigned i = 0; i < columns && lengths != nullptr; ++i) {
      if (row[i] != nullptr) r[i] = std::string(row[i], lengths[i]);
    }
    out.push_back(std::move(r));
  }
  return out;
}

// One SET for the whole session state. At connect it is read back: the server must report
// exactly our sql_mode (nothing that changes lexing, e.g. ANSI_QUOTES or NO_BACKSLASH_ESCAPES,
// slipped in through a server default) and a read-only session. After a reset the same SET on the
// same server is not read back: a SET either applies its values or fails, and the read-back has
// already shown that this server keeps them. What stays checked at no cost (fails closed, the
// connection is dropped): the SET's success, and the NO_BACKSLASH_ESCAPES flag every answer
// carries; each call's transaction is checked READ ONLY by the same kind of flag (run()).
Status Connection::setUpSession(bool readBack) {
  const std::string ro(readOnlyVariable(server_.flavour));
  const std::string set = "SET SESSION sql_mode = '" + std::string(kSessionSqlMode) +
                          "', SESSION time_zone = '+00:00', SESSION " + ro + " = 1";
  if (auto s = exec(set, "session set-up"); !s) return s;
  if ((handle_->server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0) {
    broken_ = true;
    return makeError(Code::FailedPrecondition,
                     "session set-up: the server kept NO_BACKSLASH_ESCAPES after the SET");
  }
  if (!readBack) return {};
  auto back = queryValue("SELECT CONCAT(@@SESSION.sql_mode, '|', @@SESSION." + ro + " + 0)");
  if (!back) return back.error();
  const auto bar = back->rfind('|');
  const bool modeOk = bar != std::string::npos &&
                      modeSet(std::string_view(*back).substr(0, bar)) == modeSet(kSessionSqlMode);
  const bool readOnly = bar != std::string::npos && back->substr(bar + 1) == "1";
  if (!modeOk || !readOnly) {
    broken_ = true;
    return makeError(
        Code::FailedPrecondition,
        "session set-up: the server did not keep the session's sql_mode or read-only setting");
  }
  return {};
}

// mysql_reset_connection (COM_RESET_CONNECTION) drops what the guard cannot see: user variables,
// named locks (GET_LOCK), temporary tables, prepared statements, session variables, and rolls back
// the call's transaction; then the session is set up again (one SET). Two round trips, run by the
// pool after the call's answer was handed back (runtime.hpp), and by run()/describe() themselves
// when a connection comes to them not reset since its last call.
// Measured with tests/integration/mysql/reset_cost_test.cpp. Keeping the session instead (no reset;
// SELECT RELEASE_ALL_LOCKS() after each call) cannot clear user variables, which MariaDB offers no
// portable way to enumerate, so a value set by one call would be readable by the next caller's
// statement; and a kept prepared statement would pin the time limit in its text.
Status Connection::resetSession() {
  pre_begun_ = false;  // the reset ends any transaction
  if (!usable()) return makeError(Code::Unavailable, "reset: the connection is closed");
  if (mysql_reset_connection(handle_.get()) != 0) {
    broken_ = true;  // unknown session state: never reused
    return lastError("reset");
  }
  if (auto s = setUpSession(/*readBack=*/false); !s) {
    broken_ = true;
    return s;
  }
  needs_reset_ = false;
  begun_ = false;
  if (auto s = beginNextCall(); !s) {
    broken_ = true;
    return s;
  }
  return {};
}

// The next call's READ ONLY transaction, begun off its latency (the pool resets after the answer
// was handed back): a call waits for one round trip less. InnoDB takes a transaction's snapshot
// at its first read, not at START TRANSACTION, so the call still reads what is committed when it
// runs; until then the transaction holds no snapshot and no lock.
Status Connection::beginNextCall() {
  if (!usable()) return makeError(Code::Unavailable, "begin: the connection is closed");
  if (auto s = exec("START TRANSACTION READ ONLY", "begin"); !s) return s;
  pre_begun_ = true;
  return {};
}

// Starts the call's READ ONLY transaction, on a session reset since the previous call (the reset
// began it already). The status flags of the server's last answer prove the transaction
// read-only at no cost (fails closed): the answer to START TRANSACTION, or to whatever ran in the
// transaction since (the vetting's catalog look-ups), never an answer from before it.
Status Connection::beginReadOnly(bool continuing) {
  if (continuing) return {};  // the call's transaction, begun by describeColumns()
  if (needs_reset_) {
    if (auto s = resetSession(); !s) return s;
  }
  needs_reset_ = true;  // whatever follows leaves state behind until the next reset
  constexpr unsigned kReadOnlyTransaction =
      SERVER_STATUS_IN_TRANS | SERVER_STATUS_IN_TRANS_READONLY;
  const auto inReadOnly = [this] {
    return (handle_->server_status & kReadOnlyTransaction) == kReadOnlyTransaction;
  };
  // A statement run on the connection since the reset that ended the transaction (an implicit
  // commit) leaves none open: one is begun here, as on a connection never reset.
  if (!std::exchange(pre_begun_, false) || !inReadOnly()) {
    if (auto s = exec("START TRANSACTION READ ONLY", "begin"); !s) return s;
  }
  if (!inReadOnly()) {
    broken_ = true;
    return makeError(Code::FailedPrecondition,
                     "begin: the server did not report a read-only transaction");
  }
  return {};
}

Result<QueryResult> Connection::run(std::string_view sql, std::span<const Param> params,
                                    const CallLimits& limits, const std::stop_token& stop,
                                    SourceCapRun* cap) {
  // Only the run() right after describeColumns() continues its transaction.
  const bool continuing = std::exchange(begun_, false);
  if (!usable()) return makeError(Code::Unavailable, "call: the connection is closed");
  if (stop.stop_requested()) return makeError(Code::Cancelled, "call: cancelled before it started");
  if (cap != nullptr && cap->capped != nullptr) sql = cap->capped->sql;
  auto text = withStatementLimits(server_.flavour, sql, limits.timeout, limits.max_rows);
  if (!text) return text.error();
  auto binds = ParamBinds::make(params);
  if (!binds) return binds.error();
  if (auto s = checkRequestSize(*text, params); !s) return s.error();

  if (auto s = beginReadOnly(continuing); !s) return s.error();
  // The transaction stays open: the next reset rolls it back (nothing to commit in READ ONLY).
  return executePrepared(*text, *binds, limits, stop,
                         cap != nullptr && cap->capped != nullptr ? cap : nullptr);
}

Result<std::vector<ShapeColumn>> Connection::describeColumns(std::string_view sql,
                                                             const CallLimits& limits) {
  begun_ = false;
  if (!usable()) return makeError(Code::Unavailable, "describe: the connection is closed");
  auto text = withStatementLimits(server_.flavour, sql, limits.timeout, limits.max_rows);
  if (!text) return text.error();
  if (auto s = beginReadOnly(); !s) return s.error();
  StmtPtr stmt(mysql_stmt_init(handle_.get()));
  if (stmt == nullptr) return lastError("prepare");
  if (mysql_stmt_prepare(stmt.get(), text->data(), text->size()) != 0) {
    Error e = statementError(stmt.get(), "prepare");
    if (e.code == Code::Unavailable) broken_ = true;
    return e;
  }
  begun_ = true;
  return shapeOf(stmt.get());
}

Result<StatementShape> Connection::describe(std::string_view sql, const CallLimits& limits,
                                            const std::stop_token& stop) {
  begun_ = false;
  if (!usable()) return makeError(Code::Unavailable, "describe: the connection is closed");
  if (stop.stop_requested()) return makeError(Code::Cancelled, "describe: cancelled");
  // The text a call prepares (with its limits), so the shape is the one a call gets.
  auto text = withStatementLimits(server_.flavour, sql, limits.timeout, limits.max_rows);
  if (!text) return text.error();
  if (auto s = checkRequestSize(*text, {}); !s) return s.error();

  if (auto s = beginReadOnly(); !s) return s.error();
  Result<StatementShape> result = makeError(Code::Internal, "not described");
  {
    StmtPtr stmt(mysql_stmt_init(handle_.get()));
    if (stmt == nullptr) {
      result = lastError("prepare");
    } else if (mysql_stmt_prepare(stmt.get(), text->data(), text->size()) != 0) {
      result = statementError(stmt.get(), "prepare");
    } else {
      StatementShape shape;
      shape.param_count = mysql_stmt_param_count(stmt.get());
      ResPtr meta(mysql_stmt_result_metadata(stmt.get()));
      if (meta != nullptr) {
        const unsigned n = mysql_num_fields(meta.get());
        const MYSQL_FIELD* fields = mysql_fetch_fields(meta.get());
        for (unsigned i = 0; i < n && fields != nullptr; ++i) {
          shape.columns.push_back(
              {std::string(fields[i].name, fields[i].name_length), columnTypeName(fields[i])});
          shape.nullable.push_back((fields[i].flags & NOT_NULL_FLAG) == 0);
        }
      } else if (mysql_stmt_field_count(stmt.get()) != 0) {
        result = statementError(stmt.get(), "describe");
      }
      if (meta != nullptr || mysql_stmt_field_count(stmt.get()) == 0) result = std::move(shape);
    }
  }
  if (!result.ok() && result.error().code == Code::Unavailable) broken_ = true;
  return result;
}

// A request larger than max_allowed_packet makes the server drop the connection ("server has
// gone away"); refused here instead, with the connection kept.
Status Connection::checkRequestSize(std::string_view text, std::span<const Param> params) const {
  constexpr std::uint64_t kPerParamOverhead = 16;
  std::uint64_t total = text.size();
  for (const auto& p : params) {
    total += kPerParamOverhead;
    if (const auto* s = std::get_if<std::string>(&p)) total += s->size();
    if (const auto* b = std::get_if<Bytes>(&p)) total += b->data.size();
  }
  if (server_.max_packet != 0 && total > server_.max_packet) {
    return makeError(Code::ResourceExhausted,
                     "call: the statement and its parameters (" + std::to_string(total) +
                         " bytes) exceed the server's max_allowed_packet (" +
                         std::to_string(server_.max_packet) + " bytes)");
  }
  return {};
}

Result<QueryResult> Connection::executePrepared(const std::string& text, ParamBinds& binds,
                                                const CallLimits& limits,
                                                const std::stop_token& stop, SourceCapRun* cap) {
  StmtPtr stmt(mysql_stmt_init(handle_.get()));
  if (stmt == nullptr) return lastError("prepare");
  if (auto s = prepare(stmt.get(), text, binds.size()); !s) {
    const Code code = s.error().code;
    if (cap != nullptr && cap->capped->wrapped && code != Code::Unavailable &&
        code != Code::Cancelled && code != Code::TimedOut)
      cap->refused = true;  // the server's verdict on the wrapper's text, not a lost call
    if (s.error().code == Code::Unavailable) broken_ = true;
    return s.error();
  }
  if (cap != nullptr && !sameShape(shapeOf(stmt.get()), *cap->capped)) {
    // Prepared, not executed: the statement's columns are not the ones the wrapper was written
    // for (a table altered under SELECT *, a column type changed).
    cap->reshaped = true;
    return makeError(Code::Internal, "the statement's result columns changed; retry");
  }
  const CappedStatement* capped = cap != nullptr ? cap->capped : nullptr;
  if (binds.size() > 0 && mysql_stmt_bind_param(stmt.get(), binds.data()) != 0) {
    return statementError(stmt.get(), "bind");
  }
  Canceller canceller(dsn_, threadId(), server_.flavour);
  Result<QueryResult> result = makeError(Code::Internal, "not run");
  {
    // Scoped to this statement: the callback only starts the cancel (on a thread of its own: the
    // thread requesting the stop never waits for the database), and the canceller's destructor,
    // before this function returns, waits for it, so a KILL can never be sent after this call
    // has moved on (cancel.hpp). A stop requested before this point finds nothing executing;
    // executeAndRead checks the token first.
    std::stop_callback onStop(stop, [&canceller] { canceller.cancel(); });
    canceller.executing(true);
    result = executeAndRead(stmt.get(), limits, stop, capped);
    canceller.executing(false);
  }
  if (!result.ok() && (canceller.fired() || stop.stop_requested()) &&
      result.error().code != Code::Unavailable) {
    Error cancelled = makeError(Code::Cancelled, "call: the statement was cancelled");
    cancelled.detail = operatorText(result.error());  // e.g. "execute: ... (error 1317, ...)"
    return cancelled;
  }
  if (!result.ok() && result.error().code == Code::Unavailable) broken_ = true;
  return result;
}

Status Connection::prepare(MYSQL_STMT* stmt, const std::string& text, std::size_t paramCount) {
  if (mysql_stmt_prepare(stmt, text.data(), text.size()) != 0)
    return statementError(stmt, "prepare");
  if (mysql_stmt_param_count(stmt) != paramCount) {
    return makeError(Code::InvalidArgument, "prepare: the statement takes " +
                                                std::to_string(mysql_stmt_param_count(stmt)) +
                                                " parameters, " + std::to_string(paramCount) +
                                                " given");
  }
  return {};
}

// No cursor: the rows come with the execute's answer, read one by one. A cursor would cost a
// round trip per fetch, and the server materialises a cursor's whole result in a temporary table
// before the first fetch (measured: the slowest round trip of a call). The statement's own
// sql_select_limit (max_rows + 1, time_limit.hpp) stops the server after the row that tells the
// result was cut; what the byte cap leaves unread of those rows the client reads and drops when
// the statement closes, one row at a time (at most max_rows + 1 rows, as a cursor's fetch sent).
Result<QueryResult> Connection::executeAndRead(MYSQL_STMT* stmt, const CallLimits& limits,
                                               const std::stop_token& stop,
                                               const CappedStatement* capped) {
  if (stop.stop_requested()) return makeError(Code::Cancelled, "call: cancelled");
  if (mysql_stmt_execute(stmt) != 0) return statementError(stmt, "execute");
  if (mysql_stmt_field_count(stmt) == 0) return QueryResult{};
  return readRows(
      stmt, limits, [&stop] { return stop.stop_requested(); }, capped);
}

}  // namespace mcpdb::mysql
