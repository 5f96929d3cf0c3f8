#pragma once
// PostgreSQL's own analysis of a statement, for the read-only proof's second net (proof.hpp):
// the statement is prepared, never executed, inside a READ ONLY transaction that is rolled back,
// with debug_print_rewritten at client_min_messages = log (both settable by any role, and SET
// LOCAL: gone with the transaction), and the analyzed, rewritten query tree the server sends as a
// LOG notice is returned as text.

#include <libpq-fe.h>

#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "engines/postgres/proof.hpp"

namespace mcpdb::postgres {

// Prepares `sql` as the connection's unnamed statement once per list of parameter types (the
// types calls bind; a statement bound in several ways is analyzed in each) and returns every
// tree printed. The caller must have proved the statement safe to prepare (the proof's first
// net). An error (and `broken`) when the connection failed; a statement the server refuses to
// prepare is an Analysis with prepared false. Leaves the connection idle, its notice receiver as
// it was. Never throws.
Result<proof::Analysis> analyzeStatement(PGconn* conn, std::string_view sql,
                                         const std::vector<std::vector<Oid>>& param_type_lists,
                                         bool& broken);

}  // namespace mcpdb::postgres
