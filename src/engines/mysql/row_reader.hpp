#pragma once
// Reading the rows of an executed prepared statement into JSON cells, under the row and byte
// caps, while fetching: the fetch stops at the first row that would pass a cap and the result
// says it was truncated (the statement's cursor is then closed, the rest never read).

#include <functional>

#include <mysql.h>

#include "common/result.hpp"
#include "engines/mysql/client_types.hpp"
#include "engines/mysql/source_cap.hpp"

namespace mcpdb::mysql {

// Fetches from `stmt` (executed, with a result set). `stopped` is asked between rows. With
// `capped` (wrapped), `stmt` runs its wrapper: the columns are reported as the statement's own
// (names and types), the NULL map is not returned, and a value the wrapper left in the database
// is null and listed in QueryResult::cut.
Result<QueryResult> readRows(MYSQL_STMT* stmt, const CallLimits& limits,
                             const std::function<bool()>& stopped,
                             const CappedStatement* capped = nullptr);

// The result columns of a prepared statement, as the byte cap at the source reads them.
std::vector<ShapeColumn> shapeOf(MYSQL_STMT* stmt);

// The type name a result column gets ("int", "string", "date"...: client_types.hpp's Column).
std::string columnTypeName(const MYSQL_FIELD& field);

// Standard base64 (RFC 4648, with padding): how bytes cells are written.
std::string base64Encode(std::string_view bytes);

}  // namespace mcpdb::mysql
