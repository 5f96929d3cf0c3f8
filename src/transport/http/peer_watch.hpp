#pragma once
// Connection steps: watching the peer while a POST's calls run. A read stays pending on the
// connection: an error or EOF means the client has gone, and the POST's calls are cancelled
// (Outbox::gone). Bytes that arrive instead (a pipelined next request) are kept in buffer_ for
// readHeader; past max_header_bytes of them the watch stops (the calls then run to their end).
// Only the I/O thread touches the watch state; answerInPlace (a worker) touches none of it and
// never closes the socket. Template definitions, compiled only in connection.cpp.

#include "transport/http/connection.hpp"

namespace mcpdb::transport::http {

template <class Stream>
void Connection<Stream>::watchPeer() {
  if (watching_ || closed_ || !awaiting_answer_.load() ||
      buffer_.size() >= srv_.settings.max_header_bytes)
    return;
  watching_ = true;
  // No timeout on the watch (the calls have their own); a write's timeout stays its own.
  beast::get_lowest_layer(stream_).expires_never();
  stream_.async_read_some(buffer_.prepare(4096),
                          [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                            self->onPeerRead(ec, n);
                          });
}

template <class Stream>
void Connection<Stream>::onPeerRead(beast::error_code ec, std::size_t n) {
  watching_ = false;
  buffer_.commit(n);
  if (resume_after_watch_) {
    resume_after_watch_ = false;
    return answered();
  }
  if (ec) {
    post_gone_.request_stop();  // the socket closes when the POST's (now empty) answer fails
    return;
  }
  watchPeer();
}

}  // namespace mcpdb::transport::http
