#pragma once
// The statement text that carries its own time limit, by server flavour:
// - MariaDB: `SET STATEMENT max_statement_time=S FOR <statement>`, a prefix to the text (so the
//   prepared text includes it), for any statement;
// - MySQL 8: the optimizer hint `/*+ MAX_EXECUTION_TIME(ms) */` right after the leading SELECT;
//   MySQL honours it only for SELECT, so any other statement is refused here rather than run
//   without a limit.

#include <chrono>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "engines/mysql/client_types.hpp"

namespace mcpdb::mysql {

// `sql` with the limit attached; InvalidArgument when it cannot carry one (MySQL, not a SELECT).
// A limit below 1 ms is raised to 1 ms (0 would mean "no limit" to both servers).
Result<std::string> withTimeLimit(Flavour flavour, std::string_view sql,
                                  std::chrono::milliseconds limit);

}  // namespace mcpdb::mysql
