#pragma once
// Connection steps that move bytes out: the head of an answer, the write queue, the one-shot
// write of a JSON answer (sendNow), the end of a request (the next one, or the close) and the
// lingering close. Template definitions, compiled only in connection.cpp (see connection.hpp).

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "transport/http/connection.hpp"

namespace mcpdb::transport::http {

inline Json rpcError(int code, const std::string& message) {
  return protocol::makeErrorResponse(nullptr, code, message);
}

// One chunk of a chunked body (an event of an event stream).
inline std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size);
  out.append(data);
  out.append("\r\n");
  return out;
}

// The head of the answer to the current request: Server, X-Request-Id, Cache-Control (when
// `no_store`), `extra`, Content-Type (when not empty), Connection, then Content-Length or
// chunked (nullopt).
template <class Stream>
std::string Connection<Stream>::head(unsigned status, bool no_store, Fields extra,
                                     std::optional<std::size_t> content_length,
                                     std::string_view content_type) {
  std::vector<HeaderField> fields;
  fields.reserve(4 + extra.size());
  fields.emplace_back("Server", "mcp-dbserver");
  fields.emplace_back("X-Request-Id", request_id_);
  if (no_store) fields.emplace_back("Cache-Control", "no-store");
  fields.insert(fields.end(), extra.begin(), extra.end());
  if (!content_type.empty()) fields.emplace_back("Content-Type", content_type);
  std::string out;
  appendResponseHead(out, status, version_, keep_alive_ && !srv_.draining, fields, content_length);
  return out;
}

// The whole answer: the body is written after the head as a second buffer, never copied.
template <class Stream>
void Connection<Stream>::respond(unsigned status, std::string body, Fields extra,
                                 std::string_view content_type) {
  if (status == 204) body.clear();
  std::string h = head(status, true, extra, body.size(), content_type);
  if (srv_.metrics) srv_.metrics->onHttpResponse(static_cast<int>(status));
  queueWrite(std::move(h), std::move(body), true);
}

template <class Stream>
void Connection<Stream>::respondJson(unsigned status, const Json& body, Fields extra) {
  respond(status, protocol::serialize(body), extra, kJson);
}

template <class Stream>
void Connection<Stream>::respondError(unsigned status, const std::string& message, Fields extra) {
  const int code = status == 400 ? protocol::rpc::kInvalidRequest : -32000;
  respondJson(status, rpcError(code, message), extra);
}

template <class Stream>
void Connection<Stream>::queueWrite(std::string head, std::string body, bool end_of_response) {
  writes_.push_back({std::move(head), std::move(body), end_of_response});
  if (!writing_) writeNext();
}

template <class Stream>
void Connection<Stream>::writeNext() {
  if (writes_.empty()) {
    writing_ = false;
    return;
  }
  writing_ = true;
  beast::get_lowest_layer(stream_).expires_after(srv_.settings.request_timeout);
  const Write& w = writes_.front();
  const std::array<net::const_buffer, 2> buffers{net::buffer(w.head), net::buffer(w.body)};
  net::async_write(stream_, buffers,
                   [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                     if (ec) return self->close();
                     const bool end = self->writes_.front().end;
                     self->writes_.pop_front();
                     if (end) return self->answered();
                     self->writeNext();
                   });
}

// One non-blocking write of head and body; the bytes written, or -1 when the connection failed.
template <class Stream>
long Connection<Stream>::sendNow(int fd, const std::string& head, const std::string& body) {
  std::array<iovec, 2> iov{iovec{const_cast<char*>(head.data()), head.size()},
                           iovec{const_cast<char*>(body.data()), body.size()}};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = iov.size();
  for (;;) {
    const ssize_t n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return static_cast<long>(n);
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

// The last byte of an answer is written: the next request, or the close.
template <class Stream>
void Connection<Stream>::answered() {
  if (watching_) {
    // The next read (or the close) waits until the watch's read has ended.
    resume_after_watch_ = true;
    beast::get_lowest_layer(stream_).cancel();
    return;
  }
  endRequest();
  if (!keep_alive_ || srv_.draining) return lingerClose();
  if (writes_.empty()) {
    writing_ = false;
    return readHeader();
  }
  writeNext();
}

template <class Stream>
void Connection<Stream>::endRequest() {
  if (request_active_) {
    request_active_ = false;
    --srv_.active_requests;
  }
}

// Half-closes, then discards what the client still sends (e.g. the rest of an oversized body)
// for a moment, so it reads our answer instead of a connection reset. Over TLS, first ends the
// TLS session properly (close_notify, waiting up to 2 s for the client's): without it a client
// cannot tell our close from a truncation (OpenSSL 3 reports "unexpected eof while reading").
template <class Stream>
void Connection<Stream>::lingerClose() {
  endRequest();
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    if (!tls_closed_) {
      tls_closed_ = true;
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        // Done, timed out, or the client sent more data or closed first: close TCP as usual.
        self->lingerClose();
      });
      return;
    }
  }
  beast::error_code ec;
  auto& sock = beast::get_lowest_layer(stream_).socket();
  sock.shutdown(tcp::socket::shutdown_send, ec);
  if (ec) return close();
  beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(2));
  discard();
}

template <class Stream>
void Connection<Stream>::discard() {
  auto buf = std::make_shared<std::array<char, 4096>>();
  beast::get_lowest_layer(stream_).async_read_some(
      net::buffer(*buf), [self = this->shared_from_this(), buf](beast::error_code ec, std::size_t) {
        if (ec) return self->close();
        self->discard();
      });
}

template <class Stream>
void Connection<Stream>::close() {
  post_gone_.request_stop();  // an SSE stream or an answer that cannot be written
  if (closed_) return;
  closed_ = true;
  endRequest();
  beast::error_code ec;
  auto& sock = beast::get_lowest_layer(stream_).socket();
  sock.shutdown(tcp::socket::shutdown_both, ec);
  sock.close(ec);
}

}  // namespace mcpdb::transport::http
