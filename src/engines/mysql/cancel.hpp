#pragma once
// Cancelling the statement a connection is running, from another thread, over a second
// connection of the same user (a user may see and kill its own sessions without privileges).
//
// MariaDB: the running statement's QUERY_ID is read from information_schema.PROCESSLIST (the row
// whose ID is the session's CONNECTION_ID() and whose COMMAND is 'Execute', i.e. our prepared
// statement: the transaction's own statements are plain 'Query' commands), then
// `KILL QUERY ID <query_id>`: it kills that one statement or nothing, so it cannot hit the next.
//
// MySQL has no KILL QUERY ID; `KILL QUERY <connection id>` kills whatever the session runs when
// the KILL arrives. The race (our statement finishes between the PROCESSLIST check and the KILL,
// and the KILL lands on the session's next statement) is narrowed three ways: the check requires
// COMMAND = 'Execute' (only the statement itself, never START TRANSACTION/COMMIT, is one); the
// cancel is started by a stop_callback scoped to the statement and runs on a thread of its own,
// which the Canceller's destructor (at the end of that scope) joins, so the connection cannot
// start another call until the KILL has been sent; and the connection
// resets its session after every call. What remains: a KILL arriving after the Execute finished
// can interrupt the SET of the reset that follows the call (a read-only transaction: nothing is
// lost; the reset fails and the pool closes that connection instead of reusing it).

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include <mysql.h>

#include "common/side_task.hpp"

#include "engines/mysql/client_types.hpp"
#include "engines/mysql/dsn.hpp"

namespace mcpdb::mysql {

class Canceller {
 public:
  Canceller(const Dsn& dsn, unsigned long connectionId, Flavour flavour)
      : dsn_(dsn), connection_id_(connectionId), flavour_(flavour) {}
  // Waits for a cancel in progress (side_'s destructor): no KILL is sent after the statement's
  // scope ended.
  Canceller(const Canceller&) = delete;
  Canceller& operator=(const Canceller&) = delete;

  // The statement is (about to be) on the server / has finished.
  void executing(bool on) { executing_.store(on); }

  // From any thread, once: starts the KILL on a thread of its own and returns at once. The thread
  // asking (a stop callback runs on whoever requests the stop: the stdio reader that read
  // notifications/cancelled, the HTTP I/O thread that saw the client go) never waits for the
  // database: the side connection's connect, probes and KILL took up to seconds there.
  void cancel();
  bool fired() const { return fired_.load(); }

 private:
  void killOnSide();  // connects, finds the statement, sends the KILL
  bool killOnce(MYSQL* side);

  const Dsn& dsn_;
  unsigned long connection_id_;
  Flavour flavour_;
  std::atomic<bool> executing_{false};
  std::atomic<bool> fired_{false};
  SideTask side_;  // the KILL's thread, when cancel() started one; last: joined first
};

// The statements the cancelling side sends (pure functions, tested without a server).
std::string processlistProbe(Flavour flavour, unsigned long connectionId);
std::string killStatement(Flavour flavour, unsigned long connectionId, std::string_view queryId);

}  // namespace mcpdb::mysql
