#pragma once
// A qualified name (schema.table, db.function) as SQL text: the parts joined with '.', a part
// quoted with `quote` (the quote doubled inside) when `needs_quotes` says so. Shared by the
// Postgres guard ("...") and the MySQL guard (`...`), which differ only in the quote and the rule.

#include <string>
#include <vector>

namespace mcpdb {

template <class NeedsQuotes>
std::string qualifiedName(const std::vector<std::string>& parts, char quote,
                          NeedsQuotes needs_quotes) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += '.';
    if (!needs_quotes(part)) {
      out += part;
      continue;
    }
    out += quote;
    for (char c : part) {
      if (c == quote) out += quote;
      out += c;
    }
    out += quote;
  }
  return out;
}

}  // namespace mcpdb
