#pragma once
// The libmariadb steps shared by the serving connection and the cancelling side connection:
// opening a connection with the DSN's TLS rules and the fixed client options, and plain-text
// queries that read one value.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <mysql.h>

#include "common/handle.hpp"
#include "common/result.hpp"
#include "engines/mysql/dsn.hpp"

namespace mcpdb::mysql {

using MysqlPtr = Owned<MYSQL, mysql_close>;

// What connectRaw sets on a new handle besides the fixed options, computed without a server so
// the security-relevant choices are tested directly.
struct ConnectPlan {
  std::string password;           // secret: the DSN's, or a fresh RDS IAM token; never logged
  bool cleartext_plugin = false;  // MYSQL_ENABLE_CLEARTEXT_PLUGIN: IAM only, and only over
                                  // verified TLS (RDS checks the token via mysql_clear_password)
  bool ssl_enforce = false;       // MYSQL_OPT_SSL_ENFORCE
  bool ssl_verify_server_cert = false;  // MYSQL_OPT_SSL_VERIFY_SERVER_CERT (chain + host name)
  std::string ssl_ca;                   // MYSQL_OPT_SSL_CA when not empty
  bool require_tls = false;             // after the handshake: refuse a session without TLS
};

// The plan for one new connection of `dsn`. In IAM mode, calls dsn.iam_token once (a fresh
// token per connection) and refuses anything but VERIFY_* TLS. Errors never contain the
// password or the token.
Result<ConnectPlan> planConnect(const Dsn& dsn);

// Connects (utf8mb4, no multi-statements, no LOCAL INFILE, timeouts, TLS per ssl-mode; REQUIRED
// and stronger refuse a session without TLS). Errors are safe: no password, no DSN text.
Result<MysqlPtr> connectRaw(const Dsn& dsn, std::chrono::seconds ioTimeout);

// The classified error of the last call on `mysql` (errors.hpp), or a plain message when the
// handle is null (the library could not be loaded).
Error lastErrorOf(MYSQL* mysql, std::string_view what);

// Runs `sql` as text; the first column of the first row when there is one (NULL reads as
// nullopt), the rest of the result discarded.
Result<std::optional<std::string>> queryFirstValue(MYSQL* mysql, std::string_view sql,
                                                   std::string_view what);

}  // namespace mcpdb::mysql
