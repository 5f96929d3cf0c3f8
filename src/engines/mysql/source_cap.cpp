#include "engines/mysql/source_cap.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "engines/mysql/lexer.hpp"

namespace mcpdb::mysql {
namespace {

using guard::quoteName;

// The longest value of a column MySQL lets a derived table name.
constexpr std::size_t kMaxColumnName = 64;

// The longest binary value whose base64 (4 characters per 3 bytes, padded) fits in `cap`.
std::uint64_t binaryBound(std::uint64_t cap) {
  return cap / 4 * 3;
}

// One item of the statement's ORDER BY, as the wrapper can repeat it: a position, a name, or a
// table and a name; anything else (an expression, COLLATE, ...) is `simple == false`.
struct OrderItem {
  std::size_t position = 0;  // 1-based; 0: by name
  std::string table;
  std::string name;
  bool desc = false;
};

// What the wrapper needs to know of the statement's text: where its last token ends (trailing
// semicolons and comments dropped) and how it orders its rows.
struct TextShape {
  std::size_t end = 0;
  bool ordered = false;
  bool simple = true;  // every ORDER BY item is an OrderItem
  std::vector<OrderItem> order;
};

bool isWord(const guard::Token& t, std::string_view word) {
  return t.kind == guard::TokenKind::Word && guard::lowerAscii(t.text) == word;
}

bool isName(const guard::Token& t) {
  return t.kind == guard::TokenKind::Word || t.kind == guard::TokenKind::QuotedIdent;
}

// The words that end an ORDER BY clause at its own depth.
bool endsOrder(const guard::Token& t) {
  for (std::string_view w : {"limit", "fetch", "offset", "for", "lock", "into", "procedure"})
    if (isWord(t, w)) return true;
  return t.kind == guard::TokenKind::RParen || t.kind == guard::TokenKind::Semicolon;
}

// One ORDER BY item from its tokens [from, to).
bool readItem(const std::vector<guard::Token>& tokens, std::size_t from, std::size_t to,
              OrderItem& item) {
  if (to > from && (isWord(tokens[to - 1], "asc") || isWord(tokens[to - 1], "desc"))) {
    item.desc = isWord(tokens[to - 1], "desc");
    --to;
  }
  const std::size_t n = to - from;
  if (n == 1 && tokens[from].kind == guard::TokenKind::Number) {
    const std::string& digits = tokens[from].text;
    if (digits.empty() || digits.size() > 6 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    item.position = std::stoul(digits);
    return item.position > 0;
  }
  if (n == 1 && isName(tokens[from])) {
    item.name = tokens[from].text;
    return true;
  }
  if (n == 3 && isName(tokens[from]) && tokens[from + 1].kind == guard::TokenKind::Dot &&
      isName(tokens[from + 2])) {
    item.table = tokens[from].text;
    item.name = tokens[from + 2].text;
    return true;
  }
  return false;
}

// The ORDER BY clause whose BY is tokens[by], at depth `depth`.
void readOrder(const std::vector<guard::Token>& tokens, std::size_t by, int depth, TextShape& out) {
  out.ordered = true;
  out.simple = true;
  out.order.clear();
  int d = depth;
  std::size_t from = by + 1;
  for (std::size_t i = by + 1; i <= tokens.size(); ++i) {
    const bool end = i == tokens.size() || (d == depth && endsOrder(tokens[i]));
    if (end || (d == depth && tokens[i].kind == guard::TokenKind::Comma)) {
      OrderItem item;
      if (!readItem(tokens, from, i, item)) out.simple = false;
      out.order.push_back(std::move(item));
      from = i + 1;
      if (end) return;
      continue;
    }
    if (tokens[i].kind == guard::TokenKind::LParen) ++d;
    if (tokens[i].kind == guard::TokenKind::RParen) --d;
  }
}

TextShape readText(std::string_view statement) {
  TextShape out;
  const guard::LexResult lexed = guard::lex(statement);
  const std::vector<guard::Token>& tokens = lexed.tokens;
  if (lexed.error != guard::LexError::None) {
    // Not reached for a vetted statement (the guard lexes it the same way); the wrapper is
    // checked by the guard again before it runs.
    out.end = statement.size();
    out.ordered = true;
    out.simple = false;
    return out;
  }
  std::size_t last = tokens.size();  // the last token that is not a semicolon
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i].kind != guard::TokenKind::Semicolon) last = i;
  if (last == tokens.size()) return out;
  out.end = tokens[last].offset + tokens[last].length;
  // The statement's own ORDER BY: its last one outside parentheses, or inside the one pair of
  // parentheses that holds the whole statement. (One in a subquery, a window or GROUP_CONCAT
  // orders something else.)
  int depth = 0;
  int whole = 0;  // the depth of the clause that orders the statement's rows
  for (std::size_t i = 0; i <= last; ++i) {
    if (tokens[i].kind == guard::TokenKind::LParen) ++depth;
    if (tokens[i].kind == guard::TokenKind::RParen) --depth;
    if (depth == 0) {
      // The first parenthesis closes at the last token: one group holds the whole statement.
      whole = i == last && tokens.front().kind == guard::TokenKind::LParen ? 1 : 0;
      break;
    }
  }
  depth = 0;
  for (std::size_t i = 0; i < last; ++i) {
    if (tokens[i].kind == guard::TokenKind::LParen) ++depth;
    if (tokens[i].kind == guard::TokenKind::RParen) --depth;
    if (depth == whole && isWord(tokens[i], "order") && isWord(tokens[i + 1], "by"))
      readOrder(tokens, i + 1, whole, out);
  }
  return out;
}

// Whether every column can be named in a derived table as the description named it: distinct
// (column names are case-insensitive), not empty, not longer than a column name may be, and not
// ending in a space (which the server drops from a name).
bool namesUsable(const std::vector<ShapeColumn>& columns) {
  std::set<std::string> seen;
  for (const ShapeColumn& c : columns) {
    const std::string& name = c.column.name;
    if (name.empty() || name.size() > kMaxColumnName || name.back() == ' ') return false;
    if (!seen.insert(guard::lowerAscii(name)).second) return false;
  }
  return true;
}

// The condition "the value is longer than the cap once written in the result" for column `ref`.
std::string overCap(const ShapeColumn& c, const std::string& ref, std::uint64_t cap) {
  return "OCTET_LENGTH(" + ref + ") > " + std::to_string(c.binary ? binaryBound(cap) : cap);
}

}  // namespace

bool mayExceedCap(const ShapeColumn& c, std::uint64_t cap) {
  return c.max_length > (c.binary ? binaryBound(cap) : cap);
}

namespace {

// The result column an ORDER BY item names, as MySQL resolves it (a select list name first), or
// columns.size() when it names none or more than one.
std::size_t orderedColumn(const OrderItem& item, const std::vector<ShapeColumn>& columns) {
  if (item.position > 0)
    return item.position <= columns.size() ? item.position - 1 : columns.size();
  std::size_t found = columns.size();
  const std::string name = guard::lowerAscii(item.name);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const ShapeColumn& c = columns[i];
    const bool match = item.table.empty()
                           ? guard::lowerAscii(c.column.name) == name
                           : c.table == item.table && guard::lowerAscii(c.origin) == name;
    if (!match) continue;
    if (found != columns.size()) return columns.size();  // ambiguous
    found = i;
  }
  return found;
}

// The wrapper's ORDER BY, repeating the statement's over its result columns; false when an item
// is not one of them.
bool orderBy(const TextShape& text, const std::vector<ShapeColumn>& columns,
             const std::vector<std::string>& refs, std::string& out) {
  if (!text.ordered) return true;
  if (!text.simple) return false;
  for (std::size_t i = 0; i < text.order.size(); ++i) {
    const std::size_t c = orderedColumn(text.order[i], columns);
    if (c == columns.size()) return false;
    out += (i == 0 ? " ORDER BY " : ", ") + refs[c] + (text.order[i].desc ? " DESC" : "");
  }
  return true;
}

// The words after which a SELECT is not one plain select list over its FROM (a set operation, a
// grouping or a clause that sees the select list's names).
bool notPlain(const guard::Token& t) {
  for (std::string_view w :
       {"union", "intersect", "except", "group", "having", "window", "into", "distinct",
        "distinctrow", "all", "high_priority", "straight_join", "sql_small_result",
        "sql_big_result", "sql_buffer_result", "sql_cache", "sql_no_cache", "sql_calc_found_rows"})
    if (isWord(t, w)) return true;
  return false;
}

// The end (in the text) of a select-list item that is a column reference with an optional alias,
// [table.]column [[AS] alias], its tokens [from, to); 0 when it is anything else.
std::size_t columnReferenceEnd(const std::vector<guard::Token>& t, std::size_t from,
                               std::size_t to) {
  std::size_t ref = from;
  if (ref < to && isName(t[ref])) ++ref;
  if (ref + 1 < to && t[ref].kind == guard::TokenKind::Dot && isName(t[ref + 1])) ref += 2;
  if (ref == from) return 0;
  std::size_t rest = ref;
  if (rest < to && isWord(t[rest], "as")) ++rest;
  if (rest < to && isName(t[rest])) ++rest;
  if (rest != to) return 0;
  return t[ref - 1].offset + t[ref - 1].length;
}

// The guards written into the statement's own select list, when it is one plain SELECT of
// column references (the common case: a tool reading a table's columns by key): no derived table
// for the server to merge on every prepare, and nothing that can reorder its rows. Each guarded
// column reference becomes CASE WHEN OCTET_LENGTH(ref) > cap THEN NULL ELSE ref END AS `name`
// (a column read twice is the same value) and the NULL map goes before FROM. False when the
// statement is anything else, or its ORDER BY names a guarded column (it would then sort by the
// guard).
bool guardInPlace(std::string_view statement, const std::vector<ShapeColumn>& columns,
                  const std::vector<bool>& guarded, std::uint64_t cap, std::string& out) {
  const guard::LexResult lexed = guard::lex(statement);
  const std::vector<guard::Token>& t = lexed.tokens;
  if (lexed.error != guard::LexError::None || t.size() < 2 || !isWord(t[0], "select")) return false;
  std::size_t from = t.size();
  std::vector<std::size_t> commas;
  int depth = 0;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (t[i].kind == guard::TokenKind::LParen) ++depth;
    if (t[i].kind == guard::TokenKind::RParen) --depth;
    if (depth != 0) continue;
    if (notPlain(t[i])) return false;
    if (from == t.size() && isWord(t[i], "from")) from = i;
    if (from == t.size() && t[i].kind == guard::TokenKind::Comma) commas.push_back(i);
  }
  if (from == t.size() || commas.size() + 1 != columns.size()) return false;
  const TextShape text = readText(statement);
  if (text.ordered) {
    if (!text.simple) return false;
    for (const OrderItem& item : text.order) {
      const std::size_t c = orderedColumn(item, columns);
      if (c < columns.size() && guarded[c]) return false;
    }
  }
  std::string sql;
  std::string nulls;
  std::size_t copied = 0;  // the statement's text written so far
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::size_t a = i == 0 ? 1 : commas[i - 1] + 1;
    const std::size_t b = i < commas.size() ? commas[i] : from;
    const std::size_t ref_end = columnReferenceEnd(t, a, b);
    if (!guarded[i]) continue;
    const std::string& name = columns[i].column.name;
    if (ref_end == 0 || name.empty() || name.back() == ' ') return false;
    const std::string ref(statement.substr(t[a].offset, ref_end - t[a].offset));
    sql += std::string(statement.substr(copied, t[a].offset - copied));
    sql += "CASE WHEN " + overCap(columns[i], ref, cap) + " THEN NULL ELSE " + ref + " END AS " +
           quoteName(name);
    copied = t[b - 1].offset + t[b - 1].length;
    nulls += (nulls.empty() ? "" : ", ") + ("CASE WHEN " + ref + " IS NULL THEN '1' ELSE '0' END");
  }
  // The NULL map on a line of its own (a line comment before FROM ends before it).
  sql += std::string(statement.substr(copied, t[from].offset - copied));
  sql += "\n, CONCAT(" + nulls + ") AS " + std::string(kNullsColumn) + "\n";
  sql += std::string(statement.substr(t[from].offset, text.end - t[from].offset));
  out = std::move(sql);
  return true;
}

}  // namespace

CappedStatement capAtSource(std::string_view statement, const std::vector<ShapeColumn>& columns,
                            std::uint64_t cap) {
  CappedStatement out;
  out.columns = columns;
  out.cap = cap;
  out.sql = std::string(statement);
  for (const ShapeColumn& c : columns) out.guarded.push_back(mayExceedCap(c, cap));
  if (std::none_of(out.guarded.begin(), out.guarded.end(), [](bool g) { return g; })) return out;
  if (guardInPlace(statement, columns, out.guarded, cap, out.sql)) {
    out.wrapped = true;
    return out;
  }
  const bool by_name = namesUsable(columns);
  std::vector<std::string> refs;
  std::string select;
  std::string nulls;
  std::string list;  // the CTE's column list
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string n = "c" + std::to_string(i + 1);
    const std::string ref = "mcpdb_q." + (by_name ? quoteName(columns[i].column.name) : n);
    refs.push_back(ref);
    select += i == 0 ? "SELECT " : ", ";
    list += (i == 0 ? "" : ", ") + n;
    if (!out.guarded[i]) {
      select += ref;
      continue;
    }
    select += "CASE WHEN " + overCap(columns[i], ref, cap) + " THEN NULL ELSE " + ref + " END";
    nulls += (nulls.empty() ? "" : ", ") + ("CASE WHEN " + ref + " IS NULL THEN '1' ELSE '0' END");
  }
  select += ", CONCAT(" + nulls + ") AS " + std::string(kNullsColumn);
  const TextShape text = readText(statement);
  std::string order;
  if (!orderBy(text, columns, refs, order)) {
    out.unwrappable = true;
    return out;
  }
  // The statement on lines of its own (a line comment inside it ends before the wrapper's text).
  std::string body = "\n" + std::string(statement.substr(0, text.end)) + "\n";
  if (!by_name) body = "\nWITH mcpdb_c (" + list + ") AS (" + body + ") SELECT * FROM mcpdb_c\n";
  out.sql = select + " FROM (" + body + ") AS mcpdb_q" + order;
  out.wrapped = true;
  return out;
}

bool sameShape(const std::vector<ShapeColumn>& prepared, const CappedStatement& capped) {
  const std::size_t n = capped.columns.size();
  if (prepared.size() != n + (capped.wrapped ? 1 : 0)) return false;
  for (std::size_t c = 0; c < n; ++c) {
    if (capped.guarded[c]) continue;
    if (prepared[c].field_type != capped.columns[c].field_type ||
        mayExceedCap(prepared[c], capped.cap))
      return false;
  }
  return true;
}

std::string cutNote(std::size_t n, std::uint64_t cap) {
  return std::to_string(n) + (n == 1 ? " value" : " values") +
         " longer than the byte cap (max_bytes, " + std::to_string(cap) + " bytes) " +
         (n == 1 ? "was" : "were") + " left in the database and " + (n == 1 ? "is" : "are") +
         " null in its row; `cut` lists each by row and column.";
}

}  // namespace mcpdb::mysql
