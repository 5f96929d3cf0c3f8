#pragma once
// SQLSTATE -> mcpdb::Code with a message safe to show: the server's own message text is never
// passed on (it can quote parameter values, e.g. "invalid input syntax for type integer: ..."),
// nor libpq's connection errors (they name the host and the user).

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace mcpdb::postgres {

// The code for a five-character SQLSTATE (class-based, with a few specific codes first), in the
// spirit of libpqxx's exception hierarchy.
Code codeForSqlstate(std::string_view sqlstate);

// "the database refused the query: <summary> (SQLSTATE 25006 read_only_sql_transaction)".
Error errorFromSqlstate(std::string_view sqlstate);

// A connection failure, classified from libpq's message without repeating any of it in the
// message; the error's operator-only `detail` holds `at HOST:PORT` (`where`) and the server's own
// reason (libpq's first line, which names no password).
Error connectError(std::string_view libpq_message, std::string_view where = {});

// libpq/server message text with every quoted part, host, port and user name removed; for logs
// only (still never shown to clients).
std::string redactLibpqMessage(std::string_view message);

}  // namespace mcpdb::postgres
