#include "common/http_client.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>

namespace mcpdb {
namespace {

void globalInitOnce() {
  // curl_global_init is not guaranteed thread-safe on every build: do it exactly once.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  std::size_t maxBytes = 0;
  bool tooLarge = false;
  bool cancelled = false;
};

size_t onBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->response.body.size() + n > t->maxBytes) {
    t->tooLarge = true;
    return 0;  // makes libcurl fail with CURLE_WRITE_ERROR
  }
  t->response.body.append(data, n);
  return n;
}

size_t onHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response.headers.clear();  // a new response (e.g. after 100 Continue): start over
    return n;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->response.headers.emplace_back(lower(trim(line.substr(0, colon))),
                                     std::string(trim(line.substr(colon + 1))));
  }
  return n;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  const HttpRequest& r = *t->request;
  if (r.stop.stop_requested() || (r.cancelled && r.cancelled())) {
    t->cancelled = true;
    return 1;  // aborts with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

Error transportError(CURLcode rc, const Transfer& t, const std::string& where) {
  if (t.cancelled || rc == CURLE_ABORTED_BY_CALLBACK) {
    return makeError(Code::Cancelled, "request to " + where + " cancelled");
  }
  if (t.tooLarge)
    return makeError(Code::ResourceExhausted, "response from " + where + " too large");
  std::string what = curl_easy_strerror(rc);
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      return makeError(Code::TimedOut, "request to " + where + " timed out");
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return makeError(Code::InvalidArgument, "bad URL for " + where + ": " + what);
    default:
      // DNS, connect, TLS, reset, empty reply: the endpoint is not usable right now.
      return makeError(Code::Unavailable, "cannot reach " + where + ": " + what);
  }
}

}  // namespace

std::optional<std::string> findHeader(const HttpHeaders& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() &&
        std::equal(k.begin(), k.end(), name.begin(), [](unsigned char a, unsigned char b) {
          return std::tolower(a) == std::tolower(b);
        })) {
      return v;
    }
  }
  return std::nullopt;
}

std::string redactUrl(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return "<url>";
  auto rest = url.substr(scheme + 3);
  auto end = rest.find_first_of("/?#");
  auto authority = rest.substr(0, end);
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) authority = authority.substr(at + 1);
  return std::string(url.substr(0, scheme + 3)) + std::string(authority);
}

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)) {
  globalInitOnce();
  easy_.reset(curl_easy_init());
}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

Result<HttpResponse> HttpClient::send(const HttpRequest& request) {
  const std::string where = redactUrl(request.url);
  if (!easy_) return makeError(Code::Internal, "HTTP client could not be initialised");
  if (request.url.rfind("http://", 0) != 0 && request.url.rfind("https://", 0) != 0) {
    return makeError(Code::InvalidArgument, "only http:// and https:// URLs are allowed: " + where);
  }
  if (request.stop.stop_requested() || (request.cancelled && request.cancelled())) {
    return makeError(Code::Cancelled, "request to " + where + " cancelled");
  }

  CURL* h = easy_.get();
  // Reset options but keep the connection cache, so keep-alive connections are reused.
  curl_easy_reset(h);

  Transfer t;
  t.request = &request;
  t.maxBytes = options_.maxResponseBytes;

  CurlSlistPtr headers;
  for (const auto& [k, v] : request.headers) {
    std::string line = k;
    if (v.empty()) {
      line += ';';  // "Name;" sends an empty header
    } else {
      line += ": ";
      line += v;
    }
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (next == nullptr) return makeError(Code::Internal, "out of memory building headers");
    (void)headers.release();
    headers.reset(next);
  }
  // libcurl would otherwise add "Expect: 100-continue" for larger bodies: one round trip wasted.
  if (!findHeader(request.headers, "expect")) {
    curl_slist* next = curl_slist_append(headers.get(), "Expect:");
    if (next == nullptr) return makeError(Code::Internal, "out of memory building headers");
    (void)headers.release();
    headers.reset(next);
  }

  auto connectMs =
      request.connectTimeout.count() > 0 ? request.connectTimeout : options_.connectTimeout;
  auto totalMs = request.totalTimeout.count() > 0 ? request.totalTimeout : options_.totalTimeout;

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // required for multi-threaded use
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connectMs.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(totalMs.count()));
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, options_.verifyTls ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, options_.verifyTls ? 2L : 0L);
  if (!options_.caFile.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.caFile.c_str());
  if (!options_.userAgent.empty())
    curl_easy_setopt(h, CURLOPT_USERAGENT, options_.userAgent.c_str());
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl can decode

  if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    if (request.method != "POST")
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    // Sets the body (possibly empty: then "Content-Length: 0") and makes it a request with a body.
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);

  CURLcode rc = curl_easy_perform(h);
  // The header list must outlive the transfer only; drop the handle's pointer to it.
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  if (rc != CURLE_OK) return transportError(rc, t, where);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.response.status);
  return std::move(t.response);
}

}  // namespace mcpdb
