#include "engines/mysql/time_limit.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace mcpdb::mysql {
namespace {

// max_statement_time in seconds with millisecond precision ("1.500").
std::string secondsText(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms.count() / 1000),
                static_cast<long long>(ms.count() % 1000));
  return buf;
}

// Where the leading keyword SELECT ends (after leading white space), or npos.
std::size_t afterLeadingSelect(std::string_view sql) {
  std::size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  constexpr std::string_view kSelect = "select";
  if (sql.size() - i < kSelect.size()) return std::string_view::npos;
  for (std::size_t k = 0; k < kSelect.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(sql[i + k])) != kSelect[k])
      return std::string_view::npos;
  }
  const std::size_t end = i + kSelect.size();
  // SELECTED, SELECT_x ... are identifiers, not the keyword.
  if (end < sql.size()) {
    const auto c = static_cast<unsigned char>(sql[end]);
    if (std::isalnum(c) || c == '_' || c == '$' || c >= 0x80) return std::string_view::npos;
  }
  return end;
}

}  // namespace

Result<std::string> withStatementLimits(Flavour flavour, std::string_view sql,
                                        std::chrono::milliseconds limit, std::uint32_t maxRows) {
  limit = std::max(limit, std::chrono::milliseconds(1));
  const std::string rows = std::to_string(std::uint64_t{maxRows} + 1);
  if (flavour == Flavour::MariaDB) {
    return "SET STATEMENT max_statement_time=" + secondsText(limit) + ", sql_select_limit=" + rows +
           " FOR " + std::string(sql);
  }
  const auto at = afterLeadingSelect(sql);
  if (at == std::string_view::npos) {
    return makeError(Code::InvalidArgument,
                     "on MySQL only a statement that starts with SELECT can carry a time limit");
  }
  return std::string(sql.substr(0, at)) + " /*+ MAX_EXECUTION_TIME(" +
         std::to_string(limit.count()) + ") SET_VAR(sql_select_limit=" + rows + ") */" +
         std::string(sql.substr(at));
}

}  // namespace mcpdb::mysql
