// `invoke TOOL --args JSON`: one tool call from the command line, through the same path as an
// agent's (an MCP session over an in-memory outbox: argument validation, scope, the read-only
// proof, limits, the audit line), so what it prints is what an agent would get.
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>

#include "app/app.hpp"
#include "app/checks.hpp"
#include "app/logging.hpp"
#include "app/server_options.hpp"
#include "protocol/session.hpp"

namespace mcpdb::app {
namespace {

// Keeps the answer to one request id; the session's other messages (initialize's answer,
// notifications) are dropped.
class AnswerOutbox final : public protocol::Outbox {
 public:
  explicit AnswerOutbox(Json id) : id_(std::move(id)) {}
  void send(const Json& message) override {
    if (!message.is_object() || message.value("id", Json()) != id_) return;
    std::lock_guard<std::mutex> lock(mu_);
    answer_ = message;
    cv_.notify_all();
  }
  std::optional<Json> wait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return answer_.has_value(); });
    return answer_;
  }

 private:
  Json id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Json> answer_;
};

// The outcome the session recorded for the call (the audit line's `outcome`).
class OutcomeObserver final : public protocol::CallObserver {
 public:
  void onCall(const protocol::CallRecord& record) override {
    std::lock_guard<std::mutex> lock(mu_);
    outcome_ = record.outcome;
  }
  std::string outcome() {
    std::lock_guard<std::mutex> lock(mu_);
    return outcome_;
  }

 private:
  std::mutex mu_;
  std::string outcome_;
};

// Outcomes of a call refused before its tool ran; any other failure is the tool's own error.
bool refusedBeforeTheToolRan(std::string_view outcome) {
  return outcome == "unknown_tool" || outcome == "out_of_scope" || outcome == "invalid_arguments";
}

std::string requestLine(int id, std::string_view method, Json params) {
  Json r = {{"jsonrpc", "2.0"}, {"method", std::string(method)}, {"params", std::move(params)}};
  if (id != 0) r["id"] = id;
  return r.dump();
}

std::string textOf(const Json& result) {
  std::string text;
  for (const auto& c : result.value("content", Json::array())) {
    if (c.value("type", "") == "text") text += (text.empty() ? "" : "\n") + c.value("text", "");
  }
  return text;
}

// What the call returned, for a person: the structured result as indented JSON when there is
// one, else the text content.
void printResult(std::ostream& out, const Json& result) {
  if (result.contains("structuredContent")) {
    out << result["structuredContent"].dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return;
  }
  out << textOf(result) << "\n";
}

}  // namespace

int runInvoke(const AppOptions& options, const Env& env, const InvokeOptions& invoke,
              std::ostream& out, std::ostream& err) {
  Json args;
  try {
    args = invoke.args_json.empty() ? Json::object() : Json::parse(invoke.args_json);
  } catch (const Json::parse_error&) {
    err << "invoke: --args is not JSON (write an object, e.g. '{\"id\": \"doc-01\"}')\n";
    return kExitUsage;
  }
  if (!args.is_object()) {
    err << "invoke: --args must be a JSON object of the tool's arguments, e.g. '{\"id\": 1}'\n";
    return kExitUsage;
  }
  setupLogging(env);
  auto a = assemble(options, env, /*all_engines=*/false, err);
  if (!a) return kExitConfig;
  if (refuseUnservable(*a, env, "invoke: refused", err)) return kExitConfig;
  for (const auto& w : a->warnings) spdlog::warn("config: {}", w);
  // As `serve` with self_check: refuse: a principal that can write runs nothing. (The `warn`
  // mode's check runs in the background of a server; one call does not wait for it.)
  if (a->config.server.self_check == config::SelfCheckMode::Refuse &&
      verdictOf(checkEngines(*a, /*check_tools=*/false)) != Verdict::ProvedReadOnly) {
    err << "invoke: refused: the self-check could not prove the credentials read-only "
           "(server.self_check: refuse); run doctor for the findings\n";
    return kExitSelfCheck;
  }
  const protocol::Tool* tool = a->registry->find(invoke.tool);
  const std::chrono::milliseconds wait =
      (tool != nullptr ? tool->limits.timeout : a->config.limits.timeout) +
      std::chrono::milliseconds(a->config.server.drain_ms) + std::chrono::seconds(5);

  protocol::ServerCore core(serverOptionsFor(*a, options), a->registry);
  if (auto audit = openAudit(*a)) core.addObserver(audit);
  auto observed = std::make_shared<OutcomeObserver>();
  core.addObserver(observed);
  auto session = std::make_shared<protocol::Session>(core, protocol::Principal{"cli"});
  auto outbox = std::make_shared<AnswerOutbox>(Json(2));
  session->handleText(
      requestLine(
          1, "initialize",
          {{"protocolVersion", "2025-11-25"},
           {"capabilities", Json::object()},
           {"clientInfo", {{"name", "mcp-dbserver invoke"}, {"version", options.version}}}}),
      outbox);
  session->handleText(requestLine(0, "notifications/initialized", Json::object()), outbox);
  session->handleText(
      requestLine(2, "tools/call", {{"name", invoke.tool}, {"arguments", std::move(args)}}),
      outbox);
  const std::optional<Json> answer = outbox->wait(wait);
  session->drain(std::chrono::milliseconds(a->config.server.drain_ms));
  core.pool().shutdown();

  if (!answer) {
    err << "invoke: no answer within " << wait.count() << " ms\n";
    return kExitRuntime;
  }
  if (answer->contains("error") || refusedBeforeTheToolRan(observed->outcome())) {
    // Refused before the tool ran: unknown tool, arguments its schema rejects, a limit.
    const std::string why = answer->contains("error") ? (*answer)["error"].value("message", "")
                                                      : textOf((*answer)["result"]);
    err << "invoke: " << invoke.tool << ": refused: " << why << "\n";
    if (invoke.json) out << answer->dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return kExitCallRefused;
  }
  const Json& result = (*answer)["result"];
  if (invoke.json) {
    out << result.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else if (!result.value("isError", false)) {
    printResult(out, result);
  }
  if (result.value("isError", false)) {
    err << "invoke: " << invoke.tool << ": the tool reported an error: " << textOf(result) << "\n";
    return kExitToolError;
  }
  return kExitOk;
}

}  // namespace mcpdb::app
