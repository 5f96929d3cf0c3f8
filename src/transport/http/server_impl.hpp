#pragma once
// HttpServer::Impl: what every connection of the server shares (settings, policies, limits,
// sessions, the I/O contexts), and the Boost names this folder's sources use. Internal to
// src/transport/http: the public header (http_server.hpp) includes no Boost.

// Boost 1.74 Asio under g++ 12 -std=c++20 needs <utility> before any Boost header (std::exchange).
#include <utility>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "auth/auth_throttle.hpp"
#include "auth/rate_limiter.hpp"
#include "transport/http/admission.hpp"
#include "transport/http/call_fibers.hpp"
#include "transport/http/http_server.hpp"
#include "transport/http/outbox.hpp"
#include "transport/http/policy.hpp"
#include "transport/http/session_table.hpp"

namespace mcpdb::transport::http {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The health endpoints' fixed paths (SECURITY.md, "The operations listener").
inline constexpr std::string_view kHealthPath = "/healthz";
inline constexpr std::string_view kReadyPath = "/readyz";

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

struct HttpServer::Impl {
  Impl(protocol::ServerCore& c, HttpSettings s, ListenAddress l,
       std::shared_ptr<observe::AuditLog> a, std::shared_ptr<observe::Metrics> m);
  ~Impl();

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
  // A session for `caller`'s requests whose calls run on the I/O threads where they can.
  std::shared_ptr<protocol::Session> newSession(protocol::Principal principal,
                                                protocol::Session::ScopeFn scope);
  void shareLimits(const auth::SharedLimitsSettings& s);

  protocol::ServerCore& core;
  HttpSettings settings;
  ListenAddress listen;
  OriginPolicy policy;
  std::optional<OriginPolicy> metrics_policy;  // of the separate metrics listener
  std::shared_ptr<observe::AuditLog> audit;
  std::shared_ptr<observe::Metrics> metrics;
  // Null: /readyz says ready (no sources known). Replaced whole by a config reload.
  std::atomic<std::shared_ptr<observe::Readiness>> readiness;
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
  // Runs the calls of tools that honour their waits on fibers of the I/O threads (call_fibers.hpp);
  // every session's dispatch (newSession).
  std::shared_ptr<CallFibers> fibers;

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

}  // namespace mcpdb::transport::http
