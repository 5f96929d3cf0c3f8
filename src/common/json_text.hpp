#pragma once
// Compact JSON text exactly as nlohmann-json writes it (dump(-1, ' ', false, replace)), written
// and counted by one walk that handles what a result is mostly made of itself (ASCII strings and
// keys, integers, containers) and leaves the rest to the library node by node (floating point,
// non-ASCII strings, whose invalid UTF-8 the library replaces, binary): the library's serializer
// decodes UTF-8 byte by byte, which is most of the cost of answering a call. Written by hand for
// that reason; exactness is tested against the library (tests/unit/common/json_text_test.cpp).
#include <cstddef>
#include <string>
#include <string_view>

#include "common/json.hpp"

namespace mcpdb {

// Appends v's compact text.
void appendJsonText(std::string& out, const Json& v);
// v's compact text.
std::string jsonText(const Json& v);
// The size of v's compact text, without building it.
std::size_t jsonTextSize(const Json& v);
// Appends `s` as the JSON string literal the library writes for it (invalid UTF-8 replaced): for
// text written into a line by hand (log and audit lines).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace mcpdb
