#pragma once
// Connection steps: what every request passes, in order (the health endpoints, with their own Host
// rule → Host and Origin → the metrics endpoint or /mcp → draining → authentication → the client's
// rate), then the route by method; and the small endpoints (GET /healthz, /readyz, /metrics,
// DELETE). Template definitions, compiled only in connection.cpp.

#include <algorithm>

#include "transport/http/connection.hpp"

namespace mcpdb::transport::http {

template <class Stream>
void Connection<Stream>::handle() {
  beginRequest();
  auto& req = parser_->get();
  keep_alive_ = req.keep_alive();
  version_ = req.version();
  const std::string target(req.target());
  const std::string path = target.substr(0, target.find('?'));
  const std::string method(req.method_string());
  const auto& s = srv_.settings;

  // On the operations listener when there is one, else on the main one (as /metrics).
  const bool ops_here = metrics_only_ || !(s.metrics.enabled && s.metrics.listen);
  if (ops_here && (path == kHealthPath || path == kReadyPath))
    return serveHealth(method, path, target);
  if (!hostAndOriginAllowed(method)) return;
  if (s.metrics.enabled && path == s.metrics.path && (metrics_only_ || !s.metrics.listen)) {
    return serveMetrics(method);
  }
  if (metrics_only_ || path != "/mcp")
    return respondError(404, "not found: the MCP endpoint is /mcp");
  if (srv_.draining) {
    keep_alive_ = false;
    return respondError(503, "the server is shutting down");
  }
  std::optional<Caller> caller = admitCaller(method);
  if (!caller) return;
  routeByMethod(*caller);
}

// DNS-rebinding protection, before any endpoint (metrics included) serves anything: a browser
// page on another site can reach a local server, but it cannot forge the Host and Origin headers
// of its own requests. The metrics listener has its own policy (its bind address). False: refused
// (answered).
template <class Stream>
bool Connection<Stream>::hostAndOriginAllowed(const std::string& method) {
  const OriginPolicy& policy = metrics_only_ ? *srv_.metrics_policy : srv_.policy;
  if (!policy.hostAllowed(header(bhttp::field::host).value_or(""))) {
    srv_.refuse(nullptr, "forbidden_host", 403, method, request_id_);
    respondError(403, "forbidden: the Host header is not allowed");
    return false;
  }
  if (!policy.originAllowed(header(bhttp::field::origin))) {
    srv_.refuse(nullptr, "forbidden_origin", 403, method, request_id_);
    respondError(403, "forbidden: the Origin is not allowed");
    return false;
  }
  return true;
}

// The caller, authenticated and within its rate; nullopt: refused (answered).
template <class Stream>
std::optional<Caller> Connection<Stream>::admitCaller(const std::string& method) {
  std::optional<Caller> caller = authenticate();
  if (!caller) {
    refuseUnauthenticated(
        method, "unauthorized: send a configured API key as 'Authorization: Bearer <key>'");
    return std::nullopt;
  }
  if (!markAuthenticated(caller->anonymous ? std::string() : caller->name)) {
    // The key's connections all have requests in flight: this one is refused and closed.
    keep_alive_ = false;
    srv_.refuse(&*caller, "connections_per_client", 429, method, request_id_);
    respondError(429,
                 "too many connections for this client: it holds " +
                     std::to_string(srv_.admission.perKey()) +
                     ", as many as one client may (http.max_connections_per_client), each with "
                     "a request in flight; send further requests on those or retry in a moment",
                 {{"Retry-After", "1"}});
    return std::nullopt;
  }
  if (auto refusal = srv_.limiter.admit(caller->name, caller->rate)) {
    // The connection is closed after the refusal: a key refused by its rate holds no slot for
    // its next try (each try costs a new connection, which admission counts).
    keep_alive_ = false;
    if (refusal->store_down) {
      respondLimitsUnavailable(&*caller, method);
      return std::nullopt;
    }
    srv_.refuse(&*caller, "rate_limited", 429, method, request_id_);
    const long secs =
        std::max<long>(1, static_cast<long>((refusal->retry_after.count() + 999) / 1000));
    respondError(429, "rate limit exceeded: retry after " + std::to_string(secs) + " s",
                 {{"Retry-After", std::to_string(secs)}});
    return std::nullopt;
  }
  return caller;
}

template <class Stream>
void Connection<Stream>::routeByMethod(const Caller& caller) {
  switch (parser_->get().method()) {
    case bhttp::verb::post: return handlePost(caller);
    case bhttp::verb::delete_: return handleDelete(caller);
    case bhttp::verb::get: return handleGet(caller);
    default: return respondError(405, "method not allowed", {{"Allow", "GET, POST, DELETE"}});
  }
}

// A request header's value, viewed in the parser (valid until the next request is read).
template <class Stream>
std::optional<std::string_view> Connection<Stream>::header(bhttp::field f) const {
  const auto& req = parser_->get();
  auto it = req.find(f);
  if (it == req.end()) return std::nullopt;
  return std::string_view(it->value().data(), it->value().size());
}

template <class Stream>
std::optional<std::string_view> Connection<Stream>::header(std::string_view name) const {
  const auto& req = parser_->get();
  auto it = req.find(beast::string_view(name.data(), name.size()));
  if (it == req.end()) return std::nullopt;
  return std::string_view(it->value().data(), it->value().size());
}

template <class Stream>
std::optional<Caller> Connection<Stream>::authenticate() {
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
template <class Stream>
std::string Connection<Stream>::requestSource() const {
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
template <class Stream>
void Connection<Stream>::refuseUnauthenticated(const std::string& method,
                                               const std::string& message) {
  std::string source = requestSource();
  const auto f = srv_.throttle->onFailure(source);
  if (f.store_down) {
    keep_alive_ = false;
    return respondLimitsUnavailable(nullptr, method, std::move(source));
  }
  if (f.retry_after.count() > 0) {
    srv_.refuse(nullptr, "auth_throttled", 429, method, request_id_, std::move(source), f.failures,
                f.backoff_started);
    const long secs = std::max<long>(1, static_cast<long>((f.retry_after.count() + 999) / 1000));
    return respondError(429,
                        "too many failed authentication attempts from this address: retry after " +
                            std::to_string(secs) + " s",
                        {{"Retry-After", std::to_string(secs)}});
  }
  srv_.refuse(nullptr, "unauthorized", 401, method, request_id_, std::move(source));
  respondError(401, message, {{"WWW-Authenticate", "Bearer realm=\"mcp-dbserver\""}});
}

// The shared limits store did not answer and http.shared_limits.on_store_down is fail_closed:
// 503, for a valid key and a wrong one alike (the answer tells a key scanner nothing).
template <class Stream>
void Connection<Stream>::respondLimitsUnavailable(const Caller* caller, const std::string& method,
                                                  std::string source) {
  srv_.refuse(caller, "limits_unavailable", 503, method, request_id_, std::move(source), 0, false);
  respondError(503,
               "the server cannot check its limits now (its shared store does not answer): "
               "retry in a moment",
               {{"Retry-After", "1"}});
}

template <class Stream>
protocol::Session::ScopeFn Connection<Stream>::scopeFor(const Caller& caller) {
  if (caller.anonymous) return nullptr;
  std::shared_ptr<AuthState> state = srv_.auth_state;
  return [state, name = caller.name](const protocol::Tool& tool) {
    const auto table = state->table();
    const auth::ClientEntry* e = table->byName(name);
    return e != nullptr && e->scope.allows(tool.engine, tool.name);
  };
}

// The operations endpoints' access rule (http.metrics.access): `key`, any configured client key
// (when keys are required); `loopback`, loopback peers only. False: refused (answered).
template <class Stream>
bool Connection<Stream>::opsCallerAllowed(const std::string& method) {
  if (srv_.settings.metrics.require_key && srv_.auth_state->required()) {
    const auto caller = authenticate();
    if (!caller) {
      refuseUnauthenticated(method, "unauthorized");
      return false;
    }
    if (!markAuthenticated(caller->anonymous ? std::string() : caller->name)) {
      keep_alive_ = false;
      respondError(429, "too many connections for this client", {{"Retry-After", "1"}});
      return false;
    }
  } else if (!peer_loopback_) {
    srv_.refuse(nullptr, "forbidden_metrics", 403, method, request_id_);
    respondError(403, "forbidden: metrics are served to loopback peers only");
    return false;
  }
  return true;
}

template <class Stream>
void Connection<Stream>::serveMetrics(const std::string& method) {
  if (parser_->get().method() != bhttp::verb::get)
    return respondError(405, "use GET", {{"Allow", "GET"}});
  if (!opsCallerAllowed(method)) return;
  respond(200, srv_.metrics ? srv_.metrics->render() : std::string(), {},
          "text/plain; version=0.0.4; charset=utf-8");
}

// The health endpoints' DNS-rebinding check: the listener's Host rule, or a Host that is an IP
// literal (an orchestrator's probe sends the pod's address; a rebinding page cannot send one,
// policy.hpp isIpLiteralHost), and the listener's Origin rule. False: refused (answered).
template <class Stream>
bool Connection<Stream>::healthHostAndOriginAllowed(const std::string& method) {
  const OriginPolicy& policy = metrics_only_ ? *srv_.metrics_policy : srv_.policy;
  const std::string_view host = header(bhttp::field::host).value_or("");
  if (!policy.hostAllowed(host) && !isIpLiteralHost(host)) {
    srv_.refuse(nullptr, "forbidden_host", 403, method, request_id_, {}, 0, false);
    respondError(403, "forbidden: the Host header is not allowed");
    return false;
  }
  if (!policy.originAllowed(header(bhttp::field::origin))) {
    srv_.refuse(nullptr, "forbidden_origin", 403, method, request_id_, {}, 0, false);
    respondError(403, "forbidden: the Origin is not allowed");
    return false;
  }
  return true;
}

// GET /healthz (the process answers) and GET /readyz (observe/readiness.hpp; no-store, as every
// answer), without a key:
// orchestrator probes carry none. They say ok / ready or not and how many sources, never a
// source's name, host or error; `/readyz?verbose` adds each source's engine, name and state, to
// callers the operations access rule admits (opsCallerAllowed). Reading the readiness never waits
// for a database, so a flood of probes costs an I/O thread only a lookup.
template <class Stream>
void Connection<Stream>::serveHealth(const std::string& method, const std::string& path,
                                     const std::string& target) {
  if (!healthHostAndOriginAllowed(method)) return;
  if (parser_->get().method() != bhttp::verb::get)
    return respondError(405, "use GET", {{"Allow", "GET"}});
  if (path == kHealthPath) return respondJson(200, Json{{"status", "ok"}}, {});
  const auto query = std::string_view(target).substr(path.size());
  const bool verbose = query == "?verbose" || query == "?verbose=1";
  if (verbose && !opsCallerAllowed(method)) return;
  if (srv_.draining) return respondJson(503, Json{{"status", "stopping"}}, {});
  observe::ReadinessReport r;  // without a readiness (test servers): ready, nothing to probe
  r.ready = true;
  r.self_check = observe::SelfCheckState::Off;
  if (const auto readiness = srv_.readiness.load()) r = readiness->report();
  Json body{{"status", r.ready ? "ready" : "not ready"},
            {"sources_ready", r.sources_ready},
            {"sources_total", r.sources_total},
            {"self_check", std::string(observe::selfCheckName(r.self_check))}};
  if (verbose) {
    Json sources = Json::array();
    for (const auto& src : r.sources)
      sources.push_back(Json{{"engine", src.engine}, {"source", src.source}, {"ready", src.ready}});
    body["sources"] = std::move(sources);
  }
  respondJson(r.ready ? 200 : 503, body, {});
}

// GET /mcp with a session: the session's stream of unsolicited messages (2025-11-25 Streamable
// HTTP). What this server sends there: notifications/tools/list_changed and resources/list_changed
// after a config reload (app/reload.hpp). One stream per session: a new GET replaces the last
// (which ends). The stream ends when the session does (DELETE, expiry, a reload that revokes its
// key), when the client goes away, and at shutdown. It holds the connection, not a call slot.
template <class Stream>
void Connection<Stream>::handleGet(const Caller& caller) {
  if (srv_.settings.stateless) {
    return respondError(405,
                        "stateless mode has no session stream; use POST (subscriptions/listen)",
                        {{"Allow", "POST"}});
  }
  if (!parseAccept(header(bhttp::field::accept)).sse)
    return respondError(406, "not acceptable: a GET stream needs Accept: text/event-stream");
  const auto sid = header("Mcp-Session-Id");
  if (!sid || !wellFormedSessionId(*sid))
    return respondError(400, "bad request: missing Mcp-Session-Id header");
  auto session = srv_.sessions.find(*sid, caller.name);
  if (!session) return respondError(404, "session not found");
  auto budget = std::make_shared<CallBudget>(srv_.limiter, caller.name, caller.rate, false);
  beginPending(caller, budget, session, {}, /*stateless_session=*/false, /*sse=*/true);
  // The head now: the client waits for it before anything is sent on the stream.
  queueEventStreamHead();
  session->setNotificationOutbox(newOutbox(std::move(budget)));
  watchPeer();  // a client that goes away ends the stream
}

template <class Stream>
void Connection<Stream>::handleDelete(const Caller& caller) {
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

}  // namespace mcpdb::transport::http
