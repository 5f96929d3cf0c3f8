#include "engines/postgres/sqlstate.hpp"

#include <re2/re2.h>

namespace mcpdb::postgres {
namespace {

struct Known {
  const char* state;
  const char* name;
  Code code;
  const char* summary;
};

// Specific conditions first (errcodes.txt names); class rules below cover the rest.
constexpr Known kKnown[] = {
    {"25006", "read_only_sql_transaction", Code::PermissionDenied,
     "the transaction is read-only, writes are refused"},
    {"42501", "insufficient_privilege", Code::PermissionDenied,
     "the database role lacks a privilege this query needs"},
    {"57014", "query_canceled", Code::TimedOut, "the statement was cancelled (timeout)"},
    {"57P01", "admin_shutdown", Code::Unavailable,
     "the database server is shutting down or terminated the session"},
    {"57P02", "crash_shutdown", Code::Unavailable, "the database server crashed"},
    {"57P03", "cannot_connect_now", Code::Unavailable, "the database server is starting up"},
    {"57P05", "idle_session_timeout", Code::Unavailable, "the session was closed for being idle"},
    {"25P03", "idle_in_transaction_session_timeout", Code::Unavailable,
     "the session was closed for being idle in a transaction"},
    {"42P01", "undefined_table", Code::FailedPrecondition,
     "the allowlisted query refers to a table that does not exist (check the configuration)"},
    {"42703", "undefined_column", Code::FailedPrecondition,
     "the allowlisted query refers to a column that does not exist (check the configuration)"},
    {"42883", "undefined_function", Code::FailedPrecondition,
     "the allowlisted query uses a function or operator that does not exist for these types (check "
     "the configuration)"},
    {"3F000", "invalid_schema_name", Code::FailedPrecondition,
     "the allowlisted query refers to a schema that does not exist (check the configuration)"},
    {"42601", "syntax_error", Code::FailedPrecondition,
     "the allowlisted query has a syntax error (check the configuration)"},
    {"42804", "datatype_mismatch", Code::InvalidArgument,
     "an argument has the wrong type for this query"},
    {"42P18", "indeterminate_datatype", Code::FailedPrecondition,
     "the allowlisted query does not determine a parameter's type (add a cast in the "
     "configuration)"},
    {"22P02", "invalid_text_representation", Code::InvalidArgument,
     "an argument is not valid for its type"},
    {"22007", "invalid_datetime_format", Code::InvalidArgument,
     "an argument is not a valid date or time"},
    {"22008", "datetime_field_overflow", Code::InvalidArgument,
     "an argument is a date or time out of range"},
    {"22003", "numeric_value_out_of_range", Code::InvalidArgument,
     "a value is out of range for its type"},
    {"22012", "division_by_zero", Code::InvalidArgument,
     "the query divided by zero for these arguments"},
    {"22001", "string_data_right_truncation", Code::InvalidArgument,
     "an argument is too long for its type"},
    {"22021", "character_not_in_repertoire", Code::InvalidArgument,
     "an argument is not valid in the database encoding"},
    {"2201W", "invalid_row_count_in_limit_clause", Code::InvalidArgument,
     "an argument is not a valid LIMIT"},
    {"53100", "disk_full", Code::ResourceExhausted, "the database server is out of disk space"},
    {"53200", "out_of_memory", Code::ResourceExhausted, "the database server is out of memory"},
    {"53300", "too_many_connections", Code::Unavailable,
     "the database server has too many connections"},
    {"54000", "program_limit_exceeded", Code::ResourceExhausted,
     "the query exceeded a database limit"},
    {"40001", "serialization_failure", Code::Unavailable,
     "a serialization conflict; retrying may help"},
    {"40P01", "deadlock_detected", Code::Unavailable, "a deadlock was detected; retrying may help"},
    {"55P03", "lock_not_available", Code::Unavailable,
     "a lock was not available; retrying may help"},
    {"0A000", "feature_not_supported", Code::FailedPrecondition,
     "the query uses a feature the database does not support"},
};

struct ClassRule {
  const char* cls;
  Code code;
  const char* summary;
};

constexpr ClassRule kClasses[] = {
    {"08", Code::Unavailable, "the connection to the database failed"},
    {"22", Code::InvalidArgument, "a value is not valid for this query"},
    {"23", Code::Internal, "an integrity constraint was violated"},
    {"25", Code::FailedPrecondition, "the transaction state does not allow this"},
    {"28", Code::FailedPrecondition, "the database refused the credentials"},
    {"40", Code::Unavailable, "the transaction was rolled back; retrying may help"},
    {"42", Code::InvalidArgument, "the query is not valid for these arguments"},
    {"53", Code::ResourceExhausted, "the database server ran out of a resource"},
    {"54", Code::ResourceExhausted, "the query exceeded a database limit"},
    {"55", Code::FailedPrecondition, "a database object is not in the required state"},
    {"57", Code::Unavailable, "the database server intervened"},
    {"58", Code::Unavailable, "the database server had a system error"},
};

}  // namespace

Code codeForSqlstate(std::string_view sqlstate) {
  for (const auto& k : kKnown) {
    if (sqlstate == k.state) return k.code;
  }
  for (const auto& c : kClasses) {
    if (sqlstate.substr(0, 2) == c.cls) return c.code;
  }
  return Code::Internal;
}

Error errorFromSqlstate(std::string_view sqlstate) {
  std::string state(sqlstate.substr(0, 5));
  // Only the five [0-9A-Z] characters of a SQLSTATE are ever echoed.
  for (char c : state) {
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'))) {
      state = "-----";
      break;
    }
  }
  if (state.size() != 5) state = "-----";
  for (const auto& k : kKnown) {
    if (state == k.state) {
      return makeError(k.code, std::string("the database refused the query: ") + k.summary +
                                   " (SQLSTATE " + state + " " + k.name + ")");
    }
  }
  for (const auto& c : kClasses) {
    if (state.substr(0, 2) == c.cls) {
      return makeError(c.code, std::string("the database refused the query: ") + c.summary +
                                   " (SQLSTATE " + state + ")");
    }
  }
  return makeError(Code::Internal,
                   "the database reported an unexpected error (SQLSTATE " + state + ")");
}

namespace {

// The server's (or libpq's) own reason from a connection failure message: its first line without
// libpq's `connection to server at "...", port N failed: ` prefix and the `FATAL:  ` tag. libpq
// messages name the host, port, user and database, never the password.
std::string connectReason(std::string_view message) {
  std::string_view line = message.substr(0, message.find('\n'));
  if (line.rfind("connection to server", 0) == 0) {
    if (const auto at = line.find(" failed: "); at != std::string_view::npos)
      line.remove_prefix(at + 9);
  }
  for (std::string_view tag : {"FATAL:  ", "ERROR:  "}) {
    if (line.rfind(tag, 0) == 0) line.remove_prefix(tag.size());
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
  return std::string(line.substr(0, 300));
}

Error withDetail(Code code, std::string message, std::string_view where,
                 std::string_view libpq_message) {
  std::string detail(where.empty() ? "" : "at " + std::string(where));
  const std::string reason = connectReason(libpq_message);
  if (!reason.empty()) detail += (detail.empty() ? "" : ": ") + reason;
  return Error{code, std::move(message), std::move(detail)};
}

}  // namespace

Error connectError(std::string_view message, std::string_view where) {
  const std::string m(message);
  auto has = [&m](const char* s) { return m.find(s) != std::string::npos; };
  if (has("password authentication failed") || has("authentication failed") ||
      has("no password supplied") || has("PAM authentication")) {
    return withDetail(
        Code::FailedPrecondition,
        "cannot connect to PostgreSQL: authentication failed for the configured role (check the "
        "credentials in the environment)",
        where, message);
  }
  if (has("database \"") && has("does not exist")) {
    return withDetail(Code::FailedPrecondition,
                      "cannot connect to PostgreSQL: the configured database does not exist "
                      "(check the database name in POSTGRES_DSN)",
                      where, message);
  }
  if (has("role \"") && has("does not exist")) {
    return withDetail(Code::FailedPrecondition,
                      "cannot connect to PostgreSQL: the configured role does not exist (check the "
                      "user name in POSTGRES_DSN)",
                      where, message);
  }
  if (has("does not exist")) {
    return withDetail(
        Code::FailedPrecondition,
        "cannot connect to PostgreSQL: the configured role or database does not exist", where,
        message);
  }
  if (has("no pg_hba.conf entry") || has("permission denied")) {
    return withDetail(Code::FailedPrecondition,
                      "cannot connect to PostgreSQL: the server refused this connection", where,
                      message);
  }
  if (has("certificate") || has("SSL")) {
    return withDetail(
        Code::FailedPrecondition,
        "cannot connect to PostgreSQL: the TLS handshake or certificate verification failed", where,
        message);
  }
  if (has("timeout")) {
    return withDetail(Code::Unavailable, "cannot connect to PostgreSQL: connecting timed out",
                      where, message);
  }
  if (has("starting up") || has("shutting down")) {
    return withDetail(Code::Unavailable,
                      "cannot connect to PostgreSQL: the server is starting up or shutting down",
                      where, message);
  }
  return withDetail(Code::Unavailable, "cannot connect to PostgreSQL: the server is unreachable",
                    where, message);
}

namespace {

// Byte-wise (Latin-1) so a message that is not valid UTF-8 is redacted all the same; RE2 runs in
// time linear in the message (std::regex recursed per character and could exhaust the stack).
RE2::Options redactOptions() {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_log_errors(false);
  return o;
}

}  // namespace

std::string redactLibpqMessage(std::string_view message) {
  static const RE2 kQuoted(R"("[^"]*")", redactOptions());
  static const RE2 kHostPort(R"((at |host |port )\S+)", redactOptions());
  static const RE2 kUser(R"(user \S+)", redactOptions());
  std::string s(message);
  RE2::GlobalReplace(&s, kQuoted, R"("***")");
  RE2::GlobalReplace(&s, kHostPort, R"(\1***)");
  RE2::GlobalReplace(&s, kUser, "user ***");
  return s;
}

}  // namespace mcpdb::postgres
