// The hand-written response head must be byte for byte what Beast writes for the same response,
// built the way the server built it before (fields set in order, keep_alive(), then
// prepare_payload() or chunked(true)).
#include <utility>  // Boost 1.74 Asio under g++ 12 -std=c++20 needs it before any Boost header.

#include <gtest/gtest.h>

#include <boost/beast/http.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "transport/http/response_head.hpp"

namespace mcpdb::transport::http {
namespace {

namespace bhttp = boost::beast::http;

boost::beast::string_view bsv(std::string_view s) {
  return {s.data(), s.size()};
}

std::string beastHead(unsigned status, unsigned version, bool keep_alive,
                      const std::vector<HeaderField>& fields, std::optional<std::size_t> length) {
  std::ostringstream os;
  if (length) {
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), version};
    for (const auto& [k, v] : fields) res.set(bsv(k), bsv(v));
    res.keep_alive(keep_alive);
    res.body() = std::string(*length, 'x');
    res.prepare_payload();
    os << res.base();
  } else {
    bhttp::response<bhttp::empty_body> res{static_cast<bhttp::status>(status), version};
    for (const auto& [k, v] : fields) res.set(bsv(k), bsv(v));
    res.keep_alive(keep_alive);
    res.chunked(true);
    os << res.base();
  }
  return os.str();
}

std::string ours(unsigned status, unsigned version, bool keep_alive,
                 const std::vector<HeaderField>& fields, std::optional<std::size_t> length) {
  std::string out;
  appendResponseHead(out, status, version, keep_alive, fields, length);
  return out;
}

TEST(ResponseHead, SameBytesAsBeast) {
  const std::vector<std::vector<HeaderField>> field_sets = {
      {},
      {{"Server", "mcp-dbserver"}, {"X-Request-Id", "0123456789abcdef"}},
      {{"Server", "mcp-dbserver"},
       {"X-Request-Id", "00000000000000ff"},
       {"Cache-Control", "no-store"},
       {"Mcp-Session-Id",
        std::string_view("a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9")},
       {"Content-Type", "application/json"}},
      {{"Server", "mcp-dbserver"},
       {"X-Request-Id", "fedcba9876543210"},
       {"Cache-Control", "no-store"},
       {"WWW-Authenticate", "Bearer realm=\"mcp-dbserver\""},
       {"Content-Type", "application/json"}},
      {{"Server", "mcp-dbserver"},
       {"X-Request-Id", "1"},
       {"Cache-Control", "no-store"},
       {"Retry-After", "5"},
       {"Allow", "POST, DELETE"},
       {"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}},
      {{"Server", "mcp-dbserver"},
       {"X-Request-Id", "2"},
       {"Content-Type", "text/event-stream"},
       {"Cache-Control", "no-store"}},
  };
  const std::vector<unsigned> statuses = {200, 202, 204, 400, 401, 403, 404, 405, 406,
                                          413, 415, 429, 431, 500, 503, 299, 599};
  for (unsigned status : statuses) {
    for (unsigned version : {10U, 11U}) {
      for (bool keep_alive : {false, true}) {
        for (const auto& fields : field_sets) {
          for (std::optional<std::size_t> length :
               {std::optional<std::size_t>(0), std::optional<std::size_t>(1),
                std::optional<std::size_t>(1234567), std::optional<std::size_t>()}) {
            if (status == 204 && length != std::optional<std::size_t>(0)) continue;
            SCOPED_TRACE(std::to_string(status) + " HTTP/" + std::to_string(version) +
                         (keep_alive ? " keep-alive " : " close ") + std::to_string(fields.size()) +
                         " fields " + (length ? std::to_string(*length) : "chunked"));
            EXPECT_EQ(ours(status, version, keep_alive, fields, length),
                      beastHead(status, version, keep_alive, fields, length));
          }
        }
      }
    }
  }
}

TEST(ResponseHead, AppendsToWhatIsThere) {
  std::string out = "prefix";
  appendResponseHead(out, 200, 11, true, {}, 2);
  EXPECT_EQ(out, "prefixHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
}

}  // namespace
}  // namespace mcpdb::transport::http
