#pragma once
// Connection steps: the TLS handshake, reading a request's header and body, and their timeouts.
// Template definitions, compiled only in connection.cpp (see connection.hpp).

#include <algorithm>
#include <cstdint>
#include <random>
#include <type_traits>

#include "transport/http/connection.hpp"

namespace mcpdb::transport::http {

// A per-request id for correlation (X-Request-Id, audit lines of refusals): 64 random bits in hex.
// Not a secret, so a per-thread generator seeded once from the OS is enough.
inline std::string newRequestId() {
  thread_local std::mt19937_64 gen{[] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t v = gen();
  std::string id(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) id[static_cast<std::size_t>(i)] = kHex[v & 15];
  return id;
}

template <class Stream>
void Connection<Stream>::evict() {
  net::post(stream_.get_executor(), [self = this->shared_from_this()] {
    if (!self->authenticated_ || self->idle_.load() == kClaimed) self->close();
  });
}

template <class Stream>
bool Connection<Stream>::claimIfIdle() {
  int expected = kIdle;
  return idle_.compare_exchange_strong(expected, kClaimed);
}

template <class Stream>
void Connection<Stream>::start() {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    beast::get_lowest_layer(stream_).expires_after(headerTimeout());
    stream_.async_handshake(ssl::stream_base::server,
                            [self = this->shared_from_this()](beast::error_code ec) {
                              if (ec) return self->close();
                              self->readHeader();
                            });
  } else {
    readHeader();
  }
}

// Until a request on this connection presents a valid key, its headers must come sooner.
template <class Stream>
std::chrono::milliseconds Connection<Stream>::headerTimeout() const {
  return authenticated_
             ? srv_.settings.idle_timeout
             : std::min(srv_.settings.idle_timeout, srv_.settings.unauthenticated_timeout);
}

template <class Stream>
bool Connection<Stream>::markAuthenticated(const std::string& key) {
  if (authenticated_ && key == key_) return true;
  auto verdict = srv_.admission.authenticated(id_, this->weak_from_this(), key);
  for (auto& old : verdict.evict) old->evict();
  if (!verdict.admitted) return false;
  authenticated_ = true;
  key_ = key;
  return true;
}

template <class Stream>
void Connection<Stream>::readHeader() {
  parser_.emplace();
  parser_->body_limit(srv_.settings.max_body_bytes);
  parser_->header_limit(static_cast<std::uint32_t>(srv_.settings.max_header_bytes));
  // The whole header must arrive within the idle timeout: a slow client (slowloris) holds one
  // connection slot for that long at most, and never blocks other connections' threads.
  beast::get_lowest_layer(stream_).expires_after(headerTimeout());
  idle_.store(kIdle);
  bhttp::async_read_header(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->onHeader(ec); });
}

template <class Stream>
void Connection<Stream>::onHeader(beast::error_code ec) {
  // Claimed while idle, to make room for a newer connection: closed, whatever arrived.
  if (idle_.exchange(kBusy) == kClaimed) return close();
  if (ec) return onReadError(ec);
  auto& req = parser_->get();
  if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
    auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
    beast::get_lowest_layer(stream_).expires_after(srv_.settings.request_timeout);
    net::async_write(stream_, net::buffer(*cont),
                     [self = this->shared_from_this(), cont](beast::error_code wec, std::size_t) {
                       if (wec) return self->close();
                       self->readBody();
                     });
    return;
  }
  readBody();
}

template <class Stream>
void Connection<Stream>::readBody() {
  beast::get_lowest_layer(stream_).expires_after(srv_.settings.request_timeout);
  bhttp::async_read(stream_, buffer_, *parser_,
                    [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                      if (ec) return self->onReadError(ec);
                      beast::get_lowest_layer(self->stream_).expires_never();
                      self->handle();
                    });
}

template <class Stream>
void Connection<Stream>::onReadError(beast::error_code ec) {
  if (ec == bhttp::error::body_limit) {
    beginRequest();
    keep_alive_ = false;
    srv_.refuse(nullptr, "body_too_large", 413, "", request_id_);
    return respondError(
        413, "the request body exceeds " + std::to_string(srv_.settings.max_body_bytes) + " bytes");
  }
  if (ec == bhttp::error::header_limit) {
    beginRequest();
    keep_alive_ = false;
    srv_.refuse(nullptr, "headers_too_large", 431, "", request_id_);
    return respondError(431, "the request headers are too large");
  }
  if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
      ec == net::error::operation_aborted || ec == net::error::connection_reset ||
      buffer_.size() == 0) {
    return close();
  }
  beginRequest();
  keep_alive_ = false;
  respondError(400, "malformed HTTP request");
}

// A request begins (or a read failure is answered as one): counted as active, given its id.
template <class Stream>
void Connection<Stream>::beginRequest() {
  if (!request_active_) {
    request_active_ = true;
    ++srv_.active_requests;
  }
  request_id_ = newRequestId();
}

}  // namespace mcpdb::transport::http
