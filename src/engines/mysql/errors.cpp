#include "engines/mysql/errors.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "common/utf8.hpp"

namespace mcpdb::mysql {
namespace {

struct Known {
  unsigned number;
  Code code;
  bool messageIsSafe;  // the server's text names objects (user, table, column), never values
};

// Numbers from MariaDB's and MySQL's errmsg lists (server 1xxx/3xxx, client 2xxx).
constexpr std::array<Known, 43> kKnown = {{
    // Time limits and cancellation.
    {errnum::kStatementTimeout, Code::TimedOut, false},
    {errnum::kQueryTimeout, Code::TimedOut, false},
    {errnum::kQueryInterrupted, Code::Cancelled, false},
    {1205, Code::TimedOut, false},  // ER_LOCK_WAIT_TIMEOUT
    // Privileges and read-only.
    {1044, Code::PermissionDenied, true},  // ER_DBACCESS_DENIED_ERROR
    {1045, Code::PermissionDenied, true},  // ER_ACCESS_DENIED_ERROR
    {1142, Code::PermissionDenied, true},  // ER_TABLEACCESS_DENIED_ERROR
    {1143, Code::PermissionDenied, true},  // ER_COLUMNACCESS_DENIED_ERROR
    {1227, Code::PermissionDenied, true},  // ER_SPECIFIC_ACCESS_DENIED_ERROR
    {1370, Code::PermissionDenied, true},  // ER_PROCACCESS_DENIED_ERROR
    {1698, Code::PermissionDenied, true},  // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
    {1290, Code::PermissionDenied, true},  // ER_OPTION_PREVENTS_STATEMENT (read_only server)
    {errnum::kReadOnlyTransaction, Code::PermissionDenied, true},
    {1148, Code::PermissionDenied, true},  // ER_NOT_ALLOWED_COMMAND (LOCAL INFILE off)
    {4166, Code::PermissionDenied, true},  // ER_LOAD_INFILE_CAPABILITY_DISABLED (MariaDB)
    // Unreachable, gone, overloaded.
    {1040, Code::Unavailable, true},  // ER_CON_COUNT_ERROR
    {1053, Code::Unavailable, true},  // ER_SERVER_SHUTDOWN
    {1203, Code::Unavailable, true},  // ER_TOO_MANY_USER_CONNECTIONS
    {1927, Code::Unavailable, true},  // ER_CONNECTION_KILLED
    {2002, Code::Unavailable, true},  // CR_CONNECTION_ERROR
    {2003, Code::Unavailable, true},  // CR_CONN_HOST_ERROR
    {2005, Code::Unavailable, true},  // CR_UNKNOWN_HOST
    {2006, Code::Unavailable, true},  // CR_SERVER_GONE_ERROR
    {2013, Code::Unavailable, true},  // CR_SERVER_LOST
    {2026, Code::Unavailable, true},  // CR_SSL_CONNECTION_ERROR
    {2055, Code::Unavailable, true},  // CR_SERVER_LOST_EXTENDED
    // Bad statement or parameters.
    {1064, Code::InvalidArgument, false},    // ER_PARSE_ERROR (quotes the statement)
    {1210, Code::InvalidArgument, false},    // ER_WRONG_ARGUMENTS
    {1292, Code::InvalidArgument, false},    // ER_TRUNCATED_WRONG_VALUE
    {1366, Code::InvalidArgument, false},    // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
    {1300, Code::InvalidArgument, false},    // ER_INVALID_CHARACTER_STRING
    {1690, Code::InvalidArgument, false},    // ER_DATA_OUT_OF_RANGE
    {2031, Code::InvalidArgument, false},    // CR_PARAMS_NOT_BOUND
    {2036, Code::InvalidArgument, false},    // CR_UNSUPPORTED_PARAM_TYPE
    {1054, Code::InvalidArgument, true},     // ER_BAD_FIELD_ERROR
    {1052, Code::InvalidArgument, true},     // ER_NON_UNIQ_ERROR (an ambiguous column)
    {1109, Code::InvalidArgument, true},     // ER_UNKNOWN_TABLE
    {1305, Code::InvalidArgument, true},     // ER_SP_DOES_NOT_EXIST (a stored function)
    {1356, Code::Internal, true},            // ER_VIEW_INVALID (names the view)
    {1449, Code::Internal, true},            // ER_NO_SUCH_USER (a view's or routine's definer)
    {1146, Code::NotFound, true},            // ER_NO_SUCH_TABLE
    {1049, Code::NotFound, true},            // ER_BAD_DB_ERROR
    {1153, Code::ResourceExhausted, false},  // ER_NET_PACKET_TOO_LARGE
}};

// The code for an unlisted number, from its SQLSTATE class.
Code codeForSqlstate(std::string_view sqlstate) {
  const auto cls = sqlstate.substr(0, 2);
  if (cls == "08") return Code::Unavailable;
  if (cls == "22") return Code::InvalidArgument;
  if (cls == "28") return Code::PermissionDenied;
  if (cls == "42") return Code::InvalidArgument;
  if (cls == "70") return Code::Cancelled;
  return Code::Internal;
}

std::string_view describe(Code code) {
  switch (code) {
    case Code::TimedOut: return "the statement ran out of time";
    case Code::Cancelled: return "the statement was cancelled";
    case Code::PermissionDenied:
      return "the database refused the statement (privileges or read-only)";
    case Code::Unavailable: return "the database is unreachable or the connection was lost";
    case Code::InvalidArgument: return "the database rejected the statement or a parameter";
    case Code::NotFound: return "the database object does not exist";
    case Code::ResourceExhausted: return "the request is larger than the database accepts";
    default: return "the database reported an error";
  }
}

}  // namespace

Error classifyError(unsigned errorNumber, std::string_view sqlstate, std::string_view serverMessage,
                    std::string_view what) {
  const auto* known = std::find_if(kKnown.begin(), kKnown.end(),
                                   [&](const Known& k) { return k.number == errorNumber; });
  const Code code = known != kKnown.end() ? known->code : codeForSqlstate(sqlstate);
  // A refused login is not a refused statement: say which it is, so the operator looks at the
  // account (user, password, the host it may connect from) and not at grants.
  const bool login_refused = errorNumber == 1045 || errorNumber == 1698;
  std::string message =
      std::string(what) + ": " +
      (login_refused ? std::string("the database refused the login (wrong user or password, or "
                                   "the account may not connect from this host)")
                     : std::string(describe(code))) +
      " (error " + std::to_string(errorNumber);
  if (!sqlstate.empty()) message += ", SQLSTATE " + withInvalidUtf8Replaced(sqlstate.substr(0, 5));
  message += ")";
  Error e = makeError(code, std::move(message));
  // Object names (schemas, tables, columns, accounts) are catalog text: the operator's, never the
  // agent's (issue 28): they go to the detail only.
  if (known != kKnown.end() && known->messageIsSafe && !serverMessage.empty()) {
    e.detail = withInvalidUtf8Replaced(serverMessage.substr(0, 300));
  }
  return e;
}

unsigned errorNumberOf(const Error& e) {
  constexpr std::string_view kMark = "(error ";
  const auto at = e.message.rfind(kMark);
  if (at == std::string::npos) return 0;
  unsigned n = 0;
  for (std::size_t i = at + kMark.size(); i < e.message.size(); ++i) {
    const char c = e.message[i];
    if (c < '0' || c > '9' || n > 100000) break;
    n = n * 10 + static_cast<unsigned>(c - '0');
  }
  return n;
}

}  // namespace mcpdb::mysql
