// Boost 1.74 Asio under g++ 12 -std=c++20 needs <utility> before any Boost header (std::exchange).
#include <utility>

#include "transport/http/http_server.hpp"

#include <openssl/ssl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <mutex>
#include <random>
#include <set>
#include <shared_mutex>
#include <stop_token>
#include <thread>
#include <type_traits>

#include "auth/auth_throttle.hpp"
#include "auth/rate_limiter.hpp"
#include "protocol/jsonrpc.hpp"
#include "transport/http/admission.hpp"
#include "transport/http/policy.hpp"
#include "transport/http/response_head.hpp"
#include "transport/http/session_table.hpp"

namespace mcpdb::transport::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace {

// Extra response header fields (names are literals; values outlive the call that writes them).
using Fields = std::initializer_list<HeaderField>;

// Who is calling, as far as the HTTP layer knows.
struct Caller {
  std::string name;
  auth::RateSettings rate;
  bool anonymous = false;
};

// The client table and auth mode, swapped whole on reload. Sessions' scope predicates hold it
// (not the server), so scope changes and revocations apply to open sessions at once.
class AuthState {
 public:
  explicit AuthState(auth::AuthSettings s) { set(std::move(s)); }
  void set(auth::AuthSettings s) {
    auto table = std::make_shared<const auth::ClientTable>(std::move(s.clients));
    std::lock_guard<std::mutex> lock(mu_);
    table_ = std::move(table);
    required_ = s.required;
    defaults_ = s.defaults;
  }
  std::shared_ptr<const auth::ClientTable> table() const {
    std::lock_guard<std::mutex> lock(mu_);
    return table_;
  }
  bool required() const {
    std::lock_guard<std::mutex> lock(mu_);
    return required_;
  }
  auth::RateSettings defaults() const {
    std::lock_guard<std::mutex> lock(mu_);
    return defaults_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const auth::ClientTable> table_;
  bool required_ = true;
  auth::RateSettings defaults_;
};

// Lets worker threads post to the I/O contexts (and write to sockets) only while they exist.
// Shared while a thread answers; exclusive to close it at shutdown.
struct PostGate {
  std::shared_mutex mu;
  bool open = true;
};

// What the tool calls of one POST may start: each call takes a token of the client's rate bucket
// and a slot of its concurrency cap, in the order the calls come, so a batch counts as the calls it
// holds. The request's own token (taken before the body was handled) pays for its first call; a
// single call's slot is reserved before the session sees it (over the cap, the POST is answered
// 429 as before). Slots are held until the POST is answered. Used on the connection's I/O thread
// (Session::handle dispatches calls synchronously); `entered` is read when the POST ends.
struct CallBudget {
  CallBudget(auth::RateLimiter& l, std::string c, auth::RateSettings r, bool reserved)
      : limiter(l),
        client(std::move(c)),
        rate(r),
        prereserved(reserved ? 1 : 0),
        entered(reserved ? 1 : 0) {}

  std::optional<protocol::Outbox::CallRefusal> admit() {
    if (prereserved > 0) {
      --prereserved;
      prepaid = false;
      return std::nullopt;
    }
    if (prepaid) {
      prepaid = false;
    } else if (auto wait = limiter.admit(client, rate)) {
      const long secs = std::max<long>(1, static_cast<long>((wait->count() + 999) / 1000));
      return refused("rate_limited",
                     "rate limit exceeded: retry after " + std::to_string(secs) + " s");
    }
    if (!limiter.enterCalls(client, 1, rate.max_concurrent)) {
      return refused("concurrency_limited", "too many concurrent tool calls for this client");
    }
    entered.fetch_add(1);
    if (on_started) on_started();
    return std::nullopt;
  }
  protocol::Outbox::CallRefusal refused(std::string reason, std::string message) {
    if (on_refused) on_refused(reason);
    return {std::move(reason), std::move(message)};
  }

  auth::RateLimiter& limiter;
  std::string client;
  auth::RateSettings rate;
  std::size_t prereserved;
  bool prepaid = true;
  std::atomic<std::size_t> entered;
  std::function<void()> on_started;                  // metrics: one call started
  std::function<void(std::string_view)> on_refused;  // audit and metrics of one refused call
};

// Responses and notifications of one POST. An SSE POST (`stream`) hands every message to its
// connection's I/O thread as it comes (`deliver`) and ends when the last reference goes (every
// call of the POST finished or was cancelled). A JSON POST ends with its one response: `finish`
// gets it at once, on the thread that produced it (before, the response and the end of the POST
// were two hand-offs to the I/O thread); when there is none (every call cancelled), `finish` gets
// nullopt when the last reference goes.
class PostOutbox : public protocol::Outbox {
 public:
  PostOutbox(bool stream, std::function<void(std::string, bool)> deliver,
             std::function<void(std::optional<std::string>)> finish,
             std::shared_ptr<CallBudget> budget, std::stop_token gone)
      : stream_(stream),
        deliver_(std::move(deliver)),
        finish_(std::move(finish)),
        budget_(std::move(budget)),
        gone_(std::move(gone)) {}
  ~PostOutbox() override {
    if (!finished_.exchange(true)) finish_(std::nullopt);
  }
  void send(const Json& message) override {
    const bool response = message.is_array() || message.contains("id");
    // JSON mode: notifications without a stream to carry them are dropped, unserialised.
    if (!stream_ && !response) return;
    sendSerialized(protocol::serialize(message), response);
  }
  void sendSerialized(std::string text, bool response) override {
    if (stream_) return deliver_(std::move(text), response);
    if (response && !finished_.exchange(true)) finish_(std::move(text));
  }
  std::optional<CallRefusal> admitCall() override { return budget_->admit(); }
  std::stop_token gone() const override { return gone_; }

 private:
  const bool stream_;
  std::atomic<bool> finished_{false};
  std::function<void(std::string, bool)> deliver_;
  std::function<void(std::optional<std::string>)> finish_;
  std::shared_ptr<CallBudget> budget_;
  std::stop_token gone_;
};

class NullOutbox : public protocol::Outbox {
 public:
  void send(const Json&) override {}
  void sendSerialized(std::string, bool) override {}  // not parsed back only to be dropped
};

bool wantsProgress(const Json& m) {
  if (!m.is_object() || m.value("method", Json()) != "tools/call" || !m.contains("id"))
    return false;
  const Json& p = m.value("params", Json::object());
  return p.is_object() && p.contains("_meta") && p["_meta"].is_object() &&
         p["_meta"].contains("progressToken");
}

Json rpcError(int code, const std::string& message) {
  return protocol::makeErrorResponse(nullptr, code, message);
}

// A per-request id for correlation (X-Request-Id, audit lines of refusals): 64 random bits in hex.
// Not a secret, so a per-thread generator seeded once from the OS is enough.
std::string newRequestId() {
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

std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size);
  out.append(data);
  out.append("\r\n");
  return out;
}

}  // namespace

struct HttpServer::Impl {
  Impl(protocol::ServerCore& c, HttpSettings s, ListenAddress l,
       std::shared_ptr<observe::AuditLog> a, std::shared_ptr<observe::Metrics> m)
      : core(c),
        settings(std::move(s)),
        listen(std::move(l)),
        policy(settings.allowed_hosts, settings.allowed_origins, listen.host, listen.loopback),
        audit(std::move(a)),
        metrics(std::move(m)),
        auth_state(std::make_shared<AuthState>(settings.auth)),
        sources(settings.trusted_proxies),
        throttle(std::make_shared<auth::AuthThrottle>(settings.auth_throttle)),
        admission(AdmissionLimits{settings.max_connections, settings.reservedConnections(),
                                  settings.max_unauthenticated_per_source, settings.connection_rate,
                                  settings.connection_burst}),
        sessions(settings.max_sessions, settings.max_sessions_per_client),
        gate(std::make_shared<PostGate>()) {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, settings.threads); ++i)
      iocs.push_back(std::make_unique<net::io_context>(1));
    if (metrics) {
      // Captures the throttle, not the server: the metrics may outlive it.
      metrics->addGauge("mcpdb_http_auth_backoff_sources",
                        "Sources whose wrong API keys are answered 429 (failed-auth backoff).",
                        [t = throttle] { return static_cast<double>(t->inBackoff()); });
    }
  }

  ~Impl() {
    // I/O objects go before the contexts; pending handlers (and their connections) go with them.
    // The first context goes first: an accept completing there may hold a socket of another one.
    work.clear();
    acceptor.reset();
    metrics_acceptor.reset();
    sweep_timer.reset();
    iocs.clear();
  }

  // The acceptors, the session sweep and shutdown run on the first context.
  net::io_context& mainContext() { return *iocs.front(); }
  // The context of the next accepted connection (round robin).
  net::io_context& nextContext() {
    return *iocs[next_context.fetch_add(1, std::memory_order_relaxed) % iocs.size()];
  }

  // `write_audit` false: counted in the metrics only (a flood of refusals writes no flood of
  // audit lines).
  void refuse(const Caller* caller, std::string_view reason, int status, std::string_view method,
              const std::string& request_id, std::string source = {}, std::size_t failures = 0,
              bool write_audit = true) {
    const std::string client = caller != nullptr ? caller->name : "-";
    if (audit && write_audit) {
      audit->onRefused(observe::Refusal{client, std::string(reason), status, std::string(method),
                                        request_id, std::move(source), failures});
    }
    if (metrics) metrics->onRefused(client, reason);
  }

  void doAccept(tcp::acceptor& acc, bool metrics_only);
  // A new connection: admitted (admission.hpp) and started, or closed.
  void accepted(tcp::socket sock, bool metrics_only);
  void scheduleSweep();

  protocol::ServerCore& core;
  HttpSettings settings;
  ListenAddress listen;
  OriginPolicy policy;
  std::optional<OriginPolicy> metrics_policy;  // of the separate metrics listener
  std::shared_ptr<observe::AuditLog> audit;
  std::shared_ptr<observe::Metrics> metrics;
  std::shared_ptr<AuthState> auth_state;
  SourcePolicy sources;
  std::shared_ptr<auth::AuthThrottle> throttle;
  Admission admission;
  std::atomic<std::uint64_t> next_connection_id{1};
  SessionTable sessions;
  auth::RateLimiter limiter;
  std::shared_ptr<PostGate> gate;
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> connections{0};
  std::atomic<std::int64_t> active_requests{0};
  std::mutex stateless_mu;
  std::set<std::shared_ptr<protocol::Session>> stateless_live;  // for cancellation at shutdown
  std::vector<std::thread> threads;

  // One io_context per I/O thread, each run by that thread alone: a connection lives on one
  // context from accept to close, so its handlers all run on one thread, in order, without a
  // strand, and a completion never wakes a second I/O thread to run it. (With one context run by
  // every I/O thread, the steps of one request went from thread to thread, each hand-off a futex
  // wake and a context switch: the profile showed the two I/O threads waking each other several
  // times per request.)
  std::vector<std::unique_ptr<net::io_context>> iocs;
  std::atomic<std::size_t> next_context{0};
  std::optional<ssl::context> tls;
  std::optional<tcp::acceptor> acceptor;
  std::optional<tcp::acceptor> metrics_acceptor;
  std::optional<net::steady_timer> sweep_timer;
  // Keeps run() going while connections only wait for tool calls (no I/O pending), e.g. while
  // draining after the acceptors closed.
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work;
  std::uint16_t bound_port = 0;
  std::optional<std::uint16_t> bound_metrics_port;
};

namespace {

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
  // when the close runs on this connection's thread.
  void evict() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (!self->authenticated_) self->close();
    });
  }

  void start() {
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

 private:
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

  // ---- reading -------------------------------------------------------------------------------
  // Until a request on this connection presents a valid key, its headers must come sooner.
  std::chrono::milliseconds headerTimeout() const {
    return authenticated_
               ? srv_.settings.idle_timeout
               : std::min(srv_.settings.idle_timeout, srv_.settings.unauthenticated_timeout);
  }

  void markAuthenticated() {
    if (authenticated_) return;
    authenticated_ = true;
    srv_.admission.authenticated(id_);
  }

  void readHeader() {
    parser_.emplace();
    parser_->body_limit(srv_.settings.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(srv_.settings.max_header_bytes));
    // The whole header must arrive within the idle timeout: a slow client (slowloris) holds one
    // connection slot for that long at most, and never blocks other connections' threads.
    beast::get_lowest_layer(stream_).expires_after(headerTimeout());
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                               self->onHeader(ec);
                             });
  }

  void onHeader(beast::error_code ec) {
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

  void readBody() {
    beast::get_lowest_layer(stream_).expires_after(srv_.settings.request_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) return self->onReadError(ec);
                        beast::get_lowest_layer(self->stream_).expires_never();
                        self->handle();
                      });
  }

  void onReadError(beast::error_code ec) {
    if (ec == bhttp::error::body_limit) {
      beginRequest();
      keep_alive_ = false;
      srv_.refuse(nullptr, "body_too_large", 413, "", request_id_);
      return respondError(413, "the request body exceeds " +
                                   std::to_string(srv_.settings.max_body_bytes) + " bytes");
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

  // ---- dispatch ------------------------------------------------------------------------------
  void beginRequest() {
    if (!request_active_) {
      request_active_ = true;
      ++srv_.active_requests;
    }
    request_id_ = newRequestId();
  }

  void handle() {
    beginRequest();
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    const std::string target(req.target());
    const std::string path = target.substr(0, target.find('?'));
    const std::string method(req.method_string());
    const auto& s = srv_.settings;

    // DNS-rebinding protection, before any endpoint (metrics included) serves anything: a browser
    // page on another site can reach a local server, but it cannot forge the Host and Origin
    // headers of its own requests. The metrics listener has its own policy (its bind address).
    const OriginPolicy& policy = metrics_only_ ? *srv_.metrics_policy : srv_.policy;
    if (!policy.hostAllowed(header(bhttp::field::host).value_or(""))) {
      srv_.refuse(nullptr, "forbidden_host", 403, method, request_id_);
      return respondError(403, "forbidden: the Host header is not allowed");
    }
    if (!policy.originAllowed(header(bhttp::field::origin))) {
      srv_.refuse(nullptr, "forbidden_origin", 403, method, request_id_);
      return respondError(403, "forbidden: the Origin is not allowed");
    }
    if (s.metrics.enabled && path == s.metrics.path && (metrics_only_ || !s.metrics.listen)) {
      return serveMetrics(method);
    }
    if (metrics_only_ || path != "/mcp")
      return respondError(404, "not found: the MCP endpoint is /mcp");
    if (srv_.draining) {
      keep_alive_ = false;
      return respondError(503, "the server is shutting down");
    }
    std::optional<Caller> caller = authenticate();
    if (!caller) {
      return refuseUnauthenticated(
          method, "unauthorized: send a configured API key as 'Authorization: Bearer <key>'");
    }
    markAuthenticated();
    if (auto wait = srv_.limiter.admit(caller->name, caller->rate)) {
      srv_.refuse(&*caller, "rate_limited", 429, method, request_id_);
      const long secs = std::max<long>(1, static_cast<long>((wait->count() + 999) / 1000));
      return respondError(429, "rate limit exceeded: retry after " + std::to_string(secs) + " s",
                          {{"Retry-After", std::to_string(secs)}});
    }
    switch (req.method()) {
      case bhttp::verb::post: return handlePost(*caller);
      case bhttp::verb::delete_: return handleDelete(*caller);
      case bhttp::verb::get:
        // No standalone server-to-client stream: this server sends nothing unsolicited.
        return respondError(405, "this server offers no GET stream; use POST",
                            {{"Allow", "POST, DELETE"}});
      default: return respondError(405, "method not allowed", {{"Allow", "POST, DELETE"}});
    }
  }

  // A request header's value, viewed in the parser (valid until the next request is read).
  std::optional<std::string_view> header(bhttp::field f) const {
    const auto& req = parser_->get();
    auto it = req.find(f);
    if (it == req.end()) return std::nullopt;
    return std::string_view(it->value().data(), it->value().size());
  }
  std::optional<std::string_view> header(std::string_view name) const {
    const auto& req = parser_->get();
    auto it = req.find(beast::string_view(name.data(), name.size()));
    if (it == req.end()) return std::nullopt;
    return std::string_view(it->value().data(), it->value().size());
  }

  std::optional<Caller> authenticate() {
    const auto& state = *srv_.auth_state;
    if (!state.required()) return Caller{"anonymous", state.defaults(), true};
    const auto value = header(bhttp::field::authorization);
    if (!value) return std::nullopt;
    const auto token = auth::bearerToken(*value);
    if (!token) return std::nullopt;
    const auto table = state.table();
    const auth::ClientEntry* entry = table->authenticate(*token);
    if (entry == nullptr) return std::nullopt;
    return Caller{entry->name, entry->rate, false};
  }

  // Where this request comes from (the peer, or what a trusted proxy forwarded). Several
  // X-Forwarded-For fields count as one list in order (RFC 9110 field combination), so the
  // rightmost entry is the last proxy's even when a client sent a field of its own first.
  std::string requestSource() const {
    if (srv_.sources.empty() || !srv_.sources.trusted(peer_ip_)) {
      return srv_.sources.source(peer_ip_, std::nullopt);
    }
    std::string forwarded;
    std::size_t fields = 0;
    const auto& req = parser_->get();
    for (auto range = req.equal_range("X-Forwarded-For"); range.first != range.second;
         ++range.first) {
      if (fields++ > 0) forwarded += ',';
      forwarded.append(range.first->value().data(), range.first->value().size());
    }
    if (fields == 0) return srv_.sources.source(peer_ip_, std::nullopt);
    return srv_.sources.source(peer_ip_, forwarded);
  }

  // A missing or wrong key: 401, or 429 while the source is in failed-auth backoff. The key was
  // checked first either way (a valid key is never throttled). One audit line per 401 and one per
  // backoff period (never per throttled attempt, never the key); every refusal is counted.
  void refuseUnauthenticated(const std::string& method, const std::string& message) {
    std::string source = requestSource();
    const auto f = srv_.throttle->onFailure(source);
    if (f.retry_after.count() > 0) {
      srv_.refuse(nullptr, "auth_throttled", 429, method, request_id_, std::move(source),
                  f.failures, f.backoff_started);
      const long secs = std::max<long>(1, static_cast<long>((f.retry_after.count() + 999) / 1000));
      return respondError(
          429,
          "too many failed authentication attempts from this address: retry after " +
              std::to_string(secs) + " s",
          {{"Retry-After", std::to_string(secs)}});
    }
    srv_.refuse(nullptr, "unauthorized", 401, method, request_id_, std::move(source));
    respondError(401, message, {{"WWW-Authenticate", "Bearer realm=\"mcp-dbserver\""}});
  }

  protocol::Session::ScopeFn scopeFor(const Caller& caller) {
    if (caller.anonymous) return nullptr;
    std::shared_ptr<AuthState> state = srv_.auth_state;
    return [state, name = caller.name](const protocol::Tool& tool) {
      const auto table = state->table();
      const auth::ClientEntry* e = table->byName(name);
      return e != nullptr && e->scope.allows(tool.engine, tool.name);
    };
  }

  void serveMetrics(const std::string& method) {
    if (parser_->get().method() != bhttp::verb::get)
      return respondError(405, "use GET", {{"Allow", "GET"}});
    if (srv_.settings.metrics.require_key && srv_.auth_state->required()) {
      if (!authenticate()) return refuseUnauthenticated(method, "unauthorized");
      markAuthenticated();
    } else if (!peer_loopback_) {
      srv_.refuse(nullptr, "forbidden_metrics", 403, method, request_id_);
      return respondError(403, "forbidden: metrics are served to loopback peers only");
    }
    respond(200, srv_.metrics ? srv_.metrics->render() : std::string(), {},
            "text/plain; version=0.0.4; charset=utf-8");
  }

  void handleDelete(const Caller& caller) {
    if (srv_.settings.stateless)
      return respondError(405, "stateless mode has no sessions to end", {{"Allow", "POST"}});
    const auto sid = header("Mcp-Session-Id");
    if (!sid || !wellFormedSessionId(*sid))
      return respondError(400, "bad request: missing Mcp-Session-Id header");
    auto session = srv_.sessions.remove(*sid, caller.name);
    if (!session) return respondError(404, "session not found");
    session->cancelAll();
    if (srv_.metrics) srv_.metrics->setSessions(static_cast<std::int64_t>(srv_.sessions.size()));
    respond(204, {}, {});
  }

  void handlePost(const Caller& caller) {
    auto& req = parser_->get();
    const std::string_view ctype = header(bhttp::field::content_type).value_or("");
    if (!beast::iequals(beast::string_view(ctype.data(), ctype.size()).substr(0, 16),
                        "application/json")) {
      return respondError(415, "Content-Type must be application/json");
    }
    const AcceptInfo accept = parseAccept(header(bhttp::field::accept));
    if (!accept.json && !accept.sse)
      return respondError(406, "Accept must include application/json or text/event-stream");
    const auto version_header = header("MCP-Protocol-Version");
    protocol::Parsed parsed = protocol::parseMessage(req.body(), srv_.core.options().parse);
    if (parsed.error_response) return respondJson(400, *parsed.error_response, {});
    Json& message = *parsed.message;

    // The era (protocol/era.hpp): a 2026-07-28 request names a modern version in its header or
    // carries the per-request _meta fields; it is served on its own, without a session.
    const Json* params = nullptr;
    if (message.is_object()) {
      if (auto p = message.find("params"); p != message.end()) params = &*p;
    }
    const bool modern = (version_header && protocol::isModernVersion(trimOws(*version_header))) ||
                        (params != nullptr && protocol::carriesModernMeta(*params));
    if (modern) return handleModernPost(caller, message, accept);
    if (!protocolVersionHeaderOk(version_header)) {
      return respondError(400, "bad request: unsupported MCP-Protocol-Version");
    }

    bool expects_response = true;
    bool is_initialize = false;
    std::size_t tool_calls = 0;
    bool progress = false;
    if (message.is_array()) {
      // An empty batch is answered (an error); otherwise the session's own rule says which
      // elements get answers (protocol::getsAnswer), so the POST waits exactly when one is due.
      bool all_quiet = !message.empty();
      for (const auto& m : message) {
        all_quiet = all_quiet && !protocol::getsAnswer(m);
        if (m.is_object() && m.value("method", Json()) == "initialize") {
          return respondJson(
              400,
              rpcError(protocol::rpc::kInvalidRequest, "initialize must not be part of a batch"),
              {});
        }
        if (protocol::isToolCall(m)) ++tool_calls;
        progress = progress || wantsProgress(m);
      }
      expects_response = !all_quiet;
    } else {
      expects_response = protocol::getsAnswer(message);
      is_initialize = message.is_object() && message.value("method", Json()) == "initialize";
      if (protocol::isToolCall(message)) tool_calls = 1;
      progress = wantsProgress(message);
    }

    std::shared_ptr<protocol::Session> session;
    std::string new_session_id;
    bool stateless_session = false;
    if (srv_.settings.stateless || is_initialize) {
      session = std::make_shared<protocol::Session>(srv_.core, protocol::Principal{caller.name},
                                                    scopeFor(caller));
      if (srv_.settings.stateless) {
        stateless_session = true;
        if (!is_initialize) {
          // Every stateless request stands alone: initialise a fresh session at the version the
          // client announces (or the spec's default), out of band.
          const std::string v(version_header.value_or(kDefaultProtocolVersion));
          session->handle(Json{{"jsonrpc", "2.0"},
                               {"id", 0},
                               {"method", "initialize"},
                               {"params",
                                {{"protocolVersion", v},
                                 {"capabilities", Json::object()},
                                 {"clientInfo", {{"name", "stateless"}, {"version", "0"}}}}}},
                          std::make_shared<NullOutbox>());
        }
      } else {
        auto added = srv_.sessions.add(session, caller.name);
        if (added.evicted) added.evicted->cancelAll();  // its owner's least recently used, idle
        if (added.refused == SessionTable::Added::Refused::OwnerFull) {
          srv_.refuse(&caller, "sessions_per_client", 429, "POST", request_id_);
          return respondError(429,
                              "this client already holds " +
                                  std::to_string(srv_.settings.max_sessions_per_client) +
                                  " sessions (http.max_sessions_per_client), each with a call in "
                                  "flight; end one (DELETE) or retry later",
                              {{"Retry-After", "5"}});
        }
        if (!added.id) {
          srv_.refuse(&caller, "sessions_full", 503, "POST", request_id_);
          return respondError(503, "too many open sessions; retry later", {{"Retry-After", "5"}});
        }
        new_session_id = *added.id;
        if (srv_.metrics)
          srv_.metrics->setSessions(static_cast<std::int64_t>(srv_.sessions.size()));
      }
    } else {
      const auto sid = header("Mcp-Session-Id");
      if (!sid || !wellFormedSessionId(*sid)) {
        return respondError(400,
                            "bad request: missing Mcp-Session-Id header (send initialize first)");
      }
      session = srv_.sessions.find(*sid, caller.name);
      if (!session) return respondError(404, "session not found: initialize a new session");
    }

    if (!expects_response) {
      session->handle(message, std::make_shared<NullOutbox>());
      return respond(202, {}, {});
    }
    dispatchPost(caller, message, std::move(session), new_session_id, stateless_session,
                 !message.is_array() && tool_calls == 1, progress && accept.sse);
  }

  // A 2026-07-28 POST: one request checked against its headers (Streamable HTTP, "Server
  // Validation") and served by a session of its own. Refusals of its metadata and headers are
  // 400, an unknown method 404, each with the JSON-RPC error and the request's id.
  void handleModernPost(const Caller& caller, Json& message, const AcceptInfo& accept) {
    if (!message.is_object()) {
      return respondJson(400,
                         rpcError(protocol::rpc::kInvalidRequest,
                                  "a 2026-07-28 POST carries one JSON-RPC message, not a batch"),
                         {});
    }
    const bool request = protocol::getsAnswer(message);
    const Json id = request && message.contains("id") &&
                            (message["id"].is_string() || message["id"].is_number_integer())
                        ? message["id"]
                        : Json(nullptr);
    auto refuse = [&](unsigned status, int code, const std::string& text, const Json& data) {
      Json body = protocol::makeErrorResponse(id, code, text);
      if (!data.is_null()) body["error"]["data"] = data;
      srv_.refuse(&caller, status == 404 ? "method_not_found" : "protocol_refused",
                  static_cast<int>(status), "POST", request_id_, {}, 0, /*write_audit=*/false);
      respondJson(status, body, {});
    };
    if (!request) {
      // 2026-07-28 defines no client notification over HTTP (closing a stream cancels); one is
      // accepted and has no effect.
      if (message.contains("method") && message["method"].is_string()) return respond(202, {}, {});
      return refuse(400, protocol::rpc::kInvalidRequest, "not a JSON-RPC request", nullptr);
    }
    if (!message.contains("method") || !message["method"].is_string()) {
      return refuse(400, protocol::rpc::kInvalidRequest, "method must be a string", nullptr);
    }
    if (id.is_null()) {
      return refuse(400, protocol::rpc::kInvalidRequest, "id must be a string or an integer",
                    nullptr);
    }
    const std::string method = message["method"].get<std::string>();
    static const Json kNoParams = Json::object();
    const Json& params = message.contains("params") ? message["params"] : kNoParams;
    auto checked = protocol::checkModernMeta(params);
    const auto* error = std::get_if<protocol::MetaError>(&checked);
    if (error != nullptr && error->code == protocol::rpc::kInvalidParams) {
      return refuse(400, error->code, error->message, error->data);
    }
    // The version in _meta is a string here (checked above).
    const std::string& meta_version =
        params["_meta"][std::string(protocol::meta_key::kProtocolVersion)]
            .get_ref<const std::string&>();
    if (auto mismatch = mcpHeaderMismatch(mcpHeaders(), meta_version, method, params)) {
      return refuse(400, protocol::rpc::kHeaderMismatch, *mismatch, nullptr);
    }
    if (error != nullptr) return refuse(400, error->code, error->message, error->data);
    if (!protocol::isModernMethod(method)) {
      return refuse(404, protocol::rpc::kMethodNotFound,
                    "method not found at " + std::string(protocol::kModernProtocolVersion) + ": " +
                        (method.size() > 64 ? method.substr(0, 64) + "..." : method),
                    nullptr);
    }
    const bool listen = method == "subscriptions/listen";
    if (listen && !accept.sse) {
      return respondError(406,
                          "subscriptions/listen answers with an event stream: Accept must "
                          "include text/event-stream");
    }
    auto session = std::make_shared<protocol::Session>(srv_.core, protocol::Principal{caller.name},
                                                       scopeFor(caller));
    // A subscription holds its connection like a call holds a slot: it counts against the
    // client's concurrency cap until its stream ends.
    dispatchPost(caller, message, std::move(session), {}, /*stateless=*/true,
                 method == "tools/call" || listen,
                 listen || (accept.sse && wantsProgress(message)));
  }

  McpHeaders mcpHeaders() const {
    McpHeaders h;
    const auto& req = parser_->get();
    auto all = [&req](std::string_view name, std::vector<std::string_view>& into) {
      for (auto range = req.equal_range(beast::string_view(name.data(), name.size()));
           range.first != range.second; ++range.first) {
        into.emplace_back(range.first->value().data(), range.first->value().size());
      }
    };
    all("MCP-Protocol-Version", h.protocol_version);
    all("Mcp-Method", h.method);
    all("Mcp-Name", h.name);
    return h;
  }

  // Runs a POST's message(s) through `session` and answers it: JSON, or an event stream when
  // `sse`. `holds_slot`: one call (or subscription) whose concurrency slot is taken first (over
  // the cap: 429).
  void dispatchPost(const Caller& caller, Json& message, std::shared_ptr<protocol::Session> session,
                    const std::string& new_session_id, bool stateless_session, bool holds_slot,
                    bool sse) {
    // A single call over the concurrency cap is answered 429; the calls of a batch are admitted
    // one by one as the session dispatches them (CallBudget), each over-limit call answered with
    // its own error inside the batch's answer.
    const bool single_call = holds_slot;
    if (single_call && !srv_.limiter.enterCalls(caller.name, 1, caller.rate.max_concurrent)) {
      srv_.refuse(&caller, "concurrency_limited", 429, "POST", request_id_);
      return respondError(429, "too many concurrent tool calls for this client",
                          {{"Retry-After", "1"}});
    }
    if (srv_.metrics && single_call) srv_.metrics->callsStarted(1);
    auto budget = std::make_shared<CallBudget>(srv_.limiter, caller.name, caller.rate, single_call);
    budget->on_started = [m = srv_.metrics] {
      if (m) m->callsStarted(1);
    };
    budget->on_refused = [this, client = caller.name](std::string_view reason) {
      // Counted, and audited with this request's id (one line per refused call).
      const Caller who{client, {}, false};
      srv_.refuse(&who, reason, 429, "POST", request_id_);
    };
    pending_.emplace();
    pending_->sse = sse;
    pending_->session_id = new_session_id;
    pending_->client = caller.name;
    pending_->budget = budget;
    post_gone_ = std::stop_source();
    awaiting_answer_.store(true);
    if (stateless_session) {
      pending_->stateless = session;
      std::lock_guard<std::mutex> lock(srv_.stateless_mu);
      srv_.stateless_live.insert(session);
    }

    auto self = this->shared_from_this();
    std::shared_ptr<PostGate> gate = srv_.gate;
    auto exec = stream_.get_executor();
    auto out = std::make_shared<PostOutbox>(
        pending_->sse,
        [self, gate, exec](std::string m, bool response) {
          std::shared_lock lock(gate->mu);
          if (!gate->open) return;
          net::post(exec, [self, m = std::move(m), response]() mutable {
            self->deliver(std::move(m), response);
          });
        },
        [self, gate, exec](std::optional<std::string> response) {
          std::shared_lock lock(gate->mu);
          if (!gate->open) return;
          if constexpr (std::is_same_v<Stream, PlainStream>) {
            if (response) return self->answerInPlace(std::move(*response), exec);
          }
          net::post(exec, [self, response = std::move(response)]() mutable {
            if (response) self->deliver(std::move(*response), true);
            self->complete();
          });
        },
        budget, post_gone_.get_token());
    session->handle(message, out);
    // Calls are running: watch the connection, so that a client that goes away cancels them.
    if (budget->entered.load() > 0 || sse) watchPeer();
  }

  // ---- answering a POST that waits for calls
  // ------------------------------------------------------
  // `m` is one serialised message; `response`: it answers the POST (a response or a batch).
  // NOLINTNEXTLINE(performance-unnecessary-value-param): false positive, m is moved below.
  void deliver(std::string m, bool response) {
    if (!pending_) return;
    if (pending_->sse) {
      if (!pending_->headers_sent) {
        pending_->headers_sent = true;
        queueWrite(head(200, false,
                        {{"Content-Type", "text/event-stream"},
                         {"Cache-Control", "no-store"},
                         {"X-Accel-Buffering", "no"}},
                        std::nullopt),
                   {}, false);
      }
      queueWrite(chunk("event: message\ndata: " + m + "\n\n"), {}, false);
    } else if (response) {
      pending_->response = std::move(m);
    }
    // JSON mode: notifications without a stream to carry them are dropped.
  }

  // The POST is over: its calls no longer count against the client, before the answer leaves.
  void release(const Pending& p) {
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

  void complete() {
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
  void answerInPlace(std::string body, const net::any_io_executor& exec) {
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

  // One non-blocking write of head and body; the bytes written, or -1 when the connection failed.
  static long sendNow(int fd, const std::string& head, const std::string& body) {
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

  void afterSendNow(std::string head, std::string body, long sent) {
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

  // ---- writing -------------------------------------------------------------------------------
  static constexpr std::string_view kJson = "application/json";

  // The head of the answer to the current request: Server, X-Request-Id, Cache-Control (when
  // `no_store`), `extra`, Content-Type (when not empty), Connection, then Content-Length or
  // chunked (nullopt).
  std::string head(unsigned status, bool no_store, Fields extra,
                   std::optional<std::size_t> content_length, std::string_view content_type = {}) {
    std::vector<HeaderField> fields;
    fields.reserve(4 + extra.size());
    fields.emplace_back("Server", "mcp-dbserver");
    fields.emplace_back("X-Request-Id", request_id_);
    if (no_store) fields.emplace_back("Cache-Control", "no-store");
    fields.insert(fields.end(), extra.begin(), extra.end());
    if (!content_type.empty()) fields.emplace_back("Content-Type", content_type);
    std::string out;
    appendResponseHead(out, status, version_, keep_alive_ && !srv_.draining, fields,
                       content_length);
    return out;
  }

  // The whole answer: the body is written after the head as a second buffer, never copied.
  void respond(unsigned status, std::string body, Fields extra,
               std::string_view content_type = {}) {
    if (status == 204) body.clear();
    std::string h = head(status, true, extra, body.size(), content_type);
    if (srv_.metrics) srv_.metrics->onHttpResponse(static_cast<int>(status));
    queueWrite(std::move(h), std::move(body), true);
  }

  void respondJson(unsigned status, const Json& body, Fields extra) {
    respond(status, protocol::serialize(body), extra, kJson);
  }

  void respondError(unsigned status, const std::string& message, Fields extra = {}) {
    const int code = status == 400 ? protocol::rpc::kInvalidRequest : -32000;
    respondJson(status, rpcError(code, message), extra);
  }

  void queueWrite(std::string head, std::string body, bool end_of_response) {
    writes_.push_back({std::move(head), std::move(body), end_of_response});
    if (!writing_) writeNext();
  }

  void writeNext() {
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

  // ---- watching the peer while calls run ----------------------------------------------------
  // While a POST's calls run, a read stays pending on the connection: an error or EOF means the
  // client has gone, and the POST's calls are cancelled (Outbox::gone). Bytes that arrive instead
  // (a pipelined next request) are kept in buffer_ for readHeader; past max_header_bytes of them
  // the watch stops (the calls then run to their end). Only the I/O thread touches the watch
  // state; answerInPlace (a worker) touches none of it and never closes the socket.
  void watchPeer() {
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

  void onPeerRead(beast::error_code ec, std::size_t n) {
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

  // The last byte of an answer is written: the next request, or the close.
  void answered() {
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

  void endRequest() {
    if (request_active_) {
      request_active_ = false;
      --srv_.active_requests;
    }
  }

  // Half-closes, then discards what the client still sends (e.g. the rest of an oversized body)
  // for a moment, so it reads our answer instead of a connection reset. Over TLS, first ends the
  // TLS session properly (close_notify, waiting up to 2 s for the client's): without it a client
  // cannot tell our close from a truncation (OpenSSL 3 reports "unexpected eof while reading").
  void lingerClose() {
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
  void discard() {
    auto buf = std::make_shared<std::array<char, 4096>>();
    beast::get_lowest_layer(stream_).async_read_some(
        net::buffer(*buf),
        [self = this->shared_from_this(), buf](beast::error_code ec, std::size_t) {
          if (ec) return self->close();
          self->discard();
        });
  }

  void close() {
    post_gone_.request_stop();  // an SSE stream or an answer that cannot be written
    if (closed_) return;
    closed_ = true;
    endRequest();
    beast::error_code ec;
    auto& sock = beast::get_lowest_layer(stream_).socket();
    sock.shutdown(tcp::socket::shutdown_both, ec);
    sock.close(ec);
  }

  HttpServer::Impl& srv_;
  Stream stream_;
  bool metrics_only_;
  bool peer_loopback_;
  std::string peer_ip_;
  std::uint64_t id_;
  bool authenticated_ = false;  // a request on it presented a valid key (or auth is off)
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

}  // namespace

namespace {

// Admits a new connection (admission.hpp) and starts it, or drops it (closing its socket).
template <class Stream>
void admitAndStart(HttpServer::Impl& srv, std::shared_ptr<Connection<Stream>> conn,
                   const std::string& peer_ip, std::size_t open) {
  const bool trusted = srv.sources.trusted(peer_ip);
  auto verdict = srv.admission.admit(conn->id(), conn, sourceKey(peer_ip), trusted, open);
  for (auto& old : verdict.evict) old->evict();
  if (!verdict.admitted) {
    // Counted, not audited: a flood of connections must not become a flood of audit lines.
    if (srv.metrics) srv.metrics->onRefused("-", verdict.reason);
    return;
  }
  conn->start();
}

}  // namespace

void HttpServer::Impl::doAccept(tcp::acceptor& acc, bool metrics_only) {
  acc.async_accept(net::any_io_executor(nextContext().get_executor()),
                   [this, &acc, metrics_only](beast::error_code ec, tcp::socket sock) {
                     if (ec == net::error::operation_aborted || !acc.is_open()) return;
                     if (!ec) accepted(std::move(sock), metrics_only);
                     doAccept(acc, metrics_only);
                   });
}

void HttpServer::Impl::accepted(tcp::socket sock, bool metrics_only) {
  beast::error_code ec;
  const auto peer = sock.remote_endpoint(ec);
  const bool loopback = !ec && peer.address().is_loopback();
  const std::string peer_ip = ec ? std::string("-") : peer.address().to_string();
  // Answers are whole writes, but an SSE stream is several small ones in a row: without this,
  // Nagle holds each event back until the client ACKs the one before (a delayed ACK: up to 40 ms
  // per event on a real network).
  sock.set_option(tcp::no_delay(true), ec);
  const std::size_t open = connections.load();
  if (draining) {
    sock.close(ec);
  } else if (tls) {
    admitAndStart(*this,
                  std::make_shared<Connection<TlsStream>>(*this, TlsStream(std::move(sock), *tls),
                                                          metrics_only, loopback, peer_ip),
                  peer_ip, open);
  } else {
    admitAndStart(*this,
                  std::make_shared<Connection<PlainStream>>(*this, PlainStream(std::move(sock)),
                                                            metrics_only, loopback, peer_ip),
                  peer_ip, open);
  }
}

void HttpServer::Impl::scheduleSweep() {
  sweep_timer->expires_after(std::chrono::seconds(5));
  sweep_timer->async_wait([this](beast::error_code ec) {
    if (ec || draining) return;
    for (auto& s : sessions.expire(settings.session_idle_timeout)) s->cancelAll();
    if (metrics) metrics->setSessions(static_cast<std::int64_t>(sessions.size()));
    scheduleSweep();
  });
}

HttpServer::HttpServer(protocol::ServerCore& core, HttpSettings settings, ListenAddress listen,
                       std::shared_ptr<observe::AuditLog> audit,
                       std::shared_ptr<observe::Metrics> metrics)
    : impl_(std::make_unique<Impl>(core, std::move(settings), std::move(listen), std::move(audit),
                                   std::move(metrics))) {}

HttpServer::~HttpServer() {
  if (!impl_->threads.empty()) shutdown(std::chrono::milliseconds(0));
}

namespace {

Result<tcp::acceptor> bindAcceptor(net::io_context& ioc, const ListenAddress& at) {
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  auto results =
      resolver.resolve(at.host, std::to_string(at.port), tcp::resolver::numeric_service, ec);
  if (ec || results.empty())
    return makeError(Code::InvalidArgument, "cannot resolve listen address '" + at.host + "'");
  const tcp::endpoint ep = results.begin()->endpoint();
  tcp::acceptor acc(ioc);
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return makeError(Code::Unavailable, "cannot listen on " + at.display() + ": " + ec.message());
  return acc;
}

}  // namespace

Status HttpServer::start() {
  Impl& s = *impl_;
  if (!s.settings.auth.required && !s.listen.loopback) {
    return makeError(
        Code::FailedPrecondition,
        "http.auth: none is allowed only on a loopback address; configure client keys");
  }
  if (s.settings.tls.enabled()) {
    const TlsSettings& t = s.settings.tls;
    s.tls.emplace(ssl::context::tls_server);
    SSL_CTX* ctx = s.tls->native_handle();
    SSL_CTX_set_min_proto_version(ctx, t.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION);
    s.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    // Forward secrecy and AEAD only by default (http_config.hpp); an operator's list is taken as
    // written, but one OpenSSL cannot use refuses to start rather than falling back.
    if (SSL_CTX_set_cipher_list(ctx, t.ciphers.c_str()) != 1) {
      return makeError(Code::FailedPrecondition,
                       "http.tls.ciphers: OpenSSL knows no cipher in '" + t.ciphers + "'");
    }
    if (SSL_CTX_set_ciphersuites(ctx, t.ciphersuites.c_str()) != 1) {
      return makeError(
          Code::FailedPrecondition,
          "http.tls.ciphersuites: OpenSSL knows no TLS 1.3 suite in '" + t.ciphersuites + "'");
    }
    beast::error_code ec;
    s.tls->use_certificate_chain_file(s.settings.tls.cert_file, ec);
    if (ec)
      return makeError(Code::FailedPrecondition,
                       "cannot load http.tls.cert_file '" + s.settings.tls.cert_file + "'");
    s.tls->use_private_key_file(s.settings.tls.key_file, ssl::context::pem, ec);
    if (ec)
      return makeError(Code::FailedPrecondition,
                       "cannot load http.tls.key_file '" + s.settings.tls.key_file + "'");
  }
  auto acc = bindAcceptor(s.mainContext(), s.listen);
  if (!acc) return acc.error();
  s.acceptor.emplace(std::move(*acc));
  s.bound_port = s.acceptor->local_endpoint().port();
  if (s.settings.metrics.enabled && s.settings.metrics.listen) {
    auto maddr = parseListenAddress(*s.settings.metrics.listen);
    if (!maddr) return maddr.error();
    // The metrics listener checks Host like the main one: the configured allowed_hosts (when
    // set) or the loopback names, plus its own bind address when that is a specific one.
    std::vector<std::string> hosts = s.settings.allowed_hosts;
    if (!hosts.empty()) {
      hosts.insert(hosts.end(), {"localhost", "127.0.0.1", "[::1]"});
      if (!maddr->loopback && maddr->host != "0.0.0.0" && maddr->host != "::") {
        hosts.push_back(maddr->host.find(':') != std::string::npos ? "[" + maddr->host + "]"
                                                                   : maddr->host);
      }
    }
    s.metrics_policy.emplace(hosts, s.settings.allowed_origins, maddr->host, maddr->loopback);
    auto macc = bindAcceptor(s.mainContext(), *maddr);
    if (!macc) return macc.error();
    s.metrics_acceptor.emplace(std::move(*macc));
    s.bound_metrics_port = s.metrics_acceptor->local_endpoint().port();
  }
  s.sweep_timer.emplace(s.mainContext());
  for (auto& ioc : s.iocs) s.work.emplace_back(ioc->get_executor());
  s.doAccept(*s.acceptor, false);
  if (s.metrics_acceptor) s.doAccept(*s.metrics_acceptor, true);
  s.scheduleSweep();
  for (auto& ioc : s.iocs) {
    s.threads.emplace_back([ctx = ioc.get()] { ctx->run(); });
  }
  return {};
}

std::uint16_t HttpServer::port() const {
  return impl_->bound_port;
}
std::optional<std::uint16_t> HttpServer::metricsPort() const {
  return impl_->bound_metrics_port;
}
bool HttpServer::tls() const {
  return impl_->tls.has_value();
}

void HttpServer::updateAuth(auth::AuthSettings auth) {
  impl_->auth_state->set(std::move(auth));
}

void HttpServer::shutdown(std::chrono::milliseconds grace) {
  Impl& s = *impl_;
  if (s.threads.empty()) return;
  s.draining = true;
  net::post(s.mainContext(), [&s] {
    beast::error_code ec;
    if (s.acceptor) s.acceptor->close(ec);
    if (s.metrics_acceptor) s.metrics_acceptor->close(ec);
    if (s.sweep_timer) s.sweep_timer->cancel();
  });
  {
    // Open subscriptions end gracefully at once: each stream gets its completion result.
    std::lock_guard<std::mutex> lock(s.stateless_mu);
    for (auto& session : s.stateless_live) session->closeSubscriptions();
  }
  using Clock = std::chrono::steady_clock;
  auto waitIdle = [&s](Clock::time_point until) {
    while (s.active_requests.load() > 0 && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return s.active_requests.load() <= 0;
  };
  if (!waitIdle(Clock::now() + grace)) {
    for (auto& session : s.sessions.all()) session->cancelAll();
    {
      std::lock_guard<std::mutex> lock(s.stateless_mu);
      for (auto& session : s.stateless_live) session->cancelAll();
    }
    waitIdle(Clock::now() + std::chrono::seconds(5));
  }
  for (auto& ioc : s.iocs) ioc->stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  {
    std::unique_lock lock(s.gate->mu);
    s.gate->open = false;
  }
  std::lock_guard<std::mutex> lock(s.stateless_mu);
  s.stateless_live.clear();
}

}  // namespace mcpdb::transport::http
