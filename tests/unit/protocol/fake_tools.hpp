#pragma once
// Fake tools for protocol unit tests (no database): fast, failing, slow-until-cancelled.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>
#include <memory>
#include <thread>

#include "protocol/outbox.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::protocol::testing {

// An outbox that keeps every message a session sends, for tests to wait on and read.
class CollectingOutbox : public Outbox {
 public:
  void send(const Json& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(message);
    cv_.notify_all();
  }
  // Waits until at least `n` messages arrived (or 5 s).
  std::vector<Json> waitFor(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(5), [&] { return messages_.size() >= n; });
    return messages_;
  }
  std::vector<Json> snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Json> messages_;
};

inline std::shared_ptr<ToolRegistry> makeFakeRegistry(int extra_tools = 0) {
  auto reg = std::make_shared<ToolRegistry>();
  Tool echo;
  echo.name = "echo_length";
  echo.title = "Echo length";
  echo.description = "Returns the length of `text`.";
  echo.engine = "fake";
  echo.input_schema = {{"type", "object"},
                       {"properties",
                        {{"text", {{"type", "string"}, {"maxLength", 10}}},
                         {"k", {{"type", "integer"}, {"minimum", 1}, {"maximum", 20}}}}},
                       {"required", {"text"}},
                       {"additionalProperties", false}};
  echo.output_schema = {{"type", "object"}, {"properties", {{"length", {{"type", "integer"}}}}}};
  echo.handler = [](const Json& args, CallContext&) -> Result<ToolOutput> {
    ToolOutput out{Json{{"length", args["text"].get<std::string>().size()}}, 1};
    out.free_text = false;  // a number: nothing to fence under Fence::Auto
    return out;
  };
  (void)reg->add(echo);

  Tool fail = echo;
  fail.name = "always_fails";
  fail.input_schema = {
      {"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}};
  fail.handler = [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    // What an engine reports through its call context reaches the audit line, also on failure.
    ctx.audit.source = "primary";
    ctx.audit.truncated = true;
    return makeError(Code::Unavailable, "database unreachable");
  };
  (void)reg->add(fail);

  Tool slow = fail;
  slow.name = "slow";
  slow.handler = [](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    ctx.progress(1, 2, "halfway");
    for (int i = 0; i < 500 && !ctx.stop.stop_requested(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (ctx.stop.stop_requested()) return makeError(Code::Cancelled, "cancelled");
    return ToolOutput{Json{{"done", true}}, 0};
  };
  (void)reg->add(slow);

  Tool throws = fail;
  throws.name = "throws";
  throws.handler = [](const Json&, CallContext&) -> Result<ToolOutput> {
    throw std::runtime_error("secret-detail");
  };
  (void)reg->add(throws);

  for (int i = 0; i < extra_tools; ++i) {
    Tool t = fail;
    t.name = "extra_" + std::to_string(i);
    (void)reg->add(t);
  }

  // A description of echo_length, and one of `slow` that is never readable (its reader fails).
  Resource echo_schema;
  echo_schema.uri = "mcpdb://fake/tools/echo_length";
  echo_schema.name = "echo_length";
  echo_schema.title = "echo_length: parameters and result";
  echo_schema.engine = "fake";
  echo_schema.tools = {"echo_length"};
  echo_schema.read = [](CallContext&) -> Result<Json> {
    return Json{{"tool", "echo_length"}, {"parameters", {{"text", "string"}}}};
  };
  (void)reg->addResource(echo_schema);
  Resource broken = echo_schema;
  broken.uri = "mcpdb://fake/tools/slow";
  broken.name = "slow";
  broken.tools = {"slow"};
  broken.read = [](CallContext&) -> Result<Json> {
    return makeError(Code::FailedPrecondition, "the statement is refused by the proof");
  };
  (void)reg->addResource(broken);
  (void)reg->addTemplate(ResourceTemplate{"mcpdb://fake/tools/{name}", "fake-tool",
                                          "A fake tool's parameters and result", "",
                                          "application/json", "fake"});
  return reg;
}

}  // namespace mcpdb::protocol::testing
