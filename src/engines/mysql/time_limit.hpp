#pragma once
// The statement text that carries its own limits, by server flavour: the time limit, and a row
// limit of max_rows + 1 (the server stops after the row that tells the result was cut):
// - MariaDB: `SET STATEMENT max_statement_time=S, sql_select_limit=N FOR <statement>`, a prefix to
//   the text (so the prepared text includes it), for any statement;
// - MySQL 8: the optimizer hints `/*+ MAX_EXECUTION_TIME(ms) SET_VAR(sql_select_limit=N) */` right
//   after the leading SELECT; MySQL honours them only for SELECT, so any other statement is
//   refused here rather than run without a limit.
// sql_select_limit bounds only the rows the statement returns (not subqueries, views or stored
// functions), and a LIMIT in the statement still applies when it is smaller.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "engines/mysql/client_types.hpp"

namespace mcpdb::mysql {

// `sql` with the limits attached; InvalidArgument when it cannot carry them (MySQL, not a
// SELECT). A time limit below 1 ms is raised to 1 ms (0 would mean "no limit" to both servers).
Result<std::string> withStatementLimits(Flavour flavour, std::string_view sql,
                                        std::chrono::milliseconds limit, std::uint32_t maxRows);

}  // namespace mcpdb::mysql
