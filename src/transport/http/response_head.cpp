// Boost 1.74's beast/http/status.hpp uses std::ostream and boost::string_view without including
// what they need under g++ 12 -std=c++20: <ostream> and <utility> first.
#include <ostream>
#include <utility>

#include "transport/http/response_head.hpp"

#include <boost/beast/http/status.hpp>

#include <charconv>

namespace mcpdb::transport::http {

namespace {

void appendNumber(std::string& out, std::size_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void appendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.append(": ");
  out.append(value);
  out.append("\r\n");
}

}  // namespace

void appendResponseHead(std::string& out, unsigned status, unsigned version, bool keep_alive,
                        std::span<const HeaderField> fields,
                        std::optional<std::size_t> content_length) {
  const auto reason =
      boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  std::size_t size = 48 + reason.size();
  for (const auto& [name, value] : fields) size += name.size() + value.size() + 4;
  out.reserve(out.size() + size);

  out.append("HTTP/");
  out.push_back(static_cast<char>('0' + version / 10));
  out.push_back('.');
  out.push_back(static_cast<char>('0' + version % 10));
  out.push_back(' ');
  appendNumber(out, status);
  out.push_back(' ');
  out.append(reason.data(), reason.size());
  out.append("\r\n");
  for (const auto& [name, value] : fields) appendField(out, name, value);
  // Beast's keep_alive(): HTTP/1.1 is persistent unless it says close; HTTP/1.0 is not unless it
  // says keep-alive.
  if (version >= 11 && !keep_alive) appendField(out, "Connection", "close");
  if (version < 11 && keep_alive) appendField(out, "Connection", "keep-alive");
  if (content_length) {
    out.append("Content-Length: ");
    appendNumber(out, *content_length);
    out.append("\r\n");
  } else {
    appendField(out, "Transfer-Encoding", "chunked");
  }
  out.append("\r\n");
}

}  // namespace mcpdb::transport::http
