// Fuzzes the decoder of DynamoDB replies: wire AttributeValues/items (untrusted server output) to
// agent JSON. Properties: never crashes or recurses unboundedly; whatever it accepts converts back
// to exactly the same wire value (lossless), and the agent JSON survives a text round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engines/dynamodb/attribute_value.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using mcpdb::Json;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Bounded parse depth: nlohmann itself recurses; refuse absurd nesting before it does.
  int depth = 0, max_depth = 0;
  for (char c : text) {
    if (c == '{' || c == '[') max_depth = std::max(max_depth, ++depth);
    if (c == '}' || c == ']') --depth;
  }
  if (max_depth > 200) return 0;
  Json wire = Json::parse(text, nullptr, false);
  if (wire.is_discarded()) return 0;

  for (bool as_item : {false, true}) {
    auto agent =
        as_item ? mcpdb::dynamodb::itemToJson(wire) : mcpdb::dynamodb::attributeToJson(wire);
    if (!agent.ok()) continue;
    const std::string shown = agent->dump(-1, ' ', false, Json::error_handler_t::replace);
    auto back =
        as_item ? mcpdb::dynamodb::jsonToItem(*agent) : mcpdb::dynamodb::jsonToAttribute(*agent);
    check(back.ok());
    check(*back == wire);
    // What the agent reads (text) decodes to the same value.
    Json reparsed = Json::parse(shown, nullptr, false);
    if (!reparsed.is_discarded()) {
      auto again = as_item ? mcpdb::dynamodb::jsonToItem(reparsed)
                           : mcpdb::dynamodb::jsonToAttribute(reparsed);
      check(again.ok());
      check(*again == wire);
    }
  }
  // Numbers: the validator never crashes on any text.
  (void)mcpdb::dynamodb::isDynamoNumber(text);
  (void)mcpdb::dynamodb::isBase64(text);
  return 0;
}
