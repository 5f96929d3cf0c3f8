#pragma once
// MySQL/MariaDB errors as Status codes with safe messages. Server messages often quote the data
// that failed ("Incorrect string value: '\xC3(' for column ..."), so a message is kept only for
// the error numbers whose text names objects, never values, and then only in the error's detail
// (the operator's: object names are catalog text, never shown to the agent); the message is the
// class, number and SQLSTATE alone.

#include <string_view>

#include "common/result.hpp"

namespace mcpdb::mysql {

// `what` says which step failed ("connect", "execute", ...). `serverMessage` is used only when
// the error number is known to carry no values.
Error classifyError(unsigned errorNumber, std::string_view sqlstate, std::string_view serverMessage,
                    std::string_view what);

// The server's error number in an Error classifyError() made (its message says "(error N"); 0
// for any other error.
unsigned errorNumberOf(const Error& e);

// The error numbers the classification and the client layer refer to by name.
namespace errnum {
inline constexpr unsigned kQueryInterrupted = 1317;     // ER_QUERY_INTERRUPTED (KILL QUERY)
inline constexpr unsigned kStatementTimeout = 1969;     // ER_STATEMENT_TIMEOUT (MariaDB)
inline constexpr unsigned kQueryTimeout = 3024;         // ER_QUERY_TIMEOUT (MySQL 8)
inline constexpr unsigned kReadOnlyTransaction = 1792;  // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
}  // namespace errnum

}  // namespace mcpdb::mysql
