#pragma once
// The head of an HTTP/1.x response, written straight into a string: the bytes Beast's serializer
// writes for a response whose fields are set one by one, then keep_alive(), then the body size or
// chunked (tests/unit/http/response_head_test.cpp compares the two), without building a field list
// and streaming it through an ostringstream for every answer.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace mcpdb::transport::http {

using HeaderField = std::pair<std::string_view, std::string_view>;

// Appends the status line (`version` 10 or 11), `fields` in order (distinct names), Connection as
// Beast's keep_alive(`keep_alive`) sets it for that version, then Content-Length: `content_length`,
// or Transfer-Encoding: chunked when it is nullopt, and the blank line.
void appendResponseHead(std::string& out, unsigned status, unsigned version, bool keep_alive,
                        std::span<const HeaderField> fields,
                        std::optional<std::size_t> content_length);

}  // namespace mcpdb::transport::http
