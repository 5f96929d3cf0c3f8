#pragma once
// Test-only HTTP/1.1 server on 127.0.0.1 with an ephemeral port (Boost.Beast, Debian libboost-dev).
// Each accepted connection gets its own thread, so a slow handler (timeouts) does not block other
// clients. Keep-alive is honoured. Requests are recorded in arrival order.
//
//   mcpdb::test::FakeHttpServer server([](const FakeRequest& r) {
//     return FakeResponse{200, {{"Content-Type", "text/plain"}}, "hello"};
//   });
//   std::string url = server.url() + "/path";   // http://127.0.0.1:PORT/path

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpdb::test {

struct FakeRequest {
  std::string method{};
  std::string target{};  // path + query, as sent
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string body{};

  // Case-insensitive header lookup (first match).
  std::optional<std::string> header(std::string_view name) const;
  // Path without the query string.
  std::string path() const;
};

struct FakeResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string body{};
  // Wait this long before answering (timeouts, cancellation).
  std::chrono::milliseconds delay{0};
  // Drop the connection without any answer (fault injection).
  bool dropConnection = false;
};

using FakeHandler = std::function<FakeResponse(const FakeRequest&)>;

class FakeHttpServer {
 public:
  // Starts listening immediately; the handler runs on connection threads (keep it thread-safe).
  explicit FakeHttpServer(FakeHandler handler);
  ~FakeHttpServer();  // stops and joins all threads
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  std::uint16_t port() const;
  std::string url() const;  // "http://127.0.0.1:PORT"

  // Copy of all requests received so far.
  std::vector<FakeRequest> requests() const;
  std::size_t requestCount() const;
  void clearRequests();
  // Number of TCP connections accepted so far (to check keep-alive reuse).
  std::size_t connectionCount() const;

  // Replace the handler while running.
  void setHandler(FakeHandler handler);

  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A port on 127.0.0.1 where nothing listens (bound then closed): for connection-refused tests.
std::uint16_t unusedLocalPort();

}  // namespace mcpdb::test
