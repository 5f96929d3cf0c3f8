#pragma once
// One accepted HTTP connection (plain TCP or TLS): its state and its steps. Each concern's steps
// are defined in a file of its own, all compiled in connection.cpp, which instantiates the class
// for both streams:
//   connection_read.hpp   reading a request's header and body, and their timeouts
//   request_router.hpp    the checks every request passes (Host/Origin, auth, rate) and the route
//   post_handler.hpp      a POST: parse, ask protocol/ to classify, check, pick the session,
//                         dispatch
//   post_answer.hpp       answering a POST whose calls run: JSON at once, or an event stream
//   peer_watch.hpp        a client that goes away while its calls run cancels them
//   connection_io.hpp     the answer's head, the write queue, the end of a request, the close

// Boost 1.74 Asio under g++ 12 -std=c++20 needs <utility> before any Boost header (std::exchange).
#include <utility>

#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "transport/http/response_head.hpp"
#include "transport/http/server_impl.hpp"

namespace mcpdb::transport::http {

namespace bhttp = boost::beast::http;

// Extra response header fields (names are literals; values outlive the call that writes them).
using Fields = std::initializer_list<HeaderField>;

template <class Stream>
class Connection : public Evictable, public std::enable_shared_from_this<Connection<Stream>> {
 public:
  Connection(HttpServer::Impl& srv, Stream stream, bool metrics_only, bool peer_loopback,
             std::string peer_ip)
      : srv_(srv),
        stream_(std::move(stream)),
        metrics_only_(metrics_only),
        peer_loopback_(peer_loopback),
        peer_ip_(std::move(peer_ip)),
        id_(srv_.next_connection_id.fetch_add(1, std::memory_order_relaxed)) {
    ++srv_.connections;
  }
  ~Connection() override {
    srv_.admission.closed(id_);
    if (request_active_) --srv_.active_requests;
    --srv_.connections;
  }

  std::uint64_t id() const { return id_; }

  // Closed to make room for newer connections (admission.hpp): only while still unauthenticated
  // when the close runs on this connection's thread, or when claimed while idle.
  void evict() override;
  bool claimIfIdle() override;
  // The TLS handshake (TLS only), then the first request.
  void start();

 private:
  // A POST waiting for its calls' answer.
  struct Pending {
    bool sse = false;
    bool headers_sent = false;
    std::optional<std::string> response;  // serialised
    std::string session_id;
    std::string client;
    std::shared_ptr<CallBudget> budget;  // the slots its calls hold
    std::shared_ptr<protocol::Session> stateless;
  };
  struct Write {
    std::string head;  // or a whole chunk
    std::string body;
    bool end = false;
  };
  // What a 2025-era POST body holds, as far as routing it goes.
  struct LegacyShape {
    bool initialize_in_batch = false;  // refused
    bool expects_response = true;
    bool is_initialize = false;
    std::size_t tool_calls = 0;
    bool progress = false;  // a tools/call asks for progress notifications
  };
  // The session a 2025-era POST runs in; `session` null when the POST was answered (refused).
  struct SessionChoice {
    std::shared_ptr<protocol::Session> session;
    std::string new_session_id;
    bool stateless = false;
  };

  // ---- reading (connection_read.hpp)
  std::chrono::milliseconds headerTimeout() const;
  // The connection carries `key`'s requests (empty: auth is off); false when the key already
  // holds as many connections as it may, none of them idle (admission.hpp).
  bool markAuthenticated(const std::string& key);
  void readHeader();
  void onHeader(beast::error_code ec);
  void readBody();
  void onReadError(beast::error_code ec);
  void beginRequest();

  // ---- routing (request_router.hpp)
  void handle();
  bool hostAndOriginAllowed(const std::string& method);
  std::optional<Caller> admitCaller(const std::string& method);
  void routeByMethod(const Caller& caller);
  std::optional<std::string_view> header(bhttp::field f) const;
  std::optional<std::string_view> header(std::string_view name) const;
  std::optional<Caller> authenticate();
  std::string requestSource() const;
  void refuseUnauthenticated(const std::string& method, const std::string& message);
  void respondLimitsUnavailable(const Caller* caller, const std::string& method,
                                std::string source = {});
  protocol::Session::ScopeFn scopeFor(const Caller& caller);
  void serveMetrics(const std::string& method);
  bool opsCallerAllowed(const std::string& method);
  bool healthHostAndOriginAllowed(const std::string& method);
  void serveHealth(const std::string& method, const std::string& path, const std::string& target);
  void handleDelete(const Caller& caller);
  void handleGet(const Caller& caller);

  // ---- a POST (post_handler.hpp)
  void handlePost(const Caller& caller);
  std::optional<AcceptInfo> acceptedMediaTypes();
  static LegacyShape legacyShape(const Json& message, const protocol::Classified& request);
  SessionChoice legacySession(const Caller& caller, const LegacyShape& shape,
                              std::optional<std::string_view> version_header);
  SessionChoice newSession(const Caller& caller, bool is_initialize,
                           std::optional<std::string_view> version_header);
  std::optional<std::string> registerSession(std::shared_ptr<protocol::Session> session,
                                             const Caller& caller);
  void handleModernPost(const Caller& caller, Json& message, const protocol::Classified& request,
                        const AcceptInfo& accept);
  bool modernRequestValid(const Caller& caller, const protocol::Classified& request,
                          const Json& params, const Json& id);
  void refuseModern(const Caller& caller, const Json& id, unsigned status, int code,
                    const std::string& text, const Json& data);
  McpHeaders mcpHeaders() const;
  void dispatchPost(const Caller& caller, Json& message, const protocol::Classified& request,
                    std::shared_ptr<protocol::Session> session, const std::string& new_session_id,
                    bool stateless_session, bool holds_slot, bool sse);
  bool admitSingleCall(const Caller& caller);
  std::shared_ptr<CallBudget> newBudget(const Caller& caller, bool single_call);
  void beginPending(const Caller& caller, const std::shared_ptr<CallBudget>& budget,
                    const std::shared_ptr<protocol::Session>& session,
                    const std::string& new_session_id, bool stateless_session, bool sse);
  std::shared_ptr<PostOutbox> newOutbox(std::shared_ptr<CallBudget> budget);

  // ---- answering a POST that waits for calls (post_answer.hpp)
  void deliver(std::string m, bool response);
  // The 200 head of an event stream (a POST answered as a stream, a GET stream), once.
  void queueEventStreamHead();
  void release(const Pending& p);
  void complete();
  void answerInPlace(std::string body, const net::any_io_executor& exec);
  void afterSendNow(std::string head, std::string body, long sent);

  // ---- watching the peer while calls run (peer_watch.hpp)
  void watchPeer();
  void onPeerRead(beast::error_code ec, std::size_t n);

  // ---- writing and closing (connection_io.hpp)
  static constexpr std::string_view kJson = "application/json";
  std::string head(unsigned status, bool no_store, Fields extra,
                   std::optional<std::size_t> content_length, std::string_view content_type = {});
  void respond(unsigned status, std::string body, Fields extra, std::string_view content_type = {});
  void respondJson(unsigned status, const Json& body, Fields extra);
  void respondError(unsigned status, const std::string& message, Fields extra = {});
  void queueWrite(std::string head, std::string body, bool end_of_response);
  void writeNext();
  static long sendNow(int fd, const std::string& head, const std::string& body);
  void answered();
  void endRequest();
  void lingerClose();
  void discard();
  void close();

  HttpServer::Impl& srv_;
  Stream stream_;
  bool metrics_only_;
  bool peer_loopback_;
  std::string peer_ip_;
  std::uint64_t id_;
  bool authenticated_ = false;  // a request on it presented a valid key (or auth is off)
  std::string key_;             // whose (the client's name; empty when auth is off)
  // Between requests (waiting for the next one's header) it is idle, and the admission may claim
  // it to close it for a newer connection (admission.hpp); set and read from other threads.
  enum IdleState : int { kBusy, kIdle, kClaimed };
  std::atomic<int> idle_{kBusy};
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  bool request_active_ = false;
  std::string request_id_;  // of the request being answered (X-Request-Id)
  bool closed_ = false;
  bool tls_closed_ = false;  // close_notify sent (TLS only)
  bool writing_ = false;
  std::deque<Write> writes_;
  std::optional<Pending> pending_;
  std::stop_source post_gone_;                // of the current POST: its client has gone
  std::atomic<bool> awaiting_answer_{false};  // the current POST is not answered yet
  bool watching_ = false;                     // watchPeer's read is pending
  bool resume_after_watch_ = false;           // answered() waits for that read to end
};

// Instantiated once each, in connection.cpp.
extern template class Connection<PlainStream>;
extern template class Connection<TlsStream>;

}  // namespace mcpdb::transport::http
