#include "protocol/session.hpp"

#include <algorithm>
#include <array>

#include "common/result.hpp"
#include "common/fence.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::protocol {
namespace {

using Clock = std::chrono::steady_clock;

// Agent-supplied strings echoed in errors are bounded so they cannot flood a log or a reply.
std::string bounded(const std::string& s, std::size_t max = 64) {
  return s.size() > max ? s.substr(0, max) + "..." : s;
}

bool validId(const Json& id) {
  return id.is_string() || id.is_number_integer();
}

// One place maps a failure Code to what the agent reads. All codes become a tool result with
// isError (the model can read and act on it); Cancelled produces no response at all (MCP
// cancellation rules), which runCall handles before getting here.
std::string errorText(const Error& e) {
  std::string hint;
  switch (e.code) {
    case Code::TimedOut:
      hint = " The call ran out of time; narrow the request or try again later.";
      break;
    case Code::Unavailable:
      hint = " The database is unreachable right now; retrying later may help.";
      break;
    case Code::ResourceExhausted:
      hint = " A limit was reached; wait and retry, or narrow the request.";
      break;
    default: break;
  }
  return "Error (" + std::string(codeName(e.code)) + "): " + e.message + hint;
}

// The start index a list cursor names (the decimal index of the page's first item, opaque to
// clients); nullopt for a malformed one.
std::optional<std::size_t> listStart(const Json& params) {
  if (!params.contains("cursor")) return 0;
  const Json& c = params["cursor"];
  if (!c.is_string()) return std::nullopt;
  const auto& text = c.get_ref<const std::string&>();
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return static_cast<std::size_t>(std::stoul(text));
}

// A call refused by its source's bulkhead (its queue full): names the source as the operator
// named it (never a host), and says that other sources still answer.
std::string sourceBusyText(const Bulkhead& bulkhead) {
  return "Error (resource_exhausted): " + std::to_string(bulkhead.limit()) + " calls to " +
         bulkhead.name() + " are running and " + std::to_string(bulkhead.maxWaiting()) +
         " waiting, as many as one source may (server.max_calls_per_source); it may be slow or "
         "unreachable. Tools of other sources are not affected. Retry in a moment.";
}

constexpr const char* kServerBusyText =
    "Error (resource_exhausted): the server is busy with other calls. Retry in a moment.";

// How a call that waited for its source's slot and never ran is answered.
std::string waitEndText(Session::WaitEnd end, const Bulkhead& bulkhead,
                        std::chrono::milliseconds timeout) {
  switch (end) {
    case Session::WaitEnd::TimedOut:
      return "Error (timed_out): the call waited " + std::to_string(timeout.count()) +
             " ms (its timeout) for one of the " + std::to_string(bulkhead.limit()) + " calls " +
             bulkhead.name() +
             " may run at once (server.max_calls_per_source), and none came free; it may be "
             "slow or unreachable. Tools of other sources are not affected. Retry later.";
    case Session::WaitEnd::Closed: return "Error (unavailable): the server is shutting down.";
    default: return kServerBusyText;
  }
}

Json toolErrorResult(const std::string& text) {
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", text}}})},
              {"isError", true}};
}

// Collects the responses to a JSON-RPC batch and sends them as one array; notifications
// (progress, logs) pass straight through.
class BatchOutbox : public Outbox {
 public:
  BatchOutbox(std::shared_ptr<Outbox> parent, std::size_t expected)
      : parent_(std::move(parent)), expected_(expected) {}
  void send(const Json& message) override {
    if (!message.contains("id")) {
      parent_->send(message);
      return;
    }
    add(serialize(message));
  }
  void sendSerialized(std::string text, bool response) override {
    if (!response) {
      parent_->sendSerialized(std::move(text), false);
      return;
    }
    add(std::move(text));
  }
  std::optional<CallRefusal> admitCall() override { return parent_->admitCall(); }
  std::stop_token gone() const override { return parent_->gone(); }
  // A cancelled request sends nothing; stop waiting for it.
  void forget() {
    std::string done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (expected_ == 0) return;
      --expected_;
      if (responses_.empty() || responses_.size() < expected_) return;
      done = join();
    }
    parent_->sendSerialized(std::move(done), true);
  }

 private:
  void add(std::string text) {
    std::string done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      responses_.push_back(std::move(text));
      if (responses_.size() < expected_) return;
      done = join();
    }
    parent_->sendSerialized(std::move(done), true);
  }
  // The array of the collected responses, in the order they finished.
  std::string join() {
    std::string out = "[";
    for (std::size_t i = 0; i < responses_.size(); ++i) {
      if (i > 0) out.push_back(',');
      out.append(responses_[i]);
    }
    out.push_back(']');
    responses_.clear();
    return out;
  }

  std::shared_ptr<Outbox> parent_;
  std::mutex mu_;
  std::size_t expected_;
  std::vector<std::string> responses_;
};

}  // namespace

void Outbox::sendSerialized(std::string text, bool /*response*/) {
  send(Json::parse(text, nullptr, /*allow_exceptions=*/false));
}

bool getsAnswer(const Json& message) {
  if (!message.is_object()) return true;
  if (!message.contains("id")) return false;
  // A client's response to a request of ours (no method, a result or an error) is not answered.
  return message.contains("method") || !(message.contains("result") || message.contains("error"));
}

bool isToolCall(const Json& message) {
  if (!message.is_object() || !message.contains("id") || !validId(message["id"])) return false;
  const auto method = message.find("method");
  return method != message.end() && *method == "tools/call";
}

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

ServerCore::ServerCore(ServerOptions options, std::shared_ptr<const ToolRegistry> registry)
    : options_(std::move(options)),
      registry_(std::move(registry)),
      result_memory_(options_.max_result_memory),
      pool_(options_.workers, options_.max_queue) {
  const std::string info = serialize(Json{{"name", options_.name}, {"version", options_.version}});
  server_info_meta_ = R"("_meta":{")" + std::string(meta_key::kServerInfo) + R"(":)" + info + "}";
  makeBulkheads();
}

std::string bulkheadKey(const Tool& tool) {
  return tool.engine + "/" + (tool.source.empty() ? std::string("*") : tool.source);
}

// The size of a source's bulkhead: the operator's, or three quarters of the workers, so however
// many of its calls hang, a quarter stays for every other source (half was too few for a burst of
// five calls of one agent to one source). Calls over it wait for a slot rather than being refused
// (an agent's burst to a source slow for a moment, as the soak test sends, must not fail). 0:
// none, when the server reads one source only and no size is set: there is nothing to keep apart,
// the pool's limits are its own.
std::size_t ServerCore::callsFor(const std::string& key, std::size_t sources) const {
  if (const auto set = options_.calls_by_source.find(key); set != options_.calls_by_source.end())
    return set->second;
  if (options_.calls_per_source > 0) return options_.calls_per_source;
  if (sources <= 1) return 0;
  return std::max<std::size_t>(1, options_.workers * 3 / 4);
}

// One bulkhead per source the tools read, resolved once per tool so a call only looks its tool up.
void ServerCore::makeBulkheads() {
  std::map<std::string, const Tool*, std::less<>> first_of;  // a tool of each source, by key
  for (const auto& tool : registry_->tools()) first_of.emplace(bulkheadKey(*tool), tool.get());
  std::map<std::string, Bulkhead*, std::less<>> by_key;
  for (const auto& [key, tool] : first_of) {
    const std::size_t limit = callsFor(key, first_of.size());
    if (limit == 0) continue;
    if (!wait_timer_) wait_timer_ = std::make_unique<WaitTimer>();
    const std::string name = tool->source.empty()
                                 ? "the " + tool->engine + " sources"
                                 : "the " + tool->engine + " source '" + tool->source + "'";
    bulkheads_.push_back(
        std::make_unique<Bulkhead>(name, limit, kWaitingPerSlot * limit, wait_timer_.get()));
    by_key.emplace(key, bulkheads_.back().get());
  }
  for (const auto& tool : registry_->tools()) {
    if (auto it = by_key.find(bulkheadKey(*tool)); it != by_key.end())
      bulkhead_of_.emplace(tool.get(), it->second);
  }
}

Bulkhead* ServerCore::bulkheadFor(const Tool& tool) const {
  if (bulkhead_of_.empty()) return nullptr;  // one source: nothing to look up per call
  const auto it = bulkhead_of_.find(&tool);
  return it == bulkhead_of_.end() ? nullptr : it->second;
}

ServerCore::~ServerCore() {
  // Calls still running give their slots to waiters, whose jobs the stopping pool refuses (busy);
  // whoever still waits then is told the server is shutting down.
  pool_.shutdown();
  for (auto& bulkhead : bulkheads_) bulkhead->close();
}

void ServerCore::notify(const CallRecord& record) const {
  for (const auto& o : observers_) o->onCall(record);
}

std::string ServerCore::unscopedToolsPage(std::size_t start, bool modern,
                                          const std::function<std::string()>& make) {
  {
    std::lock_guard<std::mutex> lock(pages_mu_);
    if (auto it = pages_.find({start, modern}); it != pages_.end()) return it->second;
  }
  std::string page = make();
  // Only the pages this server hands out cursors for are kept (bounded by the tool count); a bad
  // cursor (an empty page) or an odd start a client made up is computed each time.
  if (page.empty() || start % std::max<std::size_t>(1, options_.page_size) != 0) return page;
  std::lock_guard<std::mutex> lock(pages_mu_);
  return pages_.emplace(std::make_pair(start, modern), std::move(page)).first->second;
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
  if (parsed.message->is_array()) {
    handle(*parsed.message, out);
  } else {
    handleOne(std::move(*parsed.message), out);  // owned: params move through, never copied
  }
}

void Session::handle(const Json& message, const std::shared_ptr<Outbox>& out) {
  if (!message.is_array()) {
    handleOne(message, out);
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
  if (expected == 0) {
    for (const auto& m : message) handleOne(m, out);
    return;
  }
  auto batch = std::make_shared<BatchOutbox>(out, expected);
  for (const auto& m : message) handleOne(m, batch);
}

void Session::handleOne(Json owned, const std::shared_ptr<Outbox>& out) {
  const Json& message = owned;
  if (!message.is_object()) {
    out->send(
        makeErrorResponse(nullptr, rpc::kInvalidRequest, "a JSON-RPC message must be an object"));
    return;
  }
  // A message without an id (a notification, well-formed or not) or a client's response is never
  // answered (JSON-RPC 2.0); one with an id is answered exactly once, with id null when the id is
  // unreadable. getsAnswer() is that rule; Session::handle counts batch answers with it.
  const bool answer = getsAnswer(message);
  const Json id = answer && validId(message["id"]) ? message["id"] : Json(nullptr);
  auto refuse = [&](int code, const std::string& text, const Json& with_id) {
    if (answer) out->send(makeErrorResponse(with_id, code, text));
  };
  if (message.value("jsonrpc", Json()) != "2.0") {
    return refuse(rpc::kInvalidRequest, "jsonrpc must be \"2.0\"", id);
  }
  if (!message.contains("method")) {
    // A response to a request of ours (getsAnswer is false): this server sends none, so there is
    // nothing to match.
    return refuse(rpc::kInvalidRequest, "missing method", id);
  }
  if (!message["method"].is_string()) {
    return refuse(rpc::kInvalidRequest, "method must be a string", id);
  }
  if (answer && !validId(message["id"])) {
    return refuse(rpc::kInvalidRequest, "id must be a string or an integer", nullptr);
  }
  const auto& method = message["method"].get_ref<const std::string&>();
  auto found_params = owned.find("params");
  Json params = found_params != owned.end() ? std::move(*found_params) : Json::object();
  if (!params.is_object()) {
    return refuse(rpc::kInvalidParams, "params must be an object", id);
  }
  if (!answer) {
    handleNotification(method, params);
    return;
  }
  if (carriesModernMeta(params)) return handleModern(id, method, params, out);
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
                           const std::shared_ptr<Outbox>& out) {
  auto checked = checkModernMeta(params);
  if (const auto* e = std::get_if<MetaError>(&checked)) {
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
  if (!isModernMethod(method)) {
    out->send(makeErrorResponse(
        id, rpc::kMethodNotFound,
        "method not found at " + std::string(kModernProtocolVersion) + ": " + bounded(method)));
    return;
  }
  handleShared(id, method, params, out, /*modern=*/true);
}

void Session::handleShared(const Json& id, const std::string& method, Json& params,
                           const std::shared_ptr<Outbox>& out, bool modern) {
  if (method == "tools/list") {
    std::string page;
    if (!listTools(params, page, modern)) {
      out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
    } else {
      out->sendSerialized(serializedResultResponse(id, page), true);
    }
    return;
  }
  if (method == "tools/call") return callTool(id, params, out, modern);
  if (method == "resources/list") return listResources(id, params, out, modern);
  if (method == "resources/templates/list") return listTemplates(id, params, out, modern);
  if (method == "resources/read") return readResource(id, params, out, modern);
  // This server offers no prompts; the methods answer so (an empty list, an unknown name), so that
  // a client that lists everything a server declares gets a list with its caching hints.
  if (method == "prompts/list") {
    if (!listStart(params) || *listStart(params) != 0) {
      out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
      return;
    }
    out->send(makeResultResponse(
        id, finishResult(Json{{"prompts", Json::array()}}, modern, /*cacheable=*/true)));
    return;
  }
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
      {"capabilities",
       {{"tools", Json::object()}, {"resources", Json::object()}, {"prompts", Json::object()}}},
  };
  if (!core_.options().instructions.empty()) result["instructions"] = core_.options().instructions;
  result = finishResult(std::move(result), /*modern=*/true, /*cacheable=*/true);
  // The same for every caller: versions, capabilities and instructions do not depend on the key.
  result["cacheScope"] = "public";
  return result;
}

Json Session::initializeResult(const Json& params) {
  const std::string requested = params["protocolVersion"].get<std::string>();
  const auto& versions = supportedProtocolVersions();
  const std::string version =
      std::find(versions.begin(), versions.end(), requested) != versions.end()
          ? requested
          : std::string(kLatestProtocolVersion);
  {
    std::lock_guard<std::mutex> lock(mu_);
    protocol_version_ = version;
  }
  initialized_.store(true);
  Json result = {
      {"protocolVersion", version},
      {"capabilities",
       {{"tools", {{"listChanged", false}}},
        {"resources", {{"listChanged", false}, {"subscribe", false}}},
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

bool Session::listTools(const Json& params, std::string& page, bool modern) const {
  // The cursor is the decimal index of the first tool of the page; opaque to clients.
  std::size_t start = 0;
  if (params.contains("cursor")) {
    const Json& c = params["cursor"];
    if (!c.is_string() || c.get_ref<const std::string&>().empty() ||
        c.get_ref<const std::string&>().size() > 9 ||
        c.get_ref<const std::string&>().find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    start = std::stoul(c.get<std::string>());
  }
  bool bad_cursor = false;
  auto make = [&] {
    Json result = toolsPage(start, bad_cursor);
    return bad_cursor ? std::string()
                      : serialize(finishResult(std::move(result), modern, /*cacheable=*/true));
  };
  // A scope may change on reload (HTTP client tables), so only unscoped pages are cached.
  page = scope_ ? make() : core_.unscopedToolsPage(start, modern, make);
  return !page.empty();
}

Json Session::toolsPage(std::size_t start, bool& bad_cursor) const {
  std::vector<const Tool*> visible_tools;
  for (const auto& t : core_.registry().tools()) {
    if (visible(*t)) visible_tools.push_back(t.get());
  }
  if (start > visible_tools.size()) {
    bad_cursor = true;
    return {};
  }
  const std::size_t page = std::max<std::size_t>(1, core_.options().page_size);
  const std::size_t end = std::min(visible_tools.size(), start + page);
  Json tools = Json::array();
  for (std::size_t i = start; i < end; ++i)
    tools.push_back(ToolRegistry::describe(*visible_tools[i]));
  Json result = {{"tools", std::move(tools)}};
  if (end < visible_tools.size()) result["nextCursor"] = std::to_string(end);
  return result;
}

void Session::callTool(const Json& id, Json& params, const std::shared_ptr<Outbox>& out,
                       bool modern) {
  if (!params.contains("name") || !params["name"].is_string()) {
    out->send(
        makeErrorResponse(id, rpc::kInvalidParams, "tools/call needs params.name (a string)"));
    return;
  }
  const auto& name = params["name"].get_ref<const std::string&>();
  const Tool* found = core_.registry().find(name);
  CallRecord record{
      principal_.client_id, bounded(name), found != nullptr ? found->engine : "", "", {}, 0, 0,
      requestIdText(id)};
  // A tool outside the caller's scope is indistinguishable from one that does not exist.
  if (found == nullptr || !visible(*found)) {
    record.outcome = found == nullptr ? "unknown_tool" : "out_of_scope";
    core_.notify(record);
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "Unknown tool: " + bounded(name)));
    return;
  }
  auto found_arguments = params.find("arguments");
  Json arguments = found_arguments != params.end() ? std::move(*found_arguments) : Json::object();
  if (arguments.is_null()) arguments = Json::object();
  if (!arguments.is_object()) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams,
                                "tools/call params.arguments must be an object"));
    return;
  }
  if (auto st = validateJson(found->input_schema, arguments); !st) {
    record.outcome = "invalid_arguments";
    core_.notify(record);
    out->send(makeResultResponse(
        id, finishResult(toolErrorResult("Invalid arguments: " + st.error().message), modern,
                         /*cacheable=*/false)));
    return;
  }
  Json progress_token;
  if (params.contains("_meta") && params["_meta"].is_object() &&
      params["_meta"].contains("progressToken")) {
    const Json& t = params["_meta"]["progressToken"];
    if (t.is_string() || t.is_number_integer()) progress_token = t;
  }
  const std::string key = id.dump();
  std::stop_source source;
  if (!startRequest(id, out, source)) return;
  const std::stop_token stop = source.get_token();
  if (auto refusal = out->admitCall()) {
    finishCall(key);
    record.outcome = refusal->outcome;
    core_.notify(record);
    out->send(makeErrorResponse(id, kLimitExceeded, refusal->message));
    return;
  }
  // The call is cancelled when whoever waits for its answer goes away (a closed HTTP connection).
  using OnGone = std::stop_callback<std::function<void()>>;
  std::shared_ptr<OnGone> on_gone;
  if (const std::stop_token gone = out->gone(); gone.stop_possible()) {
    on_gone = std::make_shared<OnGone>(
        gone, std::function<void()>([source]() mutable { source.request_stop(); }));
  }
  // The source's own share first, before a worker or a queue slot: a hung source holds only its
  // bulkhead, never the workers every other source needs.
  Bulkhead* bulkhead = core_.bulkheadFor(*found);
  std::shared_ptr<Bulkhead::Slot> slot;  // none when the server has no bulkheads
  if (bulkhead != nullptr) slot = std::make_shared<Bulkhead::Slot>(bulkhead->tryAcquire());
  // Share ownership of the registered tool so it outlives this call even across a reload.
  std::shared_ptr<const Tool> tool;
  for (const auto& t : core_.registry().tools()) {
    if (t.get() == found) tool = t;
  }
  // A call that waits for its source's slot keeps the deadline it had when it came.
  const bool waits = slot && !*slot;
  const Clock::time_point deadline =
      waits ? Clock::now() + tool->limits.timeout : Clock::time_point::max();
  auto self = shared_from_this();
  std::function<void()> job = [self, id, tool, arguments = std::move(arguments),
                               progress_token = std::move(progress_token), stop, out, on_gone,
                               modern, slot, deadline]() mutable {
    self->runCall(id, tool, arguments, std::move(progress_token), stop, out, modern, slot.get(),
                  deadline);
  };
  if (waits) {
    auto ended = [self, id, key, out, modern, record, bulkhead, deadline,
                  timeout = tool->limits.timeout](WaitEnd end) mutable {
      record.outcome = end == WaitEnd::Cancelled  ? "cancelled"
                       : end == WaitEnd::TimedOut ? std::string(codeName(Code::TimedOut))
                       : end == WaitEnd::Closed   ? std::string(codeName(Code::Unavailable))
                                                  : "busy";
      record.duration =  // the wait, from when the call came
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - deadline + timeout);
      self->core_.notify(record);
      if (end == WaitEnd::Cancelled) {
        self->finishCall(key);  // MCP: a cancelled request gets no response
        if (auto* batch = dynamic_cast<BatchOutbox*>(out.get())) batch->forget();
        return;
      }
      self->finishAndSend(
          key, out,
          serialize(makeResultResponse(
              id, self->finishResult(toolErrorResult(waitEndText(end, *bulkhead, timeout)), modern,
                                     /*cacheable=*/false))));
    };
    switch (waitForSlot(*bulkhead, deadline, stop, slot, job, ended)) {
      case SlotWait::Queued: return;
      case SlotWait::Now: break;  // a slot came free meanwhile
      case SlotWait::Full:
        finishCall(key);
        record.outcome = "source_busy";
        core_.notify(record);
        out->send(makeResultResponse(id, finishResult(toolErrorResult(sourceBusyText(*bulkhead)),
                                                      modern, /*cacheable=*/false)));
        return;
    }
  }
  const bool queued =
      dispatch_ ? dispatch_(job, tool->watches_input) : core_.pool().trySubmit(std::move(job));
  if (!queued) {
    if (slot) slot->release();
    finishCall(key);
    record.outcome = "busy";
    core_.notify(record);
    out->send(makeResultResponse(
        id, finishResult(toolErrorResult(kServerBusyText), modern, /*cacheable=*/false)));
  }
}

Session::SlotWait Session::waitForSlot(Bulkhead& bulkhead, Clock::time_point deadline,
                                       const std::stop_token& stop,
                                       const std::shared_ptr<Bulkhead::Slot>& slot,
                                       std::function<void()>& job,
                                       const std::function<void(WaitEnd)>& ended) {
  // The job is moved into the queue only when it waits there.
  auto held = std::make_shared<std::function<void()>>(std::move(job));
  using Hook = std::stop_callback<std::function<void()>>;
  auto hook = std::make_shared<std::unique_ptr<Hook>>();  // set once the ticket is known
  Bulkhead::Waiter waiter;
  waiter.granted = [held, slot, ended, hook, pool = &core_.pool()](Bulkhead::Slot given) {
    // On the thread that gave the slot back: the call goes to a worker holding it.
    *slot = std::move(given);
    if (!pool->trySubmit([held] { (*held)(); })) {
      slot->release();
      ended(WaitEnd::Busy);
    }
  };
  waiter.refused = [ended, hook](Bulkhead::Refusal why) {
    ended(why == Bulkhead::Refusal::TimedOut    ? WaitEnd::TimedOut
          : why == Bulkhead::Refusal::Cancelled ? WaitEnd::Cancelled
                                                : WaitEnd::Closed);
  };
  Bulkhead::Admission admission = bulkhead.acquireOrWait(deadline, waiter);
  if (admission.ticket == 0) {
    job = std::move(*held);
    if (!admission.slot) return SlotWait::Full;
    *slot = std::move(admission.slot);
    return SlotWait::Now;
  }
  // Cancelled (notifications/cancelled, the HTTP client gone) while it waits: out of the queue,
  // answered as cancelled (Bulkhead::cancel runs the answer off this thread, which may hold mu_).
  if (stop.stop_possible()) {
    *hook = std::make_unique<Hook>(
        stop,
        std::function<void()>([b = &bulkhead, ticket = admission.ticket] { b->cancel(ticket); }));
  }
  return SlotWait::Queued;
}

void Session::finishAndSend(const std::string& key, const std::shared_ptr<Outbox>& out,
                            std::string line) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(key);
    ++sending_;
  }
  out->sendSerialized(std::move(line), true);
  std::lock_guard<std::mutex> lock(mu_);
  --sending_;
  if (in_flight_.empty() && sending_ == 0) idle_cv_.notify_all();
}

void Session::runCall(const Json& id, const std::shared_ptr<const Tool>& tool,
                      const Json& arguments, Json progress_token, const std::stop_token& stop,
                      const std::shared_ptr<Outbox>& out, bool modern, Bulkhead::Slot* slot,
                      Clock::time_point deadline) {
  const auto started = Clock::now();
  const std::string key = id.dump();
  CallRecord record{principal_.client_id, tool->name, tool->engine, "", {}, 0, 0,
                    requestIdText(id)};
  auto forgetIfBatch = [&out] {
    if (auto* batch = dynamic_cast<BatchOutbox*>(out.get())) batch->forget();
  };
  if (stop.stop_requested()) {
    if (slot != nullptr) slot->release();
    finishCall(key);
    record.outcome = "cancelled";
    core_.notify(record);
    forgetIfBatch();
    return;
  }
  CallContext ctx;
  ctx.stop = stop;
  ctx.deadline = std::min(started + tool->limits.timeout, deadline);
  ctx.limits = tool->limits;
  ctx.principal = principal_;
  if (!progress_token.is_null()) {
    ctx.progress = [out, progress_token, stop](double progress, std::optional<double> total,
                                               const std::string& msg) {
      if (stop.stop_requested()) return;
      Json p = {{"progressToken", progress_token}, {"progress", progress}};
      if (total) p["total"] = *total;
      if (!msg.empty()) p["message"] = msg;
      out->send(makeNotification("notifications/progress", std::move(p)));
    };
  }
  Result<ToolOutput> result = makeError(Code::Internal, "the tool did not run");
  // The result's memory is held from before the call until its answer is written, and given back
  // before the call counts as finished (drain() and the next call see it returned).
  auto held = core_.resultMemory().tryReserve(kResultCopies * ctx.limits.max_bytes);
  if (!held) {
    result = makeError(Code::ResourceExhausted,
                       "the server holds as much memory for results in flight as it may "
                       "(server.max_result_memory, " +
                           std::to_string(core_.resultMemory().total() >> 20) +
                           " MiB); retry in a moment");
  } else {
    try {
      result = tool->handler(arguments, ctx);
    } catch (const std::exception&) {
      // Handlers must not throw; if one does, the agent gets a safe message and nothing else.
      result = makeError(Code::Internal, "internal error in tool '" + tool->name + "'");
    }
  }
  // The source is free again before anyone reads the answer, so a client's next call finds it so.
  if (slot != nullptr) slot->release();
  record.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  record.source = std::move(ctx.audit.source);
  record.truncated = ctx.audit.truncated;
  if (stop.stop_requested()) {
    // MCP: a cancelled request gets no response.
    held.reset();
    finishCall(key);
    record.outcome = "cancelled";
    core_.notify(record);
    forgetIfBatch();
    return;
  }
  std::string line;
  if (result.ok()) {
    // The structured result is dumped once; the response is assembled around that text (as the
    // text content, escaped, and as structuredContent) in the bytes serialize() would write.
    const std::string text = serialize(result->structured);
    record.rows = result->rows;
    record.bytes = text.size();
    record.outcome = "ok";
    const std::string id_text = serialize(id);
    // Members in serialize()'s (sorted) order; at 2026-07-28 also _meta and resultType.
    line.reserve(2 * text.size() + id_text.size() + 256);
    line.append(R"({"id":)");
    line.append(id_text);
    line.append(R"(,"jsonrpc":"2.0","result":{)");
    if (modern) {
      line.append(core_.serverInfoMetaMember());
      line.push_back(',');
    }
    line.append(R"("content":[{"text":")");
    const Fence fence = result->fence != Fence::Inherit ? result->fence
                        : tool->fence != Fence::Inherit ? tool->fence
                                                        : core_.options().fence;
    if (fence == Fence::Always || (fence == Fence::Auto && result->free_text)) {
      const std::string nonce = fenceNonce();
      appendJsonEscapedUtf8(line, fenceOpening(nonce));
      appendJsonEscapedUtf8(line, text);
      appendJsonEscapedUtf8(line, fenceClosing(nonce));
    } else {
      appendJsonEscapedUtf8(line, text);
    }
    line.append(R"(","type":"text"}],"isError":false,)");
    if (modern) line.append(R"("resultType":"complete",)");
    line.append(R"("structuredContent":)");
    line.append(text);
    line.append("}}");
  } else {
    record.outcome = std::string(codeName(result.error().code));
    line = serialize(makeResultResponse(
        id, finishResult(toolErrorResult(errorText(result.error())), modern, false)));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(key);
    ++sending_;
  }
  core_.notify(record);
  out->sendSerialized(std::move(line), true);
  held.reset();
  std::lock_guard<std::mutex> lock(mu_);
  --sending_;
  if (in_flight_.empty() && sending_ == 0) idle_cv_.notify_all();
}

void Session::finishCall(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(key);
  if (in_flight_.empty() && sending_ == 0) idle_cv_.notify_all();
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

bool Session::startRequest(const Json& id, const std::shared_ptr<Outbox>& out,
                           std::stop_source& source) {
  const std::string key = id.dump();
  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_.count(key) != 0 || subscriptions_.count(key) != 0) {
    out->send(makeErrorResponse(id, rpc::kInvalidRequest,
                                "a request with this id is already in progress"));
    return false;
  }
  source = in_flight_[key];
  return true;
}

bool Session::visible(const Resource& resource) const {
  for (const auto& name : resource.tools) {
    const Tool* t = core_.registry().find(name);
    if (t != nullptr && visible(*t)) return true;
  }
  return false;
}

bool Session::visible(const ResourceTemplate& tmpl) const {
  for (const auto& t : core_.registry().tools()) {
    if (t->engine == tmpl.engine && visible(*t)) return true;
  }
  return false;
}

namespace {

// One page of `items` from `start`: the items and, when more follow, nextCursor; false when the
// start lies beyond the list.
bool pageOf(const std::vector<Json>& items, std::size_t start, std::size_t page_size,
            const char* member, Json& result) {
  if (start > items.size()) return false;
  const std::size_t end = std::min(items.size(), start + std::max<std::size_t>(1, page_size));
  Json page = Json::array();
  for (std::size_t i = start; i < end; ++i) page.push_back(items[i]);
  result = Json{{member, std::move(page)}};
  if (end < items.size()) result["nextCursor"] = std::to_string(end);
  return true;
}

}  // namespace

void Session::listResources(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                            bool modern) const {
  std::vector<Json> items;
  for (const auto& r : core_.registry().resources()) {
    if (visible(*r)) items.push_back(ToolRegistry::describe(*r));
  }
  Json result;
  const auto start = listStart(params);
  if (!start || !pageOf(items, *start, core_.options().page_size, "resources", result)) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
    return;
  }
  out->send(makeResultResponse(id, finishResult(std::move(result), modern, true)));
}

void Session::listTemplates(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                            bool modern) const {
  std::vector<Json> items;
  for (const auto& t : core_.registry().templates()) {
    if (visible(t)) items.push_back(ToolRegistry::describe(t));
  }
  Json result;
  const auto start = listStart(params);
  if (!start || !pageOf(items, *start, core_.options().page_size, "resourceTemplates", result)) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
    return;
  }
  out->send(makeResultResponse(id, finishResult(std::move(result), modern, true)));
}

void Session::readResource(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                           bool modern) {
  if (!params.contains("uri") || !params["uri"].is_string()) {
    out->send(
        makeErrorResponse(id, rpc::kInvalidParams, "resources/read needs params.uri (a string)"));
    return;
  }
  const auto& uri = params["uri"].get_ref<const std::string&>();
  const Resource* found = core_.registry().findResource(uri);
  // A resource outside the caller's scope is indistinguishable from one that does not exist.
  if (found == nullptr || !visible(*found)) {
    Json response = makeErrorResponse(
        id, modern ? rpc::kInvalidParams : rpc::kResourceNotFoundLegacy, "Resource not found");
    response["error"]["data"] = {{"uri", bounded(uri, 256)}};
    out->send(response);
    return;
  }
  std::shared_ptr<const Resource> resource;
  for (const auto& r : core_.registry().resources()) {
    if (r.get() == found) resource = r;
  }
  std::stop_source source;
  if (!startRequest(id, out, source)) return;
  const std::string key = id.dump();
  using OnGone = std::stop_callback<std::function<void()>>;
  std::shared_ptr<OnGone> on_gone;
  if (const std::stop_token gone = out->gone(); gone.stop_possible()) {
    on_gone = std::make_shared<OnGone>(
        gone, std::function<void()>([source]() mutable { source.request_stop(); }));
  }
  // A description may ask the database: it takes the bulkhead of the (first) tool it describes,
  // whose limits it also runs under (it asks no more of the database than the tool), waiting for
  // a slot as a call does.
  const Tool* described = core_.registry().find(resource->tools.front());
  Bulkhead* bulkhead = described != nullptr ? core_.bulkheadFor(*described) : nullptr;
  std::shared_ptr<Bulkhead::Slot> slot;
  if (bulkhead != nullptr) slot = std::make_shared<Bulkhead::Slot>(bulkhead->tryAcquire());
  const auto timeout = described != nullptr ? described->limits.timeout : Limits{}.timeout;
  const bool waits = slot && !*slot;
  const Clock::time_point deadline = waits ? Clock::now() + timeout : Clock::time_point::max();
  auto self = shared_from_this();
  std::function<void()> job = [self, id, key, resource, out, modern, on_gone, described, slot,
                               deadline, stop = source.get_token()]() {
    CallContext ctx;
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
    if (slot) slot->release();
    if (stop.stop_requested()) {
      self->finishCall(key);  // cancelled: no answer
      if (auto* batch = dynamic_cast<BatchOutbox*>(out.get())) batch->forget();
      return;
    }
    Json response;
    if (description.ok()) {
      Json result = {{"contents", Json::array({Json{{"uri", resource->uri},
                                                    {"mimeType", resource->mime_type},
                                                    {"text", serialize(*description)}}})}};
      response = makeResultResponse(id, self->finishResult(std::move(result), modern, true));
    } else {
      response = makeErrorResponse(id, rpc::kInternalError, errorText(description.error()));
    }
    self->finishCall(key);
    out->send(response);
  };
  if (waits) {
    auto ended = [self, id, key, out, bulkhead, timeout](WaitEnd end) {
      if (end == WaitEnd::Cancelled) {
        self->finishCall(key);
        if (auto* batch = dynamic_cast<BatchOutbox*>(out.get())) batch->forget();
        return;
      }
      self->finishAndSend(key, out,
                          serialize(makeErrorResponse(id, rpc::kInternalError,
                                                      waitEndText(end, *bulkhead, timeout))));
    };
    switch (waitForSlot(*bulkhead, deadline, source.get_token(), slot, job, ended)) {
      case SlotWait::Queued: return;
      case SlotWait::Now: break;
      case SlotWait::Full:
        finishCall(key);
        out->send(makeErrorResponse(id, rpc::kInternalError, sourceBusyText(*bulkhead)));
        return;
    }
  }
  if (!(dispatch_ ? dispatch_(job, false) : core_.pool().trySubmit(std::move(job)))) {
    if (slot) slot->release();
    finishCall(key);
    out->send(makeErrorResponse(id, rpc::kInternalError,
                                "the server is busy with other calls; retry in a moment"));
  }
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
    subscriptions_[key] = Subscription{id, out, nullptr};
  }
  // Nothing this server offers changes while it runs (the tool surface and the resources are
  // fixed at start-up), so it honours none of the notification types: the acknowledgment says so
  // with an empty filter, and the stream carries nothing more until it ends.
  out->send(makeNotification("notifications/subscriptions/acknowledged",
                             Json{{"_meta", {{std::string(meta_key::kSubscriptionId), id}}},
                                  {"notifications", Json::object()}}));
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
