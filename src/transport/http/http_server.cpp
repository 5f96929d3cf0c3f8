// Boost 1.74 Asio under g++ 12 -std=c++20 needs <utility> before any Boost header (std::exchange).
#include <utility>

#include "transport/http/http_server.hpp"

#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "auth/redis_limit_store.hpp"

#include "transport/http/connection.hpp"
#include "transport/http/server_impl.hpp"

namespace mcpdb::transport::http {

HttpServer::Impl::Impl(protocol::ServerCore& c, HttpSettings s, ListenAddress l,
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
                                settings.max_unauthenticated_per_source,
                                settings.connection_rate.rate, settings.connection_rate.burst,
                                settings.connectionsPerClient()}),
      sessions(settings.max_sessions, settings.max_sessions_per_client),
      gate(std::make_shared<PostGate>()),
      fibers(std::make_shared<CallFibers>(core.pool())) {
  for (std::size_t i = 0; i < std::max<std::size_t>(1, settings.threads); ++i)
    iocs.push_back(std::make_unique<net::io_context>(1));
  if (metrics) {
    // Captures the throttle, not the server: the metrics may outlive it.
    metrics->addGauge("mcpdb_http_auth_backoff_sources",
                      "Sources whose wrong API keys are answered 429 (failed-auth backoff).",
                      [t = throttle] { return static_cast<double>(t->inBackoff()); });
  }
  if (settings.shared_limits) shareLimits(*settings.shared_limits);
}

// http.shared_limits: the rate buckets and the failed-key count move to the store (issue #31).
void HttpServer::Impl::shareLimits(const auth::SharedLimitsSettings& s) {
  auto endpoint = auth::parseStoreUrl(s.store);  // checked when the config was read
  if (!endpoint) throw std::runtime_error("http.shared_limits.store: " + endpoint.error().message);
  const char* password = std::getenv(auth::kSharedLimitsPasswordEnv);
  auto shared = std::make_shared<auth::SharedLimits>(
      s, std::make_unique<auth::RedisLimitStore>(
             *endpoint, password != nullptr ? password : "",
             auth::RedisTimeouts{s.connect_timeout, s.command_timeout}));
  limiter.shareWith(shared);
  throttle->shareWith(shared);
  spdlog::info(
      "shared limits: store {} (password {}), lease {} token(s) for {} ms, on_store_down {}",
      endpoint->display(),
      password != nullptr && *password != '\0' ? "from the environment" : "none", s.lease_tokens,
      s.local_cache.count(),
      s.on_store_down == auth::OnStoreDown::FailClosed ? "fail_closed" : "per_replica");
  if (!metrics) return;
  metrics->addGauge("mcpdb_shared_limits_store_up",
                    "1 while the shared limits store answered the last request, else 0.",
                    [shared] { return shared->storeUp() ? 1.0 : 0.0; });
  metrics->addCounter("mcpdb_shared_limits_fallbacks_total",
                      "Limit decisions made per replica because the shared store did not answer "
                      "(on_store_down: per_replica).",
                      [shared] { return static_cast<double>(shared->fallbacks()); });
  metrics->addCounter("mcpdb_shared_limits_unavailable_total",
                      "Requests refused (503) because the shared store did not answer "
                      "(on_store_down: fail_closed).",
                      [shared] { return static_cast<double>(shared->storeDownRefusals()); });
}

HttpServer::Impl::~Impl() {
  // I/O objects go before the contexts; pending handlers (and their connections) go with them.
  // The first context goes first: an accept completing there may hold a socket of another one.
  work.clear();
  acceptor.reset();
  metrics_acceptor.reset();
  sweep_timer.reset();
  iocs.clear();
}

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

std::shared_ptr<protocol::Session> HttpServer::Impl::newSession(protocol::Principal principal,
                                                                protocol::Session::ScopeFn scope) {
  auto session = std::make_shared<protocol::Session>(core, std::move(principal), std::move(scope));
  session->setDispatch([f = fibers](protocol::CallJob& job, bool honours_waits) {
    return f->dispatch(job, honours_waits);
  });
  return session;
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

// The TLS context of the listener, from http.tls (TLS 1.2+, no renegotiation or compression).
Status configureTls(HttpServer::Impl& s) {
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
  return {};
}

// The separate metrics listener (http.metrics.listen) and its Host/Origin policy.
Status bindMetricsListener(HttpServer::Impl& s) {
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
  return {};
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
    if (auto st = configureTls(s); !st) return st;
  }
  auto acc = bindAcceptor(s.mainContext(), s.listen);
  if (!acc) return acc.error();
  s.acceptor.emplace(std::move(*acc));
  s.bound_port = s.acceptor->local_endpoint().port();
  if (s.settings.metrics.enabled && s.settings.metrics.listen) {
    if (auto st = bindMetricsListener(s); !st) return st;
  }
  s.sweep_timer.emplace(s.mainContext());
  for (auto& ioc : s.iocs) s.work.emplace_back(ioc->get_executor());
  s.doAccept(*s.acceptor, false);
  if (s.metrics_acceptor) s.doAccept(*s.metrics_acceptor, true);
  s.scheduleSweep();
  for (auto& ioc : s.iocs) {
    s.threads.emplace_back([ctx = ioc.get()] {
      CallFibers::enterThread(*ctx);
      ctx->run();
      CallFibers::leaveThread();
    });
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

void HttpServer::setReadiness(std::shared_ptr<observe::Readiness> readiness) {
  impl_->readiness.store(std::move(readiness));
}

void HttpServer::updateAuth(auth::AuthSettings auth) {
  auth.required = impl_->auth_state->required();  // the mode is the listener's (applyClients)
  impl_->auth_state->set(std::move(auth));
}

std::size_t HttpServer::applyClients(auth::AuthSettings auth, const protocol::ToolRegistry& tools) {
  Impl& s = *impl_;
  const auto before = s.auth_state->table();
  // The mode (api_key or none) is the listener's, checked against its address when it started
  // (`none` only on loopback): a reload never changes it (app/reload.cpp lists it as restart-only).
  auth.required = s.auth_state->required();
  const bool required = auth.required;
  std::set<std::string, std::less<>> revoked, narrowed;
  if (before && required) {
    for (const auto& old : before->clients()) {
      const auth::ClientEntry* now = nullptr;
      for (const auto& c : auth.clients) {
        if (c.name == old.name) now = &c;
      }
      // Gone, or the same name with another key: the old key is revoked.
      if (now == nullptr || now->key_sha256 != old.key_sha256) {
        revoked.insert(old.name);
        continue;
      }
      for (const auto& t : tools.tools()) {
        if (old.scope.allows(t->engine, t->name) && !now->scope.allows(t->engine, t->name)) {
          narrowed.insert(old.name);
          break;
        }
      }
    }
  }
  s.auth_state->set(std::move(auth));
  if (revoked.empty() && narrowed.empty()) return 0;
  auto ended = s.sessions.removeIf([&](std::string_view owner) {
    return revoked.count(owner) != 0 || narrowed.count(owner) != 0;
  });
  for (auto& [owner, session] : ended) {
    // A revoked key's calls stop now; a narrowed key's calls finish (they were in its scope when
    // they started) and its streams end, so its client starts again and lists what it may see.
    if (revoked.count(owner) != 0) session->cancelAll();
    session->closeSubscriptions();
  }
  {
    std::lock_guard<std::mutex> lock(s.stateless_mu);
    for (auto& session : s.stateless_live) {
      if (revoked.count(session->principal().client_id) != 0) session->cancelAll();
    }
  }
  return ended.size();
}

void HttpServer::notifyListChanged(bool tools, bool resources) {
  Impl& s = *impl_;
  for (auto& session : s.sessions.all()) session->notifyListChanged(tools, resources);
  std::vector<std::shared_ptr<protocol::Session>> live;
  {
    std::lock_guard<std::mutex> lock(s.stateless_mu);
    live.assign(s.stateless_live.begin(), s.stateless_live.end());
  }
  for (auto& session : live) session->notifyListChanged(tools, resources);
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
  // Sessions' GET streams end too (their last chunk is written as their outbox goes).
  for (auto& session : s.sessions.all()) session->setNotificationOutbox(nullptr);
  using Clock = std::chrono::steady_clock;
  auto waitIdle = [&s](Clock::time_point until) {
    while (s.active_requests.load() > 0 && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return s.active_requests.load() <= 0;
  };
  auto cancelAll = [&s] {
    for (auto& session : s.sessions.all()) session->cancelAll();
    std::lock_guard<std::mutex> lock(s.stateless_mu);
    for (auto& session : s.stateless_live) session->cancelAll();
  };
  if (!waitIdle(Clock::now() + grace)) {
    cancelAll();
    waitIdle(Clock::now() + std::chrono::seconds(5));
  }
  // Calls on fibers are resumed by the I/O threads: they end before those stop (a call whose
  // client went away may still be cancelling at its database).
  if (!s.fibers->waitIdle(Clock::now() + std::chrono::seconds(5))) {
    cancelAll();
    if (!s.fibers->waitIdle(Clock::now() + std::chrono::seconds(5))) {
      spdlog::warn("stopping: {} tool calls did not end; left unfinished", s.fibers->live());
    }
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
