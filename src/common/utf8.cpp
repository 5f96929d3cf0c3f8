#include "common/utf8.hpp"

#include <unicode/utf8.h>

#include <cstdint>

namespace mcpdb {

bool isValidUtf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const auto length = static_cast<std::int64_t>(bytes.size());
  std::int64_t i = 0;
  while (i < length) {
    UChar32 c = 0;
    U8_NEXT(s, i, length, c);
    if (c < 0) return false;
  }
  return true;
}

std::string withInvalidUtf8Replaced(std::string_view bytes) {
  if (isValidUtf8(bytes)) return std::string(bytes);
  const auto* s = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const auto length = static_cast<std::int64_t>(bytes.size());
  std::string out;
  out.reserve(bytes.size());
  std::int64_t i = 0;
  while (i < length) {
    const std::int64_t start = i;
    UChar32 c = 0;
    U8_NEXT(s, i, length, c);
    if (c < 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD; U8_NEXT skipped the maximal ill-formed prefix
    } else {
      out.append(bytes.data() + start, static_cast<std::size_t>(i - start));
    }
  }
  return out;
}

}  // namespace mcpdb
