#pragma once
// A small blocking HTTP/1.1 client over libcurl (Debian libcurl4-openssl-dev).
//
// Thread-safety: an HttpClient owns ONE curl easy handle, reused across calls so keep-alive
// connections (and TLS sessions) are reused. A client object must therefore be used by one thread
// at a time: give each thread its own client, or keep a small pool and hand clients out. send() is
// not reentrant on the same object. Separate objects are fully independent.
//
// Errors never carry the path or query of the URL (a presigned URL or a token may be in them), only
// scheme://host:port.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include "common/handle.hpp"
#include "common/result.hpp"

namespace mcpdb {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// Finds a header by case-insensitive name (first match).
std::optional<std::string> findHeader(const HttpHeaders& headers, std::string_view name);

struct HttpRequest {
  std::string method = "GET";
  std::string url{};  // http:// or https:// only
  HttpHeaders headers{};
  std::string body{};
  // Zero means "use the client's default".
  std::chrono::milliseconds connectTimeout{0};
  std::chrono::milliseconds totalTimeout{0};
  // Cancellation: the transfer is aborted (Code::Cancelled) once the token is stopped or the
  // callback returns true. Checked from libcurl's progress callback, i.e. many times a second
  // while data flows and about once a second when the peer is silent.
  std::stop_token stop{};
  std::function<bool()> cancelled{};
};

struct HttpResponse {
  long status = 0;
  HttpHeaders headers{};  // names lower-cased, values trimmed, in arrival order
  std::string body{};

  std::optional<std::string> header(std::string_view name) const {
    return findHeader(headers, name);
  }
};

struct HttpClientOptions {
  std::chrono::milliseconds connectTimeout{3000};
  std::chrono::milliseconds totalTimeout{15000};
  std::size_t maxResponseBytes =
      std::size_t{16} * 1024 * 1024;  // larger bodies fail with ResourceExhausted
  bool verifyTls = true;
  std::string caFile{};  // optional CA bundle; empty = system default
  std::string userAgent = "mcp-dbserver";
};

// Owned libcurl handles.
using CurlEasyPtr = Owned<CURL, curl_easy_cleanup>;
using CurlSlistPtr = Owned<curl_slist, curl_slist_free_all>;

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Performs one request. Any HTTP status is a success value; errors are transport failures:
  // Unavailable (DNS, connect, TLS, connection reset), TimedOut, Cancelled, ResourceExhausted
  // (response too large), InvalidArgument (bad URL/scheme).
  Result<HttpResponse> send(const HttpRequest& request);

  const HttpClientOptions& options() const { return options_; }

 private:
  HttpClientOptions options_;
  CurlEasyPtr easy_;
};

// "scheme://host:port" of a URL, without user info, path or query: safe for error messages.
std::string redactUrl(std::string_view url);

}  // namespace mcpdb
