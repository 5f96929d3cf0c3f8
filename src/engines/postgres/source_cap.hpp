#pragma once
// The byte cap at the source: a configured statement is run wrapped so that a value whose text form
// is longer than the tool's byte cap never leaves the database. The wrapper is generated here from
// fixed pieces, the statement's own text and the result columns its description gives:
//
//   SELECT q.c1 AS "id",
//          CASE WHEN pg_catalog.octet_length(q.c2) OPERATOR(pg_catalog.>) 262144
//               THEN NULL ELSE q.c2 END AS "body",
//          ...,
//          ARRAY[q.c2 IS NULL, ..., q.mcpdb_end IS NULL] AS mcpdb_nulls
//   FROM (SELECT *, NULL AS mcpdb_end FROM (
//   <statement>
//   ) AS s OFFSET 0) AS q(c1, c2, ..., mcpdb_end)
//
// A guarded column comes back NULL when its value was over the cap; the last column, a boolean
// array ("{f,t,...,t}": the g-th guarded column's flag, then the end marker's), says which of them
// were NULL in the statement's own result, so that a cut value is told from a NULL one (the
// executor drops it before the result is built). The always-NULL end marker makes the wrapper fail
// when the statement's columns are no longer those described. OFFSET 0 keeps the statement from
// being merged into the wrapper: it runs exactly as configured, each of its expressions once per
// row, in its own order. The wrapper calls only pg_catalog built-ins (octet_length, format, the
// integer comparison) and, through format('%s'), each column type's output function, which
// sending the value would call anyway: nothing the read-only proof of the statement has not
// covered. Its cost is per call even with the plan cached: PostgreSQL compiles its expressions
// and checks EXECUTE on each function in them for every execution, so it calls as few functions
// as it can (the NULL map none).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/postgres/params.hpp"

namespace mcpdb::postgres {

struct CappedStatement {
  std::string sql;  // the wrapped statement
  // The statement's result columns, in order (names as the description keyed them).
  std::vector<std::pair<std::string, Oid>> columns;
  // Per column: whether its value can be cut at the source (and so may come back NULL while the
  // statement's own value was not).
  std::vector<bool> guarded;
  // Per column: its type modifier as described (-1: none). A column passed through because its
  // modifier bounds it (varchar(n)) must come back with the same one (sameShape in executor.cpp).
  std::vector<int> modifiers;
  std::uint64_t cap = 0;  // the byte cap written into the text
};

// The wrapper of `statement` for a byte cap of `cap` bytes over the columns its description gave.
// A column whose type's text form is bounded at or below the cap (integers, dates, uuid ...) is
// passed through, and so is a varchar(n) or char(n) column (by its type modifier, `modifiers`,
// parallel to `columns`; empty or -1: none) whose n characters of at most four bytes each fit;
// text, varchar and bpchar are measured with octet_length (the stored length,
// without reading a TOASTed value), bytea by the length of its hex form, every other type by the
// length of format('%s', value), its text form.
CappedStatement capAtSource(std::string_view statement,
                            const std::vector<std::pair<std::string, Oid>>& columns,
                            std::uint64_t cap, const std::vector<int>& modifiers = {});

// The name of the wrapper's last column (the NULL map of the guarded columns).
inline constexpr std::string_view kNullsColumn = "mcpdb_nulls";
// The wrapper's end marker after the statement's columns (see capAtSource).
inline constexpr std::string_view kEndColumn = "mcpdb_end";

}  // namespace mcpdb::postgres
