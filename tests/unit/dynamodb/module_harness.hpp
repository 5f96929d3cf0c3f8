#pragma once
// The DynamoDB module as the application sets it up (config section, services, registered tools)
// against fake servers, and a tool call as the session makes it (arguments validated, the tool's
// limits, the call's audit sink kept). Shared by the unit tests of tools, resources and sources.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "engines/dynamodb/module.hpp"
#include "protocol/schema.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::dynamodb {

class ModuleHarness {
 protected:
  // Configures the module from `yaml` (named `file` in messages) and registers its tools; the
  // fixture's ASSERTs stop it when the config is refused.
  void setUpModule(const char* yaml, const std::string& file, Env env) {
    env_ = std::make_unique<Env>(std::move(env));
    BackendOptions bo;
    bo.retry.base = std::chrono::milliseconds(1);
    module_ = makeModule(bo);
    config::Diagnostics diag(file);
    cfg_ = config::parseConfig(yaml, file, {"dynamodb"}, diag);
    ASSERT_TRUE(diag.ok()) << diag.errors()[0];
    module_->configure(config::Node(cfg_.root, "", diag).child("dynamodb"), cfg_.limits);
    ASSERT_TRUE(diag.ok()) << diag.errors()[0];
    services_.env = env_.get();
    services_.defaults = cfg_.limits;
    services_.cursor_key = "test-cursor-key";
    ASSERT_TRUE(module_->registerTools(registry_, services_).ok());
  }

  // `preset_source` is in the audit sink before the handler runs (to see that it is replaced).
  Result<protocol::ToolOutput> call(const std::string& tool, const Json& args,
                                    const std::string& preset_source = "") {
    const protocol::Tool* t = registry_.find(tool);
    EXPECT_NE(t, nullptr);
    if (t == nullptr) return makeError(Code::NotFound, "no tool");
    auto st = protocol::validateJson(t->input_schema, args);
    if (!st) return st.error();
    protocol::CallContext ctx;
    ctx.limits = t->limits;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    ctx.audit.source = preset_source;
    auto r = t->handler(args, ctx);
    audit_ = ctx.audit;
    return r;
  }

  std::unique_ptr<Env> env_;
  engines::EngineModulePtr module_;
  config::Config cfg_;
  engines::EngineServices services_;
  protocol::ToolRegistry registry_;
  protocol::CallAudit audit_;  // the last call's audit sink
};

}  // namespace mcpdb::dynamodb
