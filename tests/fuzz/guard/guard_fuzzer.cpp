// libFuzzer target: the statement guard (libpg_query's parser, the JSON tree it returns, and the
// tree walk) must never crash, hang or read out of bounds, and its verdicts must be internally
// consistent, on any byte string, as a template and as each kind of catalog body.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engines/postgres/guard/guard.hpp"

namespace {

namespace guard = mcpdb::postgres::guard;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void consistent(const guard::Verdict& v) {
  require(v.allowed == (v.rule == guard::Rule::None));
  require(v.allowed == v.message.empty());
  require(v.allowed || !guard::ruleId(v.rule).empty());
  // A parse error's position, when given, is inside the text's lines.
  require(v.line >= 0 && v.column >= 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view sql(reinterpret_cast<const char*>(data), size);
  const guard::Verdict verdict = guard::checkTemplate(sql);
  consistent(verdict);
  if (verdict.allowed) {
    // Allowed templates use exactly $1..$N.
    for (std::size_t i = 0; i < verdict.placeholders.size(); ++i) {
      require(verdict.placeholders[i] == i + 1);
    }
    // Every literal and comment is closed, so nothing appended on a new line can hide.
    const std::string input(sql);
    require(!guard::checkTemplate(input + "\n; DROP TABLE x").allowed);
    require(!guard::checkTemplate(input + "\nFOR UPDATE").allowed);
    require(!guard::checkTemplate(input + "\n, pg_sleep(1)").allowed);
    // One verdict per text.
    require(guard::checkTemplate(sql).allowed);
  }
  for (auto kind : {guard::BodyKind::View, guard::BodyKind::SqlFunction,
                    guard::BodyKind::AtomicFunction, guard::BodyKind::Expression}) {
    consistent(guard::analyseBody(sql, kind));
  }
  return 0;
}
