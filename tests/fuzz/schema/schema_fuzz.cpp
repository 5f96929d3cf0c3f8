// libFuzzer target: argument validation (protocol::validateJson) and argument patterns (RE2).
// The input is a pattern line, then a JSON arguments document. The pattern is compiled as a config
// load would (refused or compiled, never a crash) and run against the arguments' text; the
// arguments are validated against fixed schemas shaped like the generated ones (patterns, enums,
// lengths, integers that may arrive as floats, nested arrays and objects).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/pattern.hpp"
#include "protocol/schema.hpp"

namespace {

const mcpdb::Json& schemas() {
  static const mcpdb::Json kSchemas = mcpdb::Json::parse(R"([
    {"type":"object","additionalProperties":false,"required":["q"],"properties":{
      "q":{"type":"string","maxLength":1048576,"pattern":"^(a+)+$"},
      "k":{"type":"integer","minimum":1,"maximum":50},
      "id":{"type":["string","integer"],"pattern":"^[A-Za-z0-9_.-]+$"},
      "at":{"type":"string","format":"date-time"},
      "day":{"type":"string","format":"date"},
      "u":{"type":"string","format":"uuid"},
      "color":{"type":"string","enum":["red","blue","caf\u00e9"]},
      "tags":{"type":"array","maxItems":5,"items":{"type":"string","minLength":1,"pattern":"(x+x+)+y"}},
      "f":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
      "o":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}}},
    {"type":"object","properties":{"x":{"const":"fixed"},"y":{"type":"null"}}}
  ])");
  return kSchemas;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mcpdb;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  const std::string_view pattern = input.substr(0, nl);
  const std::string_view rest = nl == std::string_view::npos ? "" : input.substr(nl + 1);
  // Run only as a config load would allow it: within the cost bound for this text's length.
  if (auto re = protocol::compilePattern(pattern);
      re && protocol::checkPatternCost(**re, rest.size())) {
    (void)protocol::patternFinds(**re, rest);
  }
  const Json args = Json::parse(rest, nullptr, /*allow_exceptions=*/false);
  if (args.is_discarded()) return 0;
  for (const auto& schema : schemas()) {
    auto st = protocol::validateJson(schema, args);
    if (!st) (void)st.error().message.size();
  }
  return 0;
}
