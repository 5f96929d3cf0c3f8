#pragma once
// Connection steps: answering a POST whose calls run. An event stream gets each message as it
// comes; a JSON POST gets its one answer at once (answerInPlace, over plain TCP, written by the
// thread that produced it) or through the I/O thread (complete). Template definitions, compiled
// only in connection.cpp (see connection.hpp).

#include "transport/http/connection.hpp"
#include "transport/http/connection_io.hpp"

namespace mcpdb::transport::http {

// `m` is one serialised message; `response`: it answers the POST (a response or a batch).
template <class Stream>
// NOLINTNEXTLINE(performance-unnecessary-value-param): false positive, m is moved below.
void Connection<Stream>::deliver(std::string m, bool response) {
  if (!pending_) return;
  if (pending_->sse) {
    queueEventStreamHead();
    queueWrite(chunk("event: message\ndata: " + m + "\n\n"), {}, false);
  } else if (response) {
    pending_->response = std::move(m);
  }
  // JSON mode: notifications without a stream to carry them are dropped.
}

template <class Stream>
void Connection<Stream>::queueEventStreamHead() {
  if (pending_->headers_sent) return;
  pending_->headers_sent = true;
  queueWrite(head(200, false,
                  {{"Content-Type", "text/event-stream"},
                   {"Cache-Control", "no-store"},
                   {"X-Accel-Buffering", "no"}},
                  std::nullopt),
             {}, false);
}

// The POST is over: its calls no longer count against the client, before the answer leaves.
template <class Stream>
void Connection<Stream>::release(const Pending& p) {
  const std::size_t calls = p.budget ? p.budget->entered.load() : 0;
  if (calls > 0) {
    srv_.limiter.leaveCalls(p.client, calls);
    if (srv_.metrics) srv_.metrics->callsFinished(static_cast<std::int64_t>(calls));
  }
  if (p.stateless) {
    std::lock_guard<std::mutex> lock(srv_.stateless_mu);
    srv_.stateless_live.erase(p.stateless);
  }
}

template <class Stream>
void Connection<Stream>::complete() {
  awaiting_answer_.store(false);
  if (!pending_) return;
  Pending p = std::move(*pending_);
  pending_.reset();
  release(p);
  if (p.sse && p.headers_sent) {
    queueWrite("0\r\n\r\n", {}, true);
    if (srv_.metrics) srv_.metrics->onHttpResponse(200);
    return;
  }
  if (!p.response) return respond(202, {}, {});  // every call was cancelled
  if (p.session_id.empty()) return respond(200, std::move(*p.response), {}, kJson);
  respond(200, std::move(*p.response), {{"Mcp-Session-Id", p.session_id}}, kJson);
}

// The JSON answer of the pending POST over plain TCP, written by the thread that produced it (a
// worker, or this connection's I/O thread when the answer came at once), as the stdio transport
// does: the client reads it without waiting for the I/O thread to wake up first. Safe because
// the connection is idle until its POST is answered: no read or write is pending on the socket,
// no handler of this connection runs (the next one is the hand-off posted here), and the gate
// (held by the caller) keeps the socket open. Whatever the socket does not take at once, and
// what follows (the next request, or the close), is left to the I/O thread.
template <class Stream>
void Connection<Stream>::answerInPlace(std::string body, const net::any_io_executor& exec) {
  awaiting_answer_.store(false);
  if (!pending_) return;
  Pending p = std::move(*pending_);
  pending_.reset();
  release(p);
  std::string h = p.session_id.empty()
                      ? head(200, true, {}, body.size(), kJson)
                      : head(200, true, {{"Mcp-Session-Id", p.session_id}}, body.size(), kJson);
  if (srv_.metrics) srv_.metrics->onHttpResponse(200);
  const long sent = sendNow(beast::get_lowest_layer(stream_).socket().native_handle(), h, body);
  net::post(exec, [self = this->shared_from_this(), h = std::move(h), body = std::move(body),
                   sent]() mutable { self->afterSendNow(std::move(h), std::move(body), sent); });
}

// Back on the I/O thread after answerInPlace: what the socket did not take is queued.
template <class Stream>
void Connection<Stream>::afterSendNow(std::string head, std::string body, long sent) {
  if (sent < 0) return close();
  const auto n = static_cast<std::size_t>(sent);
  if (n == head.size() + body.size()) return answered();
  if (n < head.size()) {
    head.erase(0, n);
  } else {
    body.erase(0, n - head.size());
    head.clear();
  }
  queueWrite(std::move(head), std::move(body), true);
}

}  // namespace mcpdb::transport::http
