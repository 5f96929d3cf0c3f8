#include "engines/postgres/identifiers.hpp"

namespace mcpdb::postgres {

bool isSafeIdentifier(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  const char first = name.front();
  if (!((first >= 'a' && first <= 'z') || first == '_')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::string quoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::optional<std::vector<std::string>> parseQualifiedName(std::string_view name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view part =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!isSafeIdentifier(part)) return std::nullopt;
    parts.emplace_back(part);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.size() > 2) return std::nullopt;
  return parts;
}

std::string quoteQualified(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ".") + quoteIdentifier(p);
  return out;
}

}  // namespace mcpdb::postgres
