// libFuzzer target: the reader of PostgreSQL's printed query trees (query_tree.hpp), the proof's
// second net, over any text (the printed tree carries catalog-controlled names). It must never
// crash, hang or throw; a text it reads gives at least one query, and reading is a function of
// the text (the same text, the same objects). A text it cannot read is refused with its own code.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engines/postgres/query_tree.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto first = mcpdb::postgres::proof::readQueryTree(text);
  auto again = mcpdb::postgres::proof::readQueryTree(text);
  require(first.ok() == again.ok());
  if (!first.ok()) {
    require(first.error().code == mcpdb::Code::FailedPrecondition);
    return 0;
  }
  require(first->queries > 0);
  require(first->functions == again->functions && first->operators == again->operators &&
          first->types == again->types && first->relations == again->relations);
  for (const auto* ids : {&first->functions, &first->operators, &first->types, &first->relations}) {
    for (std::int64_t id : *ids) require(id > 0 && id <= 0xFFFFFFFFLL);
  }
  return 0;
}
