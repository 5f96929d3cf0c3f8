#pragma once
// Connection steps of a POST: check the media types → parse the body → ask the protocol to
// classify it (protocol/classify.hpp) → (2025) check the version header and pick its session,
// (2026-07-28) map the classification's verdicts to status codes and check the MCP headers
// against it → admit its calls → dispatch them to the session, whose outbox answers
// (post_answer.hpp). Template definitions, compiled only in connection.cpp.

#include <shared_mutex>
#include <type_traits>
#include <variant>

#include "protocol/classify.hpp"
#include "protocol/era.hpp"
#include "protocol/jsonrpc.hpp"
#include "transport/http/connection.hpp"
#include "transport/http/connection_io.hpp"

namespace mcpdb::transport::http {

template <class Stream>
void Connection<Stream>::handlePost(const Caller& caller) {
  const std::optional<AcceptInfo> accept = acceptedMediaTypes();
  if (!accept) return;
  const auto version_header = header("MCP-Protocol-Version");
  protocol::Parsed parsed =
      protocol::parseMessage(parser_->get().body(), srv_.core.options().parse);
  if (parsed.error_response) return respondJson(400, *parsed.error_response, {});
  Json& message = *parsed.message;
  // The protocol classifies the message once (its era, method, id, name, progress, metadata);
  // this transport maps that to its headers and status codes.
  const protocol::Classified request = protocol::classify(
      message, version_header ? std::optional(trimOws(*version_header)) : std::nullopt);
  if (request.era == protocol::Era::Modern) {
    return handleModernPost(caller, message, request, *accept);
  }
  if (!protocolVersionHeaderOk(version_header)) {
    return respondError(400, "bad request: unsupported MCP-Protocol-Version");
  }
  const LegacyShape shape = legacyShape(message, request);
  if (shape.initialize_in_batch) {
    return respondJson(
        400, rpcError(protocol::rpc::kInvalidRequest, "initialize must not be part of a batch"),
        {});
  }
  SessionChoice chosen = legacySession(caller, shape, version_header);
  if (!chosen.session) return;
  if (!shape.expects_response) {
    chosen.session->handleClassified(std::move(message), request, std::make_shared<NullOutbox>());
    return respond(202, {}, {});
  }
  dispatchPost(caller, message, request, std::move(chosen.session), chosen.new_session_id,
               chosen.stateless, !request.batch && shape.tool_calls == 1,
               shape.progress && accept->sse);
}

// Content-Type must be JSON (415), Accept must take JSON or an event stream (406); nullopt:
// refused (answered).
template <class Stream>
std::optional<AcceptInfo> Connection<Stream>::acceptedMediaTypes() {
  const std::string_view ctype = header(bhttp::field::content_type).value_or("");
  if (!beast::iequals(beast::string_view(ctype.data(), ctype.size()).substr(0, 16),
                      "application/json")) {
    respondError(415, "Content-Type must be application/json");
    return std::nullopt;
  }
  const AcceptInfo accept = parseAccept(header(bhttp::field::accept));
  if (!accept.json && !accept.sse) {
    respondError(406, "Accept must include application/json or text/event-stream");
    return std::nullopt;
  }
  return accept;
}

// What the POST's message (or each element of its batch, classified on its own) asks of the
// transport.
template <class Stream>
typename Connection<Stream>::LegacyShape Connection<Stream>::legacyShape(
    const Json& message, const protocol::Classified& request) {
  LegacyShape shape;
  if (!request.batch) {
    shape.expects_response = request.answered;
    shape.is_initialize = request.initialize;
    if (request.tool_call) shape.tool_calls = 1;
    shape.progress = request.wants_progress;
    return shape;
  }
  // An empty batch is answered (an error); otherwise the session's own rule says which elements
  // get answers (protocol::getsAnswer), so the POST waits exactly when one is due.
  bool all_quiet = !message.empty();
  for (const auto& m : message) {
    const protocol::Classified element = protocol::classify(m);
    all_quiet = all_quiet && !element.answered;
    if (element.initialize) {
      shape.initialize_in_batch = true;
      return shape;
    }
    if (element.tool_call) ++shape.tool_calls;
    shape.progress = shape.progress || element.wants_progress;
  }
  shape.expects_response = !all_quiet;
  return shape;
}

// A new session (stateless mode, or initialize), or the one the Mcp-Session-Id header names.
template <class Stream>
typename Connection<Stream>::SessionChoice Connection<Stream>::legacySession(
    const Caller& caller, const LegacyShape& shape,
    std::optional<std::string_view> version_header) {
  if (srv_.settings.stateless || shape.is_initialize) {
    return newSession(caller, shape.is_initialize, version_header);
  }
  const auto sid = header("Mcp-Session-Id");
  if (!sid || !wellFormedSessionId(*sid)) {
    respondError(400, "bad request: missing Mcp-Session-Id header (send initialize first)");
    return {};
  }
  SessionChoice chosen;
  chosen.session = srv_.sessions.find(*sid, caller.name);
  if (!chosen.session) respondError(404, "session not found: initialize a new session");
  return chosen;
}

template <class Stream>
typename Connection<Stream>::SessionChoice Connection<Stream>::newSession(
    const Caller& caller, bool is_initialize, std::optional<std::string_view> version_header) {
  SessionChoice chosen;
  chosen.session = srv_.newSession(protocol::Principal{caller.name}, scopeFor(caller));
  if (srv_.settings.stateless) {
    chosen.stateless = true;
    if (!is_initialize) {
      chosen.session->startStateless(version_header.value_or(protocol::kDefaultLegacyVersion));
    }
    return chosen;
  }
  // A session may open a GET stream, which carries the list changes of a config reload.
  chosen.session->enableListChanged();
  auto id = registerSession(chosen.session, caller);
  if (!id) return {};
  chosen.new_session_id = std::move(*id);
  return chosen;
}

// The new session's id in the session table; nullopt: refused (answered).
template <class Stream>
std::optional<std::string> Connection<Stream>::registerSession(
    std::shared_ptr<protocol::Session> session, const Caller& caller) {
  auto added = srv_.sessions.add(std::move(session), caller.name);
  if (added.evicted) added.evicted->cancelAll();  // its owner's least recently used, idle
  if (added.refused == SessionTable::Added::Refused::OwnerFull) {
    srv_.refuse(&caller, "sessions_per_client", 429, "POST", request_id_);
    respondError(429,
                 "this client already holds " +
                     std::to_string(srv_.settings.max_sessions_per_client) +
                     " sessions (http.max_sessions_per_client), each with a call in "
                     "flight; end one (DELETE) or retry later",
                 {{"Retry-After", "5"}});
    return std::nullopt;
  }
  if (!added.id) {
    srv_.refuse(&caller, "sessions_full", 503, "POST", request_id_);
    respondError(503, "too many open sessions; retry later", {{"Retry-After", "5"}});
    return std::nullopt;
  }
  if (srv_.metrics) srv_.metrics->setSessions(static_cast<std::int64_t>(srv_.sessions.size()));
  return std::move(added.id);
}

// A 2026-07-28 POST: one request checked against its headers (Streamable HTTP, "Server
// Validation") and served by a session of its own. Refusals of its metadata and headers are
// 400, an unknown method 404, each with the JSON-RPC error and the request's id.
template <class Stream>
void Connection<Stream>::handleModernPost(const Caller& caller, Json& message,
                                          const protocol::Classified& request,
                                          const AcceptInfo& accept) {
  if (!message.is_object()) {
    return respondJson(400,
                       rpcError(protocol::rpc::kInvalidRequest,
                                "a 2026-07-28 POST carries one JSON-RPC message, not a batch"),
                       {});
  }
  const Json id = request.answered ? request.id : Json(nullptr);
  const int invalid = protocol::rpc::kInvalidRequest;
  if (!request.answered) {
    // 2026-07-28 defines no client notification over HTTP (closing a stream cancels); one is
    // accepted and has no effect.
    if (request.method) return respond(202, {}, {});
    return refuseModern(caller, id, 400, invalid, "not a JSON-RPC request", nullptr);
  }
  if (!request.method) {
    return refuseModern(caller, id, 400, invalid, "method must be a string", nullptr);
  }
  if (id.is_null()) {
    return refuseModern(caller, id, 400, invalid, "id must be a string or an integer", nullptr);
  }
  static const Json kNoParams = Json::object();
  const Json& params = message.contains("params") ? message["params"] : kNoParams;
  if (!modernRequestValid(caller, request, params, id)) return;
  if (request.subscription && !accept.sse) {
    return respondError(406,
                        "subscriptions/listen answers with an event stream: Accept must "
                        "include text/event-stream");
  }
  auto session = srv_.newSession(protocol::Principal{caller.name}, scopeFor(caller));
  // A subscription holds its connection like a call holds a slot: it counts against the
  // client's concurrency cap until its stream ends.
  dispatchPost(caller, message, request, std::move(session), {}, /*stateless_session=*/true,
               request.tool_call || request.subscription,
               request.subscription || (accept.sse && request.wants_progress));
}

// The classification's verdicts on the request's _meta and method, and its MCP headers checked
// against it, in the order the spec gives the errors; false: refused (answered). Refusals of the
// metadata and headers are 400, an unknown method 404.
template <class Stream>
bool Connection<Stream>::modernRequestValid(const Caller& caller,
                                            const protocol::Classified& request, const Json& params,
                                            const Json& id) {
  const auto* error = std::get_if<protocol::MetaError>(&*request.meta);
  if (error != nullptr && error->code == protocol::rpc::kInvalidParams) {
    refuseModern(caller, id, 400, error->code, error->message, error->data);
    return false;
  }
  // The version in _meta is a string here (checked above).
  const std::string& meta_version =
      params["_meta"][std::string(protocol::meta_key::kProtocolVersion)]
          .get_ref<const std::string&>();
  if (auto mismatch = mcpHeaderMismatch(mcpHeaders(), meta_version, request)) {
    refuseModern(caller, id, 400, protocol::rpc::kHeaderMismatch, *mismatch, nullptr);
    return false;
  }
  if (error != nullptr) {
    refuseModern(caller, id, 400, error->code, error->message, error->data);
    return false;
  }
  if (!request.known_method) {
    const std::string& method = *request.method;
    refuseModern(caller, id, 404, protocol::rpc::kMethodNotFound,
                 "method not found at " + std::string(protocol::kModernProtocolVersion) + ": " +
                     (method.size() > 64 ? method.substr(0, 64) + "..." : method),
                 nullptr);
    return false;
  }
  return true;
}

// Counted (never audited: a client's malformed requests write no audit lines) and answered with
// the JSON-RPC error carrying the request's id.
template <class Stream>
void Connection<Stream>::refuseModern(const Caller& caller, const Json& id, unsigned status,
                                      int code, const std::string& text, const Json& data) {
  Json body = protocol::makeErrorResponse(id, code, text);
  if (!data.is_null()) body["error"]["data"] = data;
  srv_.refuse(&caller, status == 404 ? "method_not_found" : "protocol_refused",
              static_cast<int>(status), "POST", request_id_, {}, 0, /*write_audit=*/false);
  respondJson(status, body, {});
}

template <class Stream>
McpHeaders Connection<Stream>::mcpHeaders() const {
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
template <class Stream>
void Connection<Stream>::dispatchPost(const Caller& caller, Json& message,
                                      const protocol::Classified& request,
                                      std::shared_ptr<protocol::Session> session,
                                      const std::string& new_session_id, bool stateless_session,
                                      bool holds_slot, bool sse) {
  // A single call over the concurrency cap is answered 429; the calls of a batch are admitted
  // one by one as the session dispatches them (CallBudget), each over-limit call answered with
  // its own error inside the batch's answer.
  const bool single_call = holds_slot;
  if (single_call && !admitSingleCall(caller)) return;
  auto budget = newBudget(caller, single_call);
  beginPending(caller, budget, session, new_session_id, stateless_session, sse);
  auto out = newOutbox(budget);
  if (srv_.core.tracer() != nullptr) {
    // The W3C trace context headers go with the classification; a request's _meta overrides them.
    // W3C: a traceparent sent twice is invalid (none is taken); tracestate headers combine.
    protocol::Classified traced = request;
    const auto& req = parser_->get();
    std::size_t parents = 0;
    for (auto r = req.equal_range("traceparent"); r.first != r.second; ++r.first, ++parents)
      traced.traceparent =
          trimOws(std::string_view(r.first->value().data(), r.first->value().size()));
    if (parents != 1) traced.traceparent.clear();
    for (auto r = req.equal_range("tracestate"); r.first != r.second; ++r.first) {
      if (!traced.tracestate.empty()) traced.tracestate += ',';
      traced.tracestate +=
          trimOws(std::string_view(r.first->value().data(), r.first->value().size()));
    }
    session->handleClassified(std::move(message), traced, out);
  } else {
    session->handleClassified(std::move(message), request, out);
  }
  // Calls are running: watch the connection, so that a client that goes away cancels them.
  if (budget->entered.load() > 0 || sse) watchPeer();
}

// The single call's concurrency slot; false: refused (429 over the cap, 503 when the shared store
// does not answer and on_store_down is fail_closed).
template <class Stream>
bool Connection<Stream>::admitSingleCall(const Caller& caller) {
  switch (srv_.limiter.enterCalls(caller.name, 1, caller.rate.max_concurrent)) {
    case auth::RateLimiter::Slots::Entered: break;
    case auth::RateLimiter::Slots::OverCap:
      srv_.refuse(&caller, "concurrency_limited", 429, "POST", request_id_);
      respondError(429, "too many concurrent tool calls for this client", {{"Retry-After", "1"}});
      return false;
    case auth::RateLimiter::Slots::Unavailable:
      respondLimitsUnavailable(&caller, "POST");
      return false;
  }
  if (srv_.metrics) srv_.metrics->callsStarted(1);
  return true;
}

template <class Stream>
std::shared_ptr<CallBudget> Connection<Stream>::newBudget(const Caller& caller, bool single_call) {
  auto budget = std::make_shared<CallBudget>(srv_.limiter, caller.name, caller.rate, single_call);
  budget->on_started = [m = srv_.metrics] {
    if (m) m->callsStarted(1);
  };
  budget->on_refused = [this, client = caller.name](std::string_view reason) {
    // Counted, and audited with this request's id (one line per refused call).
    const Caller who{client, {}, false};
    srv_.refuse(&who, reason, 429, "POST", request_id_);
  };
  return budget;
}

// The POST now waits for its answer: what its end must release, and a fresh "client gone" signal.
template <class Stream>
void Connection<Stream>::beginPending(const Caller& caller,
                                      const std::shared_ptr<CallBudget>& budget,
                                      const std::shared_ptr<protocol::Session>& session,
                                      const std::string& new_session_id, bool stateless_session,
                                      bool sse) {
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
}

// The outbox of the pending POST: its messages go to this connection's I/O thread (an event
// stream), or its one JSON answer is written at once (answerInPlace) — while the gate is open.
template <class Stream>
std::shared_ptr<PostOutbox> Connection<Stream>::newOutbox(std::shared_ptr<CallBudget> budget) {
  auto self = this->shared_from_this();
  std::shared_ptr<PostGate> gate = srv_.gate;
  auto exec = stream_.get_executor();
  return std::make_shared<PostOutbox>(
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
      std::move(budget), post_gone_.get_token());
}

}  // namespace mcpdb::transport::http
