#include "protocol/session.hpp"

#include <algorithm>
#include <array>

#include "protocol/batch_outbox.hpp"
#include "protocol/request_trace.hpp"

namespace mcpdb::protocol {
std::string requestIdText(const Json& id) {
  if (id.is_string()) return bounded(id.get_ref<const std::string&>());
  if (id.is_number_integer()) return id.dump();
  return {};
}

int logLevelRank(std::string_view level) {
  static constexpr std::array<std::string_view, 8> kLevels = {
      "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};
  for (std::size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] == level) return static_cast<int>(i);
  }
  return -1;
}

Session::Session(ServerCore& core, Principal principal, ScopeFn scope)
    : core_(core), principal_(std::move(principal)), scope_(std::move(scope)) {}

Session::~Session() = default;

std::string Session::protocolVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_version_;
}

std::size_t Session::inFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_.size();
}

void Session::setLogOutbox(std::shared_ptr<Outbox> out) {
  std::lock_guard<std::mutex> lock(mu_);
  log_out_ = std::move(out);
}

void Session::setNotificationOutbox(std::shared_ptr<Outbox> out) {
  // The stream's reader going away (HTTP) drops it, so its connection is not held for nothing.
  std::shared_ptr<void> on_gone;
  if (out) {
    if (const std::stop_token gone = out->gone(); gone.stop_possible()) {
      using OnGone = std::stop_callback<std::function<void()>>;
      on_gone = std::make_shared<OnGone>(
          gone, std::function<void()>([weak = weak_from_this(), raw = out.get()] {
            auto self = weak.lock();
            if (!self) return;
            std::shared_ptr<Outbox> dropped;  // released after the lock
            std::shared_ptr<void> callback;   // this callback: destroyed after it returns
            std::lock_guard<std::mutex> lock(self->mu_);
            if (self->notify_out_.get() == raw) {
              dropped = std::move(self->notify_out_);
              callback = std::move(self->notify_gone_);
            }
          }));
    }
  }
  std::shared_ptr<Outbox> replaced;  // a stream replaced by a new one ends (outside the lock)
  std::shared_ptr<void> replaced_gone;
  std::lock_guard<std::mutex> lock(mu_);
  replaced = std::move(notify_out_);
  replaced_gone = std::move(notify_gone_);
  notify_out_ = std::move(out);
  notify_gone_ = std::move(on_gone);
}

void Session::notifyListChanged(bool tools, bool resources) {
  if (!tools && !resources) return;
  std::shared_ptr<Outbox> legacy;
  std::vector<Subscription> listening;  // copies: sent outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (list_changed_ && initialized_.load()) legacy = notify_out_;
    for (const auto& [key, sub] : subscriptions_) {
      if ((tools && sub.tools_changed) || (resources && sub.resources_changed))
        listening.push_back(
            Subscription{sub.id, sub.out, nullptr, sub.tools_changed, sub.resources_changed});
    }
  }
  if (legacy) {
    if (tools) legacy->send(makeNotification("notifications/tools/list_changed", nullptr));
    if (resources) legacy->send(makeNotification("notifications/resources/list_changed", nullptr));
  }
  for (const auto& sub : listening) {
    const Json params = {{"_meta", {{std::string(meta_key::kSubscriptionId), sub.id}}}};
    if (tools && sub.tools_changed)
      sub.out->send(makeNotification("notifications/tools/list_changed", params));
    if (resources && sub.resources_changed)
      sub.out->send(makeNotification("notifications/resources/list_changed", params));
  }
}

void Session::log(std::string_view level, std::string_view logger, const Json& data) {
  const int rank = logLevelRank(level);
  const int wanted = log_rank_.load();
  if (wanted < 0 || rank < wanted || !initialized()) return;
  std::shared_ptr<Outbox> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out = log_out_;
  }
  if (out) {
    out->send(makeNotification(
        "notifications/message",
        Json{{"level", std::string(level)}, {"logger", std::string(logger)}, {"data", data}}));
  }
}

void Session::handleText(std::string_view text, const std::shared_ptr<Outbox>& out) {
  Parsed parsed = parseMessage(text, core_.options().parse);
  if (parsed.error_response) {
    out->send(*parsed.error_response);
    return;
  }
  // Classified here as the HTTP transport classifies its POSTs: one reading of the message.
  const Classified classified = classify(*parsed.message);
  handleClassified(std::move(*parsed.message), classified, out);  // params move, never copied
}

void Session::handle(const Json& message, const std::shared_ptr<Outbox>& out) {
  if (!message.is_array()) {
    handleOne(message, classify(message), out);
    return;
  }
  // JSON-RPC batches exist only in protocol version 2025-03-26; later versions removed them.
  if (protocolVersion() != "2025-03-26") {
    out->send(
        makeErrorResponse(nullptr, rpc::kInvalidRequest,
                          "JSON-RPC batches are not supported by the negotiated protocol version"));
    return;
  }
  if (message.empty()) {
    out->send(makeErrorResponse(nullptr, rpc::kInvalidRequest, "empty batch"));
    return;
  }
  // The same predicate decides what handleOne answers, so the batch is sent exactly when every
  // answer is in: never early (with calls still running and their results lost), never late.
  const auto expected = static_cast<std::size_t>(
      std::count_if(message.begin(), message.end(), [](const Json& m) { return getsAnswer(m); }));
  std::shared_ptr<Outbox> to = out;
  if (expected != 0) to = std::make_shared<BatchOutbox>(out, expected);
  for (const auto& m : message) handleOne(m, classify(m), to);
}

void Session::handleClassified(Json message, const Classified& classified,
                               const std::shared_ptr<Outbox>& out) {
  if (classified.batch) return handle(message, out);
  handleOne(std::move(message), classified, out);
}

void Session::startStateless(std::string_view requested_version) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    protocol_version_ = negotiatedVersion(requested_version);
  }
  initialized_.store(true);
}

void Session::handleOne(Json owned, const Classified& classified,
                        const std::shared_ptr<Outbox>& out) {
  const Json& message = owned;
  if (!message.is_object()) {
    out->send(
        makeErrorResponse(nullptr, rpc::kInvalidRequest, "a JSON-RPC message must be an object"));
    return;
  }
  // A message without an id (a notification, well-formed or not) or a client's response is never
  // answered (JSON-RPC 2.0); one with an id is answered exactly once, with id null when the id is
  // unreadable (getsAnswer(), which Session::handle counts batch answers with, and classify()).
  const bool answer = classified.answered;
  const Json& id = classified.id;  // null unless a string or an integer
  auto refuse = [&](int code, const std::string& text, const Json& with_id) {
    if (answer) out->send(makeErrorResponse(with_id, code, text));
  };
  if (message.value("jsonrpc", Json()) != "2.0") {
    return refuse(rpc::kInvalidRequest, "jsonrpc must be \"2.0\"", id);
  }
  if (!classified.method) {
    // No method: a response to a request of ours (getsAnswer is false), which this server never
    // sends, so there is nothing to match; or a method that is no string.
    return refuse(rpc::kInvalidRequest,
                  message.contains("method") ? "method must be a string" : "missing method", id);
  }
  if (answer && id.is_null()) {
    return refuse(rpc::kInvalidRequest, "id must be a string or an integer", nullptr);
  }
  const std::string& method = *classified.method;
  auto found_params = owned.find("params");
  Json params = found_params != owned.end() ? std::move(*found_params) : Json::object();
  if (!params.is_object()) {
    return refuse(rpc::kInvalidParams, "params must be an object", id);
  }
  if (!answer) {
    handleNotification(method, params);
    return;
  }
  // A span per request when the server traces (telemetry:); otherwise this null test is all.
  std::optional<RequestTrace> trace;
  if (telemetry::Tracer* tracer = core_.tracer()) {
    trace.emplace(
        *tracer, classified, method, params,
        classified.era == Era::Modern ? std::string(kModernProtocolVersion) : protocolVersion());
  }
  if (classified.era == Era::Modern) return handleModern(id, method, params, out, classified);
  handleRequest(id, method, params, out);
}

void Session::handleNotification(const std::string& method, const Json& params) {
  if (method == "notifications/cancelled") {
    if (!params.contains("requestId")) return;
    const std::string key = params["requestId"].dump();
    Subscription ended;  // destroyed after the lock is released (its callback may wait on it)
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = in_flight_.find(key); it != in_flight_.end()) it->second.request_stop();
    // A cancelled subscription ends without an answer.
    if (auto it = subscriptions_.find(key); it != subscriptions_.end()) {
      ended = std::move(it->second);
      subscriptions_.erase(it);
    }
  }
  // notifications/initialized and any other notification need no action and get no answer.
}

void Session::handleRequest(const Json& id, const std::string& method, Json& params,
                            const std::shared_ptr<Outbox>& out) {
  if (method == "ping") {
    out->send(makeResultResponse(id, Json::object()));
    return;
  }
  if (method == "initialize") {
    if (initialized()) {
      out->send(makeErrorResponse(id, rpc::kInvalidRequest, "the session is already initialized"));
      return;
    }
    if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string()) {
      out->send(makeErrorResponse(id, rpc::kInvalidParams,
                                  "initialize needs params.protocolVersion (a string)"));
      return;
    }
    out->send(makeResultResponse(id, initializeResult(params)));
    return;
  }
  if (!initialized()) {
    out->send(makeErrorResponse(id, rpc::kInvalidRequest,
                                "the session is not initialized: send initialize first"));
    return;
  }
  if (method == "logging/setLevel") {
    const int rank = params.contains("level") && params["level"].is_string()
                         ? logLevelRank(params["level"].get<std::string>())
                         : -1;
    if (rank < 0) {
      out->send(makeErrorResponse(
          id, rpc::kInvalidParams,
          "level must be one of debug, info, notice, warning, error, critical, alert, emergency"));
      return;
    }
    log_rank_.store(rank);
    out->send(makeResultResponse(id, Json::object()));
    return;
  }
  handleShared(id, method, params, out, /*modern=*/false);
}

void Session::handleModern(const Json& id, const std::string& method, Json& params,
                           const std::shared_ptr<Outbox>& out, const Classified& classified) {
  // The metadata was checked once, by classify() (a modern message always carries the verdict).
  if (!classified.meta) {
    out->send(makeErrorResponse(id, rpc::kInternalError, "the request was not classified"));
    return;
  }
  if (const auto* e = std::get_if<MetaError>(&*classified.meta)) {
    Json response = makeErrorResponse(id, e->code, e->message);
    if (!e->data.is_null()) response["error"]["data"] = e->data;
    out->send(response);
    return;
  }
  // Per-request log levels are accepted; this server has no log message that belongs to one
  // request, so it sends none (never without the field, as 2026-07-28 requires).
  if (method == "server/discover") {
    out->send(makeResultResponse(id, discoverResult()));
    return;
  }
  if (method == "subscriptions/listen") return listen(id, params, out);
  if (!classified.known_method) {
    out->send(makeErrorResponse(
        id, rpc::kMethodNotFound,
        "method not found at " + std::string(kModernProtocolVersion) + ": " + bounded(method)));
    return;
  }
  handleShared(id, method, params, out, /*modern=*/true);
}

void Session::handleShared(const Json& id, const std::string& method, Json& params,
                           const std::shared_ptr<Outbox>& out, bool modern) {
  if (method == "tools/list") return listTools(id, params, out, modern);
  if (method == "tools/call") return callTool(id, params, out, modern);
  if (method == "resources/list") return listResources(id, params, out, modern);
  if (method == "resources/templates/list") return listTemplates(id, params, out, modern);
  if (method == "resources/read") return readResource(id, params, out, modern);
  if (method == "prompts/list") return listPrompts(id, params, out, modern);
  if (method == "prompts/get") {
    out->send(
        makeErrorResponse(id, rpc::kInvalidParams, "Unknown prompt: this server offers none"));
    return;
  }
  out->send(makeErrorResponse(id, rpc::kMethodNotFound, "method not found: " + bounded(method)));
}

Json Session::finishResult(Json result, bool modern, bool cacheable) const {
  if (!modern) return result;
  result["resultType"] = "complete";
  result["_meta"][std::string(meta_key::kServerInfo)] = {{"name", core_.options().name},
                                                         {"version", core_.options().version}};
  if (cacheable) {
    result["ttlMs"] = kCacheTtlMs;
    // A list or description filtered by the client's key is not for anyone else's cache.
    result["cacheScope"] = scope_ ? "private" : "public";
  }
  return result;
}

Json Session::discoverResult() const {
  Json result = {
      {"supportedVersions", allProtocolVersions()},
      // Every transport carries subscriptions/listen, whose streams get the list changes of a
      // config reload (notifyListChanged); prompts never change (there are none).
      {"capabilities",
       {{"tools", {{"listChanged", true}}},
        {"resources", {{"listChanged", true}}},
        {"prompts", Json::object()}}},
  };
  if (!core_.options().instructions.empty()) result["instructions"] = core_.options().instructions;
  result = finishResult(std::move(result), /*modern=*/true, /*cacheable=*/true);
  // The same for every caller: versions, capabilities and instructions do not depend on the key.
  result["cacheScope"] = "public";
  return result;
}

std::string negotiatedVersion(std::string_view requested) {
  const auto& versions = supportedProtocolVersions();
  return std::find(versions.begin(), versions.end(), requested) != versions.end()
             ? std::string(requested)
             : std::string(kLatestProtocolVersion);
}

Json Session::initializeResult(const Json& params) {
  const std::string version =
      negotiatedVersion(params["protocolVersion"].get_ref<const std::string&>());
  {
    std::lock_guard<std::mutex> lock(mu_);
    protocol_version_ = version;
  }
  initialized_.store(true);
  Json result = {
      {"protocolVersion", version},
      {"capabilities",
       {{"tools", {{"listChanged", list_changed_}}},
        {"resources", {{"listChanged", list_changed_}, {"subscribe", false}}},
        {"prompts", {{"listChanged", false}}},
        {"logging", Json::object()}}},
      {"serverInfo",
       {{"name", core_.options().name},
        {"title", "mcp-dbserver"},
        {"version", core_.options().version}}},
  };
  if (!core_.options().instructions.empty()) result["instructions"] = core_.options().instructions;
  return result;
}

void Session::cancelAll() {
  std::map<std::string, Subscription> ended;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, source] : in_flight_) source.request_stop();
  ended.swap(subscriptions_);
}

void Session::closeSubscriptions() {
  std::map<std::string, Subscription> ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended.swap(subscriptions_);
  }
  for (auto& [key, sub] : ended) {
    Json result = finishResult(Json::object(), /*modern=*/true, /*cacheable=*/false);
    result["_meta"][std::string(meta_key::kSubscriptionId)] = sub.id;
    sub.out->send(makeResultResponse(sub.id, std::move(result)));
  }
}

void Session::drain(std::chrono::milliseconds grace) {
  closeSubscriptions();
  std::unique_lock<std::mutex> lock(mu_);
  auto idle = [this] { return in_flight_.empty() && sending_ == 0; };
  if (idle_cv_.wait_for(lock, grace, idle)) return;
  for (auto& [key, source] : in_flight_) source.request_stop();
  // Handlers honour stop tokens; give them a moment to unwind before the process exits.
  idle_cv_.wait_for(lock, std::chrono::seconds(5), idle);
}

}  // namespace mcpdb::protocol
