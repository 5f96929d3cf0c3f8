// Fuzzes the BSON -> JSON conversion the MongoDB tools apply to every returned document:
// arbitrary bytes must either be refused as invalid BSON or convert to JSON that serialises
// strictly (valid UTF-8 everywhere), without crashing, leaking or recursing without bound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "engines/mongodb/bson_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto json = mcpdb::mongodb::bsonBytesToJson(data, size);
  if (!json.ok()) return 0;
  try {
    // Strict dump: throws on invalid UTF-8, which the converter must never emit.
    const std::string text = json->dump();
    if (text.empty() || !json->is_object()) std::abort();
  } catch (const std::exception&) {
    std::abort();
  }
  return 0;
}
