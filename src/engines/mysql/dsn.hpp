#pragma once
// The MySQL/MariaDB connection string:
//   mysql://user:password@host:port/database?ssl-mode=...&ssl-ca=PATH&connect-timeout=S
//   (also mariadb://; user, password and database percent-decoded; IPv6 as [::1]; a Unix socket
//   as ?socket=/path with host empty or `localhost`; ?iam=true for RDS IAM authentication).
// Errors name the part that is wrong and never contain any value from the text (so never the
// password); redactedDsn() is the form for logs.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace mcpdb::mysql {

// As MySQL's --ssl-mode. VERIFY_CA is checked as VERIFY_IDENTITY: libmariadb verifies the chain
// and the host name together (one switch), so asking for less gets more, never less.
enum class SslMode { Disabled, Preferred, Required, VerifyCa, VerifyIdentity };

std::string_view sslModeName(SslMode mode);

// Makes an RDS IAM authentication token for (host, port, user): a secret, valid 15 minutes, so
// called once for every new connection (iam.hpp has the production one).
using TokenSource = std::function<Result<std::string>(const std::string& host, std::uint16_t port,
                                                      const std::string& user)>;

struct Dsn {
  std::string user;
  std::string password;  // secret: never logged, never in an error
  std::string host;      // without brackets for IPv6; empty with a socket
  std::uint16_t port = 3306;
  std::string socket;    // Unix socket path (then host is unused)
  std::string database;  // may be empty
  SslMode ssl_mode = SslMode::Required;
  bool ssl_mode_explicit = false;  // the text named ssl-mode (else the default below applied)
  std::string ssl_ca;              // CA file for VERIFY_CA / VERIFY_IDENTITY
  std::chrono::seconds connect_timeout{10};
  // RDS IAM authentication (?iam=true, or the source's iam_auth): no password in the text; each
  // new connection sends a fresh token from `iam_token` (set by the runtime) as the password.
  bool iam = false;
  TokenSource iam_token;
};

// The default ssl-mode when the text names none: PREFERRED on the loopback and a Unix socket
// (nothing to protect on the wire; the local test server offers no TLS), REQUIRED elsewhere.
// Why not PREFERRED everywhere, as the mysql client does: PREFERRED silently falls back to clear
// text when a man in the middle strips the server's TLS offer, so a remote password and every row
// would cross the network unprotected without anyone noticing. REQUIRED fails loudly instead;
// VERIFY_IDENTITY (with ssl-ca) is what a production DSN should say.
SslMode defaultSslMode(std::string_view host, std::string_view socket);

// Turns RDS IAM authentication on, after checking the DSN can carry it: no password (the token
// is the password), a user and a TCP host (the token names host:port), and TLS that verifies the
// server (the token crosses the wire as clear text inside TLS): an explicit DISABLED, PREFERRED or
// REQUIRED is refused, anything else becomes VERIFY_IDENTITY. InvalidArgument naming the problem.
Status enableIam(Dsn& dsn);

// Parses `text`; never throws. Errors are InvalidArgument with a message naming the problem.
Result<Dsn> parseDsn(std::string_view text);

// "mysql://user:***@host:port/db?ssl-mode=REQUIRED..." (the password replaced, every other part
// re-encoded), for logs and error details.
std::string redactedDsn(const Dsn& dsn);

}  // namespace mcpdb::mysql
