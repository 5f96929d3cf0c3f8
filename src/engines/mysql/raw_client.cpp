#include "engines/mysql/raw_client.hpp"

#include "engines/mysql/errors.hpp"

namespace mcpdb::mysql {
namespace {

using ResPtr = Owned<MYSQL_RES, mysql_free_result>;

constexpr const char* kNoLibrary = "libmariadb could not be loaded (install libmariadb3)";

Status setOption(MYSQL* m, mysql_option option, const void* value) {
  if (mysql_options(m, option, value) != 0) {
    return makeError(Code::Internal, "connect: libmariadb refused a client option");
  }
  return {};
}

Status applyTimeouts(MYSQL* m, const Dsn& dsn, std::chrono::seconds io) {
  const unsigned connect = static_cast<unsigned>(dsn.connect_timeout.count());
  const unsigned rw = static_cast<unsigned>(io.count());
  if (auto s = setOption(m, MYSQL_OPT_CONNECT_TIMEOUT, &connect); !s) return s;
  if (auto s = setOption(m, MYSQL_OPT_READ_TIMEOUT, &rw); !s) return s;
  return setOption(m, MYSQL_OPT_WRITE_TIMEOUT, &rw);
}

// Never reading a client file for LOAD DATA LOCAL, whatever a statement asks; the character set
// every string crosses the wire in.
Status applyFixedOptions(MYSQL* m) {
  const unsigned noLocalInfile = 0;
  if (auto s = setOption(m, MYSQL_OPT_LOCAL_INFILE, &noLocalInfile); !s) return s;
  return setOption(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
}

// TCP unless the DSN names a socket: libmariadb would otherwise take host "localhost" to mean
// its default Unix socket and silently ignore the port.
Status applyProtocol(MYSQL* m, const Dsn& dsn) {
  const unsigned protocol = dsn.socket.empty() ? MYSQL_PROTOCOL_TCP : MYSQL_PROTOCOL_SOCKET;
  return setOption(m, MYSQL_OPT_PROTOCOL, &protocol);
}

Status applyPlan(MYSQL* m, const ConnectPlan& plan) {
  const my_bool on = 1;
  if (!plan.ssl_ca.empty()) {
    if (auto s = setOption(m, MYSQL_OPT_SSL_CA, plan.ssl_ca.c_str()); !s) return s;
  }
  if (plan.ssl_enforce) {
    if (auto s = setOption(m, MYSQL_OPT_SSL_ENFORCE, &on); !s) return s;
  }
  if (plan.ssl_verify_server_cert) {
    if (auto s = setOption(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on); !s) return s;
  }
  if (plan.cleartext_plugin) {
    if (auto s = setOption(m, MYSQL_ENABLE_CLEARTEXT_PLUGIN, &on); !s) return s;
  }
  return {};
}

Status checkTlsInUse(MYSQL* m, const Dsn& dsn) {
  if (mysql_get_ssl_cipher(m) == nullptr) {
    return makeError(Code::Unavailable,
                     "connect: ssl-mode=" + std::string(sslModeName(dsn.ssl_mode)) +
                         " but the server did not use TLS");
  }
  return {};
}

const char* orNull(const std::string& s) {
  return s.empty() ? nullptr : s.c_str();
}

}  // namespace

// libmariadb 3.3 has one TLS switch that verifies (chain + host name together) and an "enforce"
// switch that still connects in clear text when the server offers no TLS; REQUIRED is therefore
// completed by the check after the handshake (require_tls).
Result<ConnectPlan> planConnect(const Dsn& dsn) {
  ConnectPlan plan;
  const bool verify = dsn.ssl_mode == SslMode::VerifyCa || dsn.ssl_mode == SslMode::VerifyIdentity;
  if (dsn.ssl_mode != SslMode::Disabled) {
    plan.ssl_ca = dsn.ssl_ca;
    plan.ssl_enforce = true;
    plan.ssl_verify_server_cert = verify;
    plan.require_tls = dsn.ssl_mode != SslMode::Preferred;
  }
  if (!dsn.iam) {
    plan.password = dsn.password;
    return plan;
  }
  // enableIam() already checked these; checked again because the token must never go out over
  // an unverified channel, whoever built the Dsn.
  if (!dsn.password.empty()) {
    return makeError(Code::FailedPrecondition,
                     "connect: a password and IAM auth exclude each other");
  }
  if (!verify || !dsn.socket.empty() || dsn.host.empty() || dsn.user.empty()) {
    return makeError(Code::FailedPrecondition,
                     "connect: IAM auth needs a TCP host, a user and ssl-mode=VERIFY_IDENTITY");
  }
  if (!dsn.iam_token) {
    return makeError(Code::FailedPrecondition,
                     "connect: IAM auth is not available here (no RDS token source)");
  }
  auto token = dsn.iam_token(dsn.host, dsn.port, dsn.user);
  if (!token) return token.error();
  if (token->empty()) return makeError(Code::Internal, "connect: the RDS token is empty");
  plan.password = std::move(*token);
  plan.ssl_verify_server_cert = true;
  plan.require_tls = true;
  plan.cleartext_plugin = true;
  return plan;
}

Error lastErrorOf(MYSQL* mysql, std::string_view what) {
  if (mysql == nullptr) return makeError(Code::Unavailable, std::string(what) + ": " + kNoLibrary);
  return classifyError(mysql_errno(mysql), mysql_sqlstate(mysql), mysql_error(mysql), what);
}

Result<MysqlPtr> connectRaw(const Dsn& dsn, std::chrono::seconds ioTimeout) {
  MysqlPtr m(mysql_init(nullptr));
  if (m == nullptr) return makeError(Code::Unavailable, std::string("connect: ") + kNoLibrary);
  auto plan = planConnect(dsn);
  if (!plan) return plan.error();
  if (auto s = applyFixedOptions(m.get()); !s) return s.error();
  if (auto s = applyTimeouts(m.get(), dsn, ioTimeout); !s) return s.error();
  if (auto s = applyPlan(m.get(), *plan); !s) return s.error();
  if (auto s = applyProtocol(m.get(), dsn); !s) return s.error();
  // Client flags 0: in particular no CLIENT_MULTI_STATEMENTS (one statement per call, always).
  if (mysql_real_connect(m.get(), dsn.socket.empty() ? dsn.host.c_str() : nullptr, dsn.user.c_str(),
                         plan->password.c_str(), orNull(dsn.database), dsn.port, orNull(dsn.socket),
                         0) == nullptr) {
    Error e = lastErrorOf(m.get(), "connect");
    e.detail = e.detail.empty() ? redactedDsn(dsn) : e.detail + "; " + redactedDsn(dsn);
    return e;
  }
  if (plan->require_tls) {
    if (auto s = checkTlsInUse(m.get(), dsn); !s) return s.error();
  }
  return m;
}

Result<std::optional<std::string>> queryFirstValue(MYSQL* mysql, std::string_view sql,
                                                   std::string_view what) {
  if (mysql_real_query(mysql, sql.data(), sql.size()) != 0) return lastErrorOf(mysql, what);
  ResPtr res(mysql_store_result(mysql));
  if (res == nullptr) {
    if (mysql_field_count(mysql) != 0) return lastErrorOf(mysql, what);
    return std::optional<std::string>{};  // a statement without a result set
  }
  MYSQL_ROW row = mysql_fetch_row(res.get());
  if (row == nullptr || mysql_num_fields(res.get()) == 0 || row[0] == nullptr) {
    return std::optional<std::string>{};
  }
  const unsigned long* lengths = mysql_fetch_lengths(res.get());
  return std::optional<std::string>(std::string(row[0], lengths[0]));
}

}  // namespace mcpdb::mysql
