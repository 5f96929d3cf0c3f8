// resources/read (dispatched as a tool call is: session_dispatch.cpp) and subscriptions/listen.

#include "protocol/request_trace.hpp"
#include "protocol/session.hpp"

namespace mcpdb::protocol {

void Session::readResource(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                           bool modern) {
  if (!params.contains("uri") || !params["uri"].is_string()) {
    out->send(
        makeErrorResponse(id, rpc::kInvalidParams, "resources/read needs params.uri (a string)"));
    return;
  }
  const auto& uri = params["uri"].get_ref<const std::string&>();
  auto surface = core_.surface();
  std::shared_ptr<const Resource> resource = surface->registry().findSharedResource(uri);
  // A resource outside the caller's scope is indistinguishable from one that does not exist.
  if (resource == nullptr || !visible(*resource, surface->registry())) {
    Json response = makeErrorResponse(
        id, modern ? rpc::kInvalidParams : rpc::kResourceNotFoundLegacy, "Resource not found");
    response["error"]["data"] = {{"uri", bounded(uri, 256)}};
    out->send(response);
    return;
  }
  std::stop_source source;
  if (!startRequest(id, out, source)) return;
  // A description may ask the database: it takes the bulkhead of the (first) tool it describes,
  // whose limits it also runs under (it asks no more of the database than the tool), waiting for
  // a slot as a call does.
  const Tool* described = surface->registry().find(resource->tools.front());
  auto self = shared_from_this();
  // The request's span goes with the read and ends after its answer (null: not traced).
  std::shared_ptr<telemetry::Span> span = core_.tracer() != nullptr ? takeRequestSpan() : nullptr;
  auto run = [self, id, key = id.dump(), resource, out, modern, described, span](
                 const std::stop_token& stop, Bulkhead::Slot* slot, Clock::time_point deadline,
                 CallWaits* /*waits*/) {  // offered only to tools that honour them: never here
    CallContext ctx;
    ctx.span = span.get();
    ctx.stop = stop;
    if (described != nullptr) ctx.limits = described->limits;
    ctx.deadline = std::min(Clock::now() + ctx.limits.timeout, deadline);
    ctx.principal = self->principal_;
    Result<Json> description = makeError(Code::Internal, "the resource was not read");
    if (!stop.stop_requested()) {
      try {
        description = resource->read(ctx);
      } catch (const std::exception&) {
        description = makeError(Code::Internal, "internal error reading '" + resource->uri + "'");
      }
    }
    if (slot != nullptr) slot->release();
    if (stop.stop_requested()) return self->endUnanswered(key, out);  // cancelled: no answer
    Json response;
    if (description.ok()) {
      Json result = {{"contents", Json::array({Json{{"uri", resource->uri},
                                                    {"mimeType", resource->mime_type},
                                                    {"text", serialize(*description)}}})}};
      response = makeResultResponse(id, self->finishResult(std::move(result), modern, true));
    } else {
      response = makeErrorResponse(id, rpc::kInternalError, errorText(description.error()));
      if (span) span->setError(codeName(description.error().code));
    }
    // drain() waits until the answer is written, as for a tool call (finishing first let drain()
    // return before the answer went out: found by the batch fuzz target).
    self->finishAndSend(key, out, serialize(response));
    if (span) span->end();
  };
  auto unrun = [id, span](const Unrun& never) -> std::string {
    if (span) {
      span->setError(never.why == NotRun::Cancelled ? "cancelled" : "busy");
      span->end();
    }
    if (never.why == NotRun::Cancelled) return {};
    const std::string text = never.why == NotRun::Busy && !never.waited
                                 ? "the server is busy with other calls; retry in a moment"
                                 : notRunText(never);
    return serialize(makeErrorResponse(id, rpc::kInternalError, text));
  };
  dispatch(Job{.id = id,
               .key = id.dump(),
               .tool = described,
               .surface = std::move(surface),
               .run = run,
               .unrun = unrun},
           std::move(source), out);
}

void Session::listen(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out) {
  if (params.contains("notifications")) {
    const Json& n = params["notifications"];
    bool ok = n.is_object();
    for (const char* flag : {"toolsListChanged", "promptsListChanged", "resourcesListChanged"}) {
      ok = ok && (!n.contains(flag) || n[flag].is_boolean());
    }
    if (ok && n.contains("resourceSubscriptions")) {
      const Json& uris = n["resourceSubscriptions"];
      ok = uris.is_array() &&
           std::all_of(uris.begin(), uris.end(), [](const Json& u) { return u.is_string(); });
    }
    if (!ok) {
      out->send(makeErrorResponse(
          id, rpc::kInvalidParams,
          "params.notifications must be an object of booleans (toolsListChanged, "
          "promptsListChanged, resourcesListChanged) and resourceSubscriptions (strings)"));
      return;
    }
  }
  // The list changes a config reload makes are honoured (notifyListChanged); prompts never change
  // and resources are not subscribable, so those filters are not.
  auto asked = [&params](const char* flag) {
    const auto n = params.find("notifications");
    return n != params.end() && n->contains(flag) && (*n)[flag].get<bool>();
  };
  const bool tools_changed = asked("toolsListChanged");
  const bool resources_changed = asked("resourcesListChanged");
  Json honoured = Json::object();
  if (tools_changed) honoured["toolsListChanged"] = true;
  if (resources_changed) honoured["resourcesListChanged"] = true;
  const std::string key = id.dump();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (in_flight_.count(key) != 0 || subscriptions_.count(key) != 0) {
      out->send(makeErrorResponse(id, rpc::kInvalidRequest,
                                  "a request with this id is already in progress"));
      return;
    }
    if (subscriptions_.size() >= kMaxSubscriptions) {
      out->send(makeErrorResponse(
          id, kLimitExceeded,
          "too many open subscriptions (at most " + std::to_string(kMaxSubscriptions) + ")"));
      return;
    }
    subscriptions_[key] = Subscription{id, out, nullptr, tools_changed, resources_changed};
  }
  // The acknowledgment names the filter honoured; the stream then carries list changes only.
  out->send(makeNotification("notifications/subscriptions/acknowledged",
                             Json{{"_meta", {{std::string(meta_key::kSubscriptionId), id}}},
                                  {"notifications", std::move(honoured)}}));
  // The stream's reader going away (HTTP) ends the subscription without an answer.
  if (const std::stop_token gone = out->gone(); gone.stop_possible()) {
    std::weak_ptr<Session> weak = weak_from_this();
    using OnGone = std::stop_callback<std::function<void()>>;
    auto on_gone = std::make_shared<OnGone>(gone, std::function<void()>([weak, key] {
                                              auto self = weak.lock();
                                              if (!self) return;
                                              Subscription ended;
                                              std::lock_guard<std::mutex> lock(self->mu_);
                                              if (auto it = self->subscriptions_.find(key);
                                                  it != self->subscriptions_.end()) {
                                                // This callback is destroyed with it, after the
                                                // lock (allowed while it runs, on this thread).
                                                ended = std::move(it->second);
                                                self->subscriptions_.erase(it);
                                              }
                                            }));
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = subscriptions_.find(key); it != subscriptions_.end()) {
      it->second.on_gone = std::move(on_gone);
      return;
    }
    // Already gone (the callback ran in its constructor): nothing is kept.
  }
}

}  // namespace mcpdb::protocol
