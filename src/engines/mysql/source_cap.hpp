#pragma once
// The byte cap at the source, MySQL/MariaDB: a configured statement whose result can hold a value
// longer than the call's byte cap runs wrapped so that such a value never leaves the server (the
// client library reads a row whole, so a cut made while fetching comes after the row is in
// memory). Generated here from fixed pieces, the statement's own text and the result columns its
// prepared form describes, after the statement was vetted (guard, views and routines):
//
//   SELECT mcpdb_q.`id`,
//          CASE WHEN OCTET_LENGTH(mcpdb_q.`body`) > 262144 THEN NULL ELSE mcpdb_q.`body` END,
//          ...,
//          CONCAT(CASE WHEN mcpdb_q.`body` IS NULL THEN '1' ELSE '0' END, ...) AS mcpdb_nulls
//   FROM (
//   <statement, without the semicolons and comments that end it>
//   ) AS mcpdb_q [ORDER BY mcpdb_q.`published` DESC, ...]
//
// A guarded column comes back NULL when its value was over the cap; the last column says which of
// them were NULL in the statement's own result, so that a cut value is told from a NULL one (the
// row reader drops it and lists the cut, as the PostgreSQL engine does). Columns are referred to by
// the names the description gave; when two names are the same, or a name cannot be written as a
// derived table's column, the statement is read through a CTE with a column list instead
// (`WITH mcpdb_c (c1, ...) AS (...) SELECT * FROM mcpdb_c` in the FROM). A derived table does not
// keep its rows' order (MariaDB drops its ORDER BY when merged, and a materialised one holding
// long values is read back in another order): a statement that orders its rows gets the same
// ORDER BY on the wrapper, written from its own clause when each item names one of its result
// columns (by name, by table and name, or by position, ASC or DESC); its rows are chosen inside
// as before (its LIMIT stays there). A statement ordered by anything else is not wrapped (its
// values are capped as they arrive, as before). The wrapper calls only
// native built-ins (OCTET_LENGTH, CONCAT, CASE), which a stored function cannot shadow, and reads
// no table of its own. A statement whose columns can all never exceed the cap (integers, dates,
// VARCHAR(n) with 4n within it, ...) runs unwrapped.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "engines/mysql/client_types.hpp"

namespace mcpdb::mysql {

// One result column as the prepared statement describes it.
struct ShapeColumn {
  Column column;             // name and type name, as the row reader reports them
  std::uint64_t max_length;  // the longest value the server declares (MYSQL_FIELD::length)
  bool binary = false;       // binary character set: written as base64
  unsigned field_type = 0;   // enum_field_types, to tell a changed column
  std::string table;         // the table (its alias in the statement) a column comes from
  std::string origin;        // and its name there (MYSQL_FIELD::org_name); empty: an expression
};

struct CappedStatement {
  std::string sql;           // the text to run: the wrapper, or the statement itself (!wrapped)
  bool wrapped = false;      // false: nothing to guard, or (unwrappable) no wrapper keeps its order
  bool unwrappable = false;  // a column needs a guard but the statement's ORDER BY is not by its
                             // result columns: runs as written, its values capped as they arrive
  std::vector<ShapeColumn> columns;  // the statement's, in order
  std::vector<bool> guarded;         // per column: may come back NULL because it was cut
  std::uint64_t cap = 0;             // the byte cap written into the text
};

// Whether a value of `c` can be longer than `cap` once written in the result (text: its bytes;
// binary: its base64).
bool mayExceedCap(const ShapeColumn& c, std::uint64_t cap);

// The wrapper of `statement` (vetted; its columns described) for a byte cap of `cap` bytes, or the
// statement unwrapped when no column may exceed the cap (or, unwrappable, no wrapper keeps its
// order).
CappedStatement capAtSource(std::string_view statement, const std::vector<ShapeColumn>& columns,
                            std::uint64_t cap);

// Whether the prepared result of `capped.sql` still has the shape the wrapper was written for:
// the statement's columns (and, wrapped, the NULL map), each passed-through column of the same
// type and still bounded within the cap. False: the statement changed under it (a table altered
// under SELECT *); describe it again.
bool sameShape(const std::vector<ShapeColumn>& prepared, const CappedStatement& capped);

// The note added when values were cut (the same words as the PostgreSQL engine's).
std::string cutNote(std::size_t cut, std::uint64_t cap);

// The name of the wrapper's last column (the NULL map of the guarded columns).
inline constexpr std::string_view kNullsColumn = "mcpdb_nulls";

}  // namespace mcpdb::mysql
