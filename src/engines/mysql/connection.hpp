#pragma once
// One MySQL/MariaDB connection of the agent's principal, set up once for read-only use:
// - connect with connect/read/write timeouts, TLS per ssl-mode (VERIFY_* check the chain and the
//   host name), utf8mb4, multi-statements off, LOCAL INFILE off;
// - flavour and version from SELECT VERSION(), and the server's max_allowed_packet (a larger
//   request is refused here: the server would drop the connection);
// - the session: READ ONLY transactions and an explicit sql_mode that keeps MySQL's default lexing
//   (no ANSI_QUOTES, NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT, IGNORE_SPACE, ORACLE...), read back
//   and verified at connect;
// - run(): one statement as a server-side prepared statement (binary protocol) with typed
//   parameters, inside START TRANSACTION READ ONLY (checked read-only by the server's status
//   flags), under per-call time and row limits carried by the statement text (time_limit.hpp), read
//   under row and byte caps, and cancellable from another thread (cancel.hpp). The transaction
//   and whatever the statement left in the session end with the next resetSession(): the pool
//   runs it after the call's answer was handed back (runtime.hpp), and run() itself runs it first
//   when the connection was not reset since its previous call, so no call ever starts on a
//   session another call used. The reset also begins the next call's READ ONLY transaction, so
//   that round trip is off the call's latency too.
// - describe(): the same statement prepared the same way but never executed: its result columns
//   and parameter count (schema resources).
// Not thread-safe: one call at a time; only the stop token may be used from another thread.

#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <mysql.h>

#include "common/handle.hpp"
#include "common/result.hpp"
#include "engines/mysql/client_types.hpp"
#include "engines/mysql/dsn.hpp"
#include "engines/mysql/params.hpp"
#include "engines/mysql/raw_client.hpp"
#include "engines/mysql/source_cap.hpp"

namespace mcpdb::mysql {

// The sql_mode every session runs with: strict, and nothing that changes how text is lexed.
inline constexpr std::string_view kSessionSqlMode =
    "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

struct ConnectOptions {
  // Read/write timeouts of the socket: a backstop for a server that stops answering (the
  // statement's own limit is enforced by the server and is always shorter).
  std::chrono::seconds io_timeout{60};
};

// What preparing a statement tells without executing it.
struct StatementShape {
  std::vector<Column> columns;  // named and typed as the row reader names them
  std::vector<bool> nullable;   // per column: false when the server says NOT NULL
  std::size_t param_count = 0;
};

class Connection {
 public:
  // Connects and sets the session up; Unavailable/PermissionDenied/... with a safe message.
  static Result<Connection> open(const Dsn& dsn, const ConnectOptions& options = {});

  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() = default;

  const ServerInfo& server() const { return server_; }
  // The server's id of this session (CONNECTION_ID()), the target of KILL.
  unsigned long threadId() const;
  // False once the connection was lost (then every call fails with Unavailable).
  bool usable() const { return handle_ != nullptr && !broken_; }

  // Runs one allowlisted statement (the guard's job) with `params`, under `limits`; a stop
  // requested on `stop` cancels it on the server. request_stop() then runs the cancel in the
  // requesting thread and returns once the KILL was sent (a second connection: up to its 5 s
  // connect timeout when the server is unreachable).
  // With `cap` (the byte cap at the source, source_cap.hpp): runs cap->capped->sql instead, once
  // its prepared result is seen to have the shape it was written for (else cap->reshaped, and
  // nothing runs); a wrapper the server refuses to prepare sets cap->refused.
  struct SourceCapRun {
    const CappedStatement* capped = nullptr;
    bool reshaped = false;
    bool refused = false;
  };
  Result<QueryResult> run(std::string_view sql, std::span<const Param> params,
                          const CallLimits& limits, const std::stop_token& stop = {},
                          SourceCapRun* cap = nullptr);
  // The result columns of `sql` as the byte cap at the source needs them (source_cap.hpp),
  // prepared as run() prepares it, never executed, in the call's READ ONLY transaction: the next
  // run() on this connection continues that transaction.
  Result<std::vector<ShapeColumn>> describeColumns(std::string_view sql, const CallLimits& limits);

  // Prepares `sql` exactly as run() does (limited text, inside START TRANSACTION READ ONLY,
  // ended by the next reset) and reads its result metadata and parameter count; the
  // statement is never executed.
  Result<StatementShape> describe(std::string_view sql, const CallLimits& limits,
                                  const std::stop_token& stop = {});

  // Runs `sql` as plain text, reading back at most the first column of the first row: the
  // session set-up here and test fixtures. Never for the agent's statements.
  Result<std::string> queryValue(std::string_view sql);
  // Runs `sql` as plain text and reads the first column of every row (NULL as nullopt): the
  // doctor's SHOW GRANTS. Never for the agent's statements.
  Result<std::vector<std::optional<std::string>>> queryColumn(std::string_view sql);
  // Runs `sql` as plain text and reads every column of every row (NULL as nullopt), at most
  // `max_rows` rows (more is an error): the vetting's catalog look-ups. Never for the agent's
  // statements.
  using TextRow = std::vector<std::optional<std::string>>;
  Result<std::vector<TextRow>> queryRows(std::string_view sql, std::size_t max_rows);

  // Clears what a call may have left in the session (user variables, named locks, prepared
  // statements, temporary tables, its transaction) and sets the session up again. On failure the
  // connection is no longer usable().
  Status resetSession();
  // Begins the next call's READ ONLY transaction now, so the call does not wait for it (run()
  // checks it and begins another when it is gone): resetSession() does, and the pool on a
  // connection it opens.
  Status beginNextCall();
  // Whether a run() or describe() used the session since the last reset.
  bool needsReset() const { return needs_reset_; }

 private:
  Connection(MysqlPtr handle, Dsn dsn) : handle_(std::move(handle)), dsn_(std::move(dsn)) {}
  Status setUpSession(bool readBack);
  Status beginReadOnly(bool continuing = false);
  Status checkRequestSize(std::string_view text, std::span<const Param> params) const;
  Result<QueryResult> executePrepared(const std::string& text, ParamBinds& binds,
                                      const CallLimits& limits, const std::stop_token& stop,
                                      SourceCapRun* cap);
  static Status prepare(MYSQL_STMT* stmt, const std::string& text, std::size_t paramCount);
  static Result<QueryResult> executeAndRead(MYSQL_STMT* stmt, const CallLimits& limits,
                                            const std::stop_token& stop,
                                            const CappedStatement* capped);
  Status exec(std::string_view sql, std::string_view what);
  Error lastError(std::string_view what);

  MysqlPtr handle_;
  Dsn dsn_;  // kept for the cancelling side connection (cancel.hpp)
  ServerInfo server_;
  bool broken_ = false;
  bool needs_reset_ = false;  // a call used the session since the last reset
  bool begun_ = false;        // describeColumns() began the call's transaction; run() goes on
  bool pre_begun_ = false;    // resetSession() began the next call's READ ONLY transaction
};

// The server's flavour from its version string ("...-MariaDB..." or not).
Flavour flavourOf(std::string_view version);

}  // namespace mcpdb::mysql
