#include "engines/postgres/source_cap.hpp"

#include <cctype>

#include "engines/postgres/identifiers.hpp"

namespace mcpdb::postgres {
namespace {

// The longest text form of built-in types whose text is bounded (their output functions, PostgreSQL
// 12-17); 0 for a type not listed (its text is not bounded here, so it is guarded).
std::uint64_t boundedTextLength(Oid type) {
  switch (type) {
    case oid::kBool: return 1;
    case oid::kChar: return 4;    // "char": one byte, escaped as \ooo at most
    case oid::kName: return 252;  // 63 bytes of up to 4-byte characters
    case oid::kInt2: return 6;
    case oid::kInt4: return 11;
    case oid::kInt8: return 20;
    case oid::kOid: return 10;
    case oid::kFloat4: return 16;
    case oid::kFloat8: return 25;
    case oid::kDate: return 16;  // BC dates and five-digit years
    case oid::kTime: return 15;
    case oid::kTimetz: return 22;
    case oid::kTimestamp: return 32;
    case oid::kTimestamptz: return 40;
    case oid::kInterval: return 96;
    case oid::kUuid: return 36;
    case 790: return 32;  // money
    case 829: return 17;  // macaddr
    case 774: return 23;  // macaddr8
    case 869:
    case 650: return 49;  // inet, cidr
    case 3220:
      return 17;  // pg_lsn
    // numeric: 131,072 digits before the point and 16,383 after, a sign and the point.
    case oid::kNumeric: return 147'457;
    default: return 0;
  }
}

// The longest text form a type modifier allows, or 0: varchar(n) and char(n) hold at most n
// characters (the modifier is n plus the 4-byte varlena header), each at most four bytes in any
// server encoding; char(n) pads to n characters with spaces. PostgreSQL holds every stored and
// cast value to it, and the description gives it only where every value of the column has it.
std::uint64_t boundedByModifier(Oid type, int modifier) {
  constexpr int kHeader = 4;  // VARHDRSZ
  if ((type == oid::kVarchar || type == oid::kBpchar) && modifier > kHeader)
    return 4ULL * static_cast<std::uint64_t>(modifier - kHeader);
  return 0;
}

enum class Measure { None, Octets, Hex, Text };

Measure measureFor(Oid type, int modifier, std::uint64_t cap) {
  std::uint64_t bound = boundedTextLength(type);
  if (bound == 0) bound = boundedByModifier(type, modifier);
  if (bound != 0 && bound <= cap) return Measure::None;
  if (type == oid::kText || type == oid::kVarchar || type == oid::kBpchar) return Measure::Octets;
  if (type == oid::kBytea) return Measure::Hex;
  return Measure::Text;
}

// The condition "the value's text form is longer than cap" for column `c`.
std::string overCap(Measure m, const std::string& c, std::uint64_t cap) {
  const std::string gt = " OPERATOR(pg_catalog.>) ";
  switch (m) {
    case Measure::Octets: return "pg_catalog.octet_length(" + c + ")" + gt + std::to_string(cap);
    // \x and two digits a byte: longer than cap when the bytes are more than (cap - 2) / 2.
    case Measure::Hex:
      return "pg_catalog.octet_length(" + c + ")" + gt +
             std::to_string(cap < 2 ? 0 : (cap - 2) / 2);
    case Measure::Text:
      return "pg_catalog.octet_length(pg_catalog.format('%s', " + c + "))" + gt +
             std::to_string(cap);
    case Measure::None: break;
  }
  return "false";
}

}  // namespace

CappedStatement capAtSource(std::string_view statement,
                            const std::vector<std::pair<std::string, Oid>>& columns,
                            std::uint64_t cap, const std::vector<int>& modifiers) {
  CappedStatement out;
  out.columns = columns;
  out.cap = cap;
  out.modifiers.assign(columns.size(), -1);
  for (std::size_t i = 0; i < columns.size() && i < modifiers.size(); ++i)
    out.modifiers[i] = modifiers[i];
  std::string select;
  std::string nulls;
  std::string aliases;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string c = "q.c" + std::to_string(i + 1);
    const Measure m = measureFor(columns[i].second, out.modifiers[i], cap);
    out.guarded.push_back(m != Measure::None);
    select += i == 0 ? "SELECT " : ", ";
    if (m == Measure::None) {
      select += c;
    } else {
      select += "CASE WHEN " + overCap(m, c, cap) + " THEN NULL ELSE " + c + " END";
      nulls += c + " IS NULL, ";
    }
    select += " AS " + quoteIdentifier(columns[i].first);
    aliases += (i == 0 ? "c" : ", c") + std::to_string(i + 1);
  }
  // The end marker, always NULL (the map's last element, always true), is named after the
  // statement's columns: a column more in the statement (a table altered under SELECT * since the
  // description) makes the name ambiguous, one fewer leaves an alias without a column; either
  // fails the call, which is then described again (Runtime::callQuery). The map is an array of
  // IS NULL tests: no function call (the executor compiles the wrapper's expressions again for
  // every call, and checks the EXECUTE privilege of each function they call), and no output
  // function per element while the row is built, as concat() of text flags had.
  nulls += "q." + std::string(kEndColumn) + " IS NULL";
  select += columns.empty() ? "SELECT " : ", ";
  select += "ARRAY[" + nulls + "] AS " + std::string(kNullsColumn);
  aliases += (aliases.empty() ? "" : ", ") + std::string(kEndColumn);
  // The statement on lines of its own (a trailing line comment in it ends before the wrapper's
  // closing parenthesis), without the semicolons that may end it.
  std::string_view body = statement;
  while (!body.empty() &&
         (std::isspace(static_cast<unsigned char>(body.back())) != 0 || body.back() == ';'))
    body.remove_suffix(1);
  out.sql = select + " FROM (SELECT *, NULL AS " + std::string(kEndColumn) + " FROM (\n" +
            std::string(body) + "\n) AS s OFFSET 0) AS q(" + aliases + ")";
  return out;
}

}  // namespace mcpdb::postgres
