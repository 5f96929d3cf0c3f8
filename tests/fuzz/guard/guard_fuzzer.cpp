// libFuzzer target: the lexer and checkTemplate must never crash, hang or read out of bounds, and
// their results must be internally consistent, on any byte string.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "guard/guard.hpp"
#include "guard/lexer.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void checkTokens(std::string_view sql, mcpdb::guard::LexOptions options) {
  auto tokens = mcpdb::guard::lex(sql, options);
  if (!tokens) {
    require(!tokens.error().message.empty());
    return;
  }
  std::size_t previousEnd = 0;
  for (const auto& token : *tokens) {
    // Tokens are in order, non-empty, non-overlapping and inside the input.
    require(token.length > 0);
    require(token.offset >= previousEnd);
    require(token.offset <= sql.size() && token.length <= sql.size() - token.offset);
    previousEnd = token.offset + token.length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view sql(reinterpret_cast<const char*>(data), size);
  checkTokens(sql, {});
  checkTokens(sql, {.standardConformingStrings = false});

  const auto verdict = mcpdb::guard::checkTemplate(sql);
  require(verdict.allowed == (verdict.rule == mcpdb::guard::Rule::None));
  require(verdict.allowed == verdict.message.empty());
  if (verdict.allowed) {
    // Allowed templates use exactly $1..$N.
    for (std::size_t i = 0; i < verdict.placeholders.size(); ++i) {
      require(verdict.placeholders[i] == i + 1);
    }
    // Every literal and comment is closed, so nothing appended on a new line can hide.
    const std::string input(sql);
    require(!mcpdb::guard::checkTemplate(input + "\n; DROP TABLE x").allowed);
    require(!mcpdb::guard::checkTemplate(input + "\nFOR UPDATE").allowed);
    require(!mcpdb::guard::checkTemplate(input + "\n, pg_sleep(1)").allowed);
  }
  return 0;
}
