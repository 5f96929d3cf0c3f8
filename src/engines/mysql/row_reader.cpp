#include "engines/mysql/row_reader.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "common/handle.hpp"
#include "common/row_budget.hpp"
#include "common/utf8.hpp"
#include "engines/mysql/errors.hpp"

namespace mcpdb::mysql {
namespace {

using ResPtr = Owned<MYSQL_RES, mysql_free_result>;

constexpr unsigned kBinaryCharset = 63;
constexpr unsigned long kInitialBuffer = 256;

enum class Kind { Int, Double, Time, Text };

// One result column: its metadata, how it is bound and where its value lands.
struct Slot {
  Column column;
  Kind kind = Kind::Text;
  enum_field_types type = MYSQL_TYPE_NULL;
  bool is_unsigned = false;
  bool binary = false;
  unsigned decimals = 0;
  long long integer = 0;
  double real = 0;
  MYSQL_TIME time{};
  std::vector<char> text;
  unsigned long length = 0;
  my_bool is_null = 0;
  my_bool error = 0;
};

bool isIntType(enum_field_types t) {
  return t == MYSQL_TYPE_TINY || t == MYSQL_TYPE_SHORT || t == MYSQL_TYPE_INT24 ||
         t == MYSQL_TYPE_LONG || t == MYSQL_TYPE_LONGLONG || t == MYSQL_TYPE_YEAR;
}

bool isTimeType(enum_field_types t) {
  return t == MYSQL_TYPE_DATE || t == MYSQL_TYPE_TIME || t == MYSQL_TYPE_DATETIME ||
         t == MYSQL_TYPE_TIMESTAMP || t == MYSQL_TYPE_NEWDATE;
}

std::string typeName(const MYSQL_FIELD& f) {
  switch (f.type) {
    case MYSQL_TYPE_YEAR: return "year";
    case MYSQL_TYPE_FLOAT:
    case MYSQL_TYPE_DOUBLE: return "double";
    case MYSQL_TYPE_DECIMAL:
    case MYSQL_TYPE_NEWDECIMAL: return "decimal";
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE: return "date";
    case MYSQL_TYPE_TIME: return "time";
    case MYSQL_TYPE_DATETIME: return "datetime";
    case MYSQL_TYPE_TIMESTAMP: return "timestamp";
    case MYSQL_TYPE_BIT: return "bit";
    case MYSQL_TYPE_JSON: return "json";
    case MYSQL_TYPE_GEOMETRY: return "geometry";
    case MYSQL_TYPE_NULL: return "null";
    default: break;
  }
  if (isIntType(f.type)) return "int";
  if ((f.flags & ENUM_FLAG) != 0) return "enum";
  if ((f.flags & SET_FLAG) != 0) return "set";
  return f.charsetnr == kBinaryCharset ? "bytes" : "string";
}

Kind kindOf(enum_field_types t) {
  if (isIntType(t)) return Kind::Int;
  if (t == MYSQL_TYPE_FLOAT || t == MYSQL_TYPE_DOUBLE) return Kind::Double;
  if (isTimeType(t)) return Kind::Time;
  return Kind::Text;
}

// Bytes, written as base64 (decimals and MySQL's JSON come with the binary character set too).
bool isBinary(const MYSQL_FIELD& f) {
  return f.charsetnr == kBinaryCharset && f.type != MYSQL_TYPE_NEWDECIMAL &&
         f.type != MYSQL_TYPE_DECIMAL && f.type != MYSQL_TYPE_JSON;
}

Slot slotFor(const MYSQL_FIELD& f) {
  Slot s;
  s.column = Column{std::string(f.name, f.name_length), typeName(f)};
  s.type = f.type;
  s.kind = kindOf(f.type);
  s.is_unsigned = (f.flags & UNSIGNED_FLAG) != 0;
  s.binary = isBinary(f);
  s.decimals = f.decimals;
  if (s.kind == Kind::Text) s.text.resize(kInitialBuffer);
  return s;
}

void bindSlot(Slot& s, MYSQL_BIND& b) {
  std::memset(&b, 0, sizeof b);
  b.is_null = &s.is_null;
  b.error = &s.error;
  b.length = &s.length;
  switch (s.kind) {
    case Kind::Int:
      b.buffer_type = MYSQL_TYPE_LONGLONG;
      b.buffer = &s.integer;
      b.is_unsigned = s.is_unsigned ? 1 : 0;
      break;
    case Kind::Double:
      b.buffer_type = MYSQL_TYPE_DOUBLE;
      b.buffer = &s.real;
      break;
    case Kind::Time:
      b.buffer_type = s.type == MYSQL_TYPE_NEWDATE ? MYSQL_TYPE_DATE : s.type;
      b.buffer = &s.time;
      b.buffer_length = sizeof s.time;
      break;
    case Kind::Text:
      b.buffer_type = s.binary ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
      b.buffer = s.text.data();
      b.buffer_length = static_cast<unsigned long>(s.text.size());
      break;
  }
}

// The fractional seconds as the column declares them; an expression's column has no fixed scale
// (decimals above 6), so its microseconds are written when there are any.
std::string fraction(unsigned long micros, unsigned decimals) {
  if (decimals > 6) decimals = micros % 1000000 != 0 ? 6 : 0;
  if (decimals == 0) return "";
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06lu", micros % 1000000);
  return "." + std::string(buf, decimals);
}

// ISO 8601 text: 2024-02-29, 2024-02-29T10:20:30[.ffffff][Z], [-]838:59:59[.ffffff].
std::string isoText(const MYSQL_TIME& t, enum_field_types type, unsigned decimals) {
  char buf[64];
  if (type == MYSQL_TYPE_TIME) {
    const unsigned long hours = t.hour + 24UL * t.day;
    std::snprintf(buf, sizeof buf, "%s%02lu:%02u:%02u", t.neg ? "-" : "", hours, t.minute,
                  t.second);
    return buf + fraction(t.second_part, decimals);
  }
  std::snprintf(buf, sizeof buf, "%04u-%02u-%02u", t.year, t.month, t.day);
  if (type == MYSQL_TYPE_DATE || type == MYSQL_TYPE_NEWDATE) return buf;
  std::string out = buf;
  std::snprintf(buf, sizeof buf, "T%02u:%02u:%02u", t.hour, t.minute, t.second);
  out += buf + fraction(t.second_part, decimals);
  // The session's time zone is UTC (connection.cpp), so TIMESTAMP values are UTC instants.
  if (type == MYSQL_TYPE_TIMESTAMP) out += "Z";
  return out;
}

// BIT(n) arrives as big-endian bytes; written as an unsigned integer.
Json bitValue(std::string_view bytes) {
  std::uint64_t v = 0;
  for (unsigned char c : bytes) v = (v << 8) | c;
  return Json(v);
}

// The bytes of a text-like cell whose full length is `s.length`: re-read into a buffer of that
// size when the first buffer was too small.
Result<std::string_view> textOf(MYSQL_STMT* stmt, Slot& s, unsigned index) {
  if (s.length > s.text.size()) {
    s.text.resize(s.length);
    MYSQL_BIND b;
    bindSlot(s, b);
    if (mysql_stmt_fetch_column(stmt, &b, index, 0) != 0) {
      return classifyError(mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt), "", "fetch");
    }
  }
  return std::string_view(s.text.data(), s.length);
}

Json textCell(const Slot& s, std::string_view bytes) {
  if (s.type == MYSQL_TYPE_BIT) return bitValue(bytes);
  if (s.binary) return Json(base64Encode(bytes));
  // utf8mb4 on the wire: only a column stored in a broken way can be ill-formed; JSON cannot
  // carry it, so it is marked with U+FFFD rather than dropped.
  return Json(isValidUtf8(bytes) ? std::string(bytes) : withInvalidUtf8Replaced(bytes));
}

// The payload size of a cell before it is converted (the byte cap counts this).
// A lower bound of the cell's size in the result (JSON text), read off the driver's slot before
// the cell is converted: a far-too-large row is refused without being converted.
std::uint64_t cellBytes(const Slot& s) {
  if (s.is_null) return 4;  // null
  return s.kind == Kind::Text ? s.length : 1;
}

class Reader {
 public:
  Reader(MYSQL_STMT* stmt, const CallLimits& limits, const CappedStatement* capped)
      : stmt_(stmt),
        limits_(limits),
        capped_(capped != nullptr && capped->wrapped ? capped : nullptr) {}

  Status describe() {
    ResPtr meta(mysql_stmt_result_metadata(stmt_));
    if (meta == nullptr)
      return classifyError(mysql_stmt_errno(stmt_), mysql_stmt_sqlstate(stmt_), "", "describe");
    const unsigned n = mysql_num_fields(meta.get());
    const MYSQL_FIELD* fields = mysql_fetch_fields(meta.get());
    slots_.reserve(n);
    for (unsigned i = 0; i < n; ++i) slots_.push_back(slotFor(fields[i]));
    // The wrapper's columns are the statement's, as described, and its NULL map (not returned).
    if (capped_ != nullptr && n != capped_->columns.size() + 1)
      return makeError(Code::Internal, "the statement's result columns changed; retry");
    values_ = capped_ != nullptr ? n - 1 : n;
    for (unsigned i = 0; i < values_; ++i)
      out_.columns.push_back(capped_ != nullptr ? capped_->columns[i].column : slots_[i].column);
    // {"name":value,...} plus the separator between rows: the keys' share is fixed per row.
    row_overhead_ = 2 + 1 + (values_ == 0 ? 0 : values_ - 1);
    for (const auto& c : out_.columns) row_overhead_ += serializedSize(Json(c.name)) + 1;
    return rebind();
  }

  // Rows arrive as the server sends them: a fetch waits for the statement while it runs, and
  // ends with the server's own error when it is killed or runs out of time. The stop is checked
  // between rows (a cancel's KILL ends the wait of the fetch itself).
  Result<QueryResult> fetchAll(const std::function<bool()>& stopped) {
    while (true) {
      const int rc = mysql_stmt_fetch(stmt_);
      if (rc == MYSQL_NO_DATA) break;
      if (rc == 1) return fetchError();
      if (out_.rows.size() >= limits_.max_rows) return truncated();
      std::uint64_t lower_bound = 0;
      for (std::size_t i = 0; i < values_; ++i) lower_bound += cellBytes(slots_[i]);
      if (out_.bytes + lower_bound > limits_.max_bytes) return truncated();
      auto row = convertRow();
      if (!row) return row.error();
      const std::vector<std::size_t> cut = takeCuts(*row);
      // The byte cap counts the row as the result carries it (an object keyed by column name,
      // JSON-escaped, base64 for bytes), so no escaping or key overhead passes the cap.
      const std::uint64_t size = rowSize(*row);
      if (out_.bytes + size > limits_.max_bytes) return truncated();
      for (std::size_t c : cut)
        out_.cut.push_back(Json{{"row", out_.rows.size()}, {"column", out_.columns[c].name}});
      out_.rows.push_back(std::move(*row));
      out_.bytes += size;
      if (stopped()) return makeError(Code::Cancelled, "fetch: the call was cancelled");
    }
    return std::move(out_);
  }

 private:
  // The guarded columns of the wrapper's row that are null although the statement's value was
  // not (left in the database for the byte cap); drops the NULL map from the row.
  std::vector<std::size_t> takeCuts(std::vector<Json>& row) const {
    std::vector<std::size_t> cut;
    if (capped_ == nullptr) return cut;
    const std::string nulls = row.back().is_string() ? row.back().get<std::string>() : "";
    row.pop_back();
    std::size_t g = 0;  // index of the column among the guarded ones
    for (std::size_t c = 0; c < values_; ++c) {
      if (!capped_->guarded[c]) continue;
      const bool was_null = g < nulls.size() && nulls[g] == '1';
      ++g;
      if (row[c].is_null() && !was_null) cut.push_back(c);
    }
    return cut;
  }

  // Without a cursor libmariadb leaves an error the server sent while rows streamed (a KILL, the
  // time limit) on the connection's handle, not on the statement.
  Error fetchError() const {
    if (mysql_stmt_errno(stmt_) == 0 && stmt_->mysql != nullptr) {
      return classifyError(mysql_errno(stmt_->mysql), mysql_sqlstate(stmt_->mysql), "", "fetch");
    }
    return classifyError(mysql_stmt_errno(stmt_), mysql_stmt_sqlstate(stmt_), "", "fetch");
  }

  Status rebind() {
    binds_.resize(slots_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i) bindSlot(slots_[i], binds_[i]);
    if (!binds_.empty() && mysql_stmt_bind_result(stmt_, binds_.data()) != 0) {
      return classifyError(mysql_stmt_errno(stmt_), mysql_stmt_sqlstate(stmt_), "", "bind");
    }
    return {};
  }

  std::uint64_t rowSize(const std::vector<Json>& row) const {
    std::uint64_t size = row_overhead_;
    for (const auto& cell : row) size += serializedSize(cell);
    return size;
  }

  QueryResult truncated() {
    out_.truncated = true;
    return std::move(out_);
  }

  Result<std::vector<Json>> convertRow() {
    std::vector<Json> row;
    row.reserve(slots_.size());
    bool grew = false;
    for (unsigned i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      if (s.is_null) {
        row.emplace_back(nullptr);
      } else if (s.kind == Kind::Int) {
        row.push_back(s.is_unsigned ? Json(static_cast<std::uint64_t>(s.integer))
                                    : Json(s.integer));
      } else if (s.kind == Kind::Double) {
        row.emplace_back(s.real);
      } else if (s.kind == Kind::Time) {
        row.emplace_back(isoText(s.time, s.type, s.decimals));
      } else {
        grew = grew || s.length > s.text.size();
        auto bytes = textOf(stmt_, s, i);
        if (!bytes) return bytes.error();
        row.push_back(textCell(s, *bytes));
      }
    }
    if (grew) {
      if (auto st = rebind(); !st) return st.error();
    }
    return row;
  }

  MYSQL_STMT* stmt_;
  CallLimits limits_;
  const CappedStatement* capped_;  // wrapped only
  std::size_t values_ = 0;         // the statement's own columns (the NULL map excluded)
  std::vector<Slot> slots_;
  std::vector<MYSQL_BIND> binds_;
  QueryResult out_;
  std::uint64_t row_overhead_ = 0;
};

}  // namespace

std::string columnTypeName(const MYSQL_FIELD& field) {
  return typeName(field);
}

std::string base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                   (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                   (two ? static_cast<unsigned char>(bytes[i + 1]) << 8 : 0);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += two ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::vector<ShapeColumn> shapeOf(MYSQL_STMT* stmt) {
  std::vector<ShapeColumn> out;
  ResPtr meta(mysql_stmt_result_metadata(stmt));
  if (meta == nullptr) return out;
  const unsigned n = mysql_num_fields(meta.get());
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta.get());
  for (unsigned i = 0; i < n && fields != nullptr; ++i) {
    const MYSQL_FIELD& f = fields[i];
    out.push_back({Column{std::string(f.name, f.name_length), typeName(f)}, f.length, isBinary(f),
                   static_cast<unsigned>(f.type),
                   std::string(f.table != nullptr ? f.table : "", f.table_length),
                   std::string(f.org_name != nullptr ? f.org_name : "", f.org_name_length)});
  }
  return out;
}

Result<QueryResult> readRows(MYSQL_STMT* stmt, const CallLimits& limits,
                             const std::function<bool()>& stopped, const CappedStatement* capped) {
  Reader reader(stmt, limits, capped);
  if (auto s = reader.describe(); !s) return s.error();
  return reader.fetchAll(stopped);
}

}  // namespace mcpdb::mysql
