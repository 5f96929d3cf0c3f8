#pragma once
// The MySQL engine module as the server assembles it, for the engine-level integration tests:
// configured from YAML text, tools (and resources) registered against the process environment,
// then called or read as the session would.

#include <chrono>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "engines/mysql/module.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::mysql::itest {

struct ConfiguredEngine {
  engines::EngineModulePtr module = makeModule();
  protocol::ToolRegistry registry;
  Env env = Env::process();
  engines::EngineServices services;
  std::vector<std::string> errors;  // config problems, then a registration error

  explicit ConfiguredEngine(const std::string& yaml) {
    config::Diagnostics diag("engine_test.yaml");
    config::Config cfg = config::parseConfig(yaml, "engine_test.yaml", {"mysql"}, diag);
    if (diag.ok()) {
      config::Node root(cfg.root, "", diag);
      module->configure(root.child("mysql"), cfg.limits);
    }
    errors = diag.errors();
    services.env = &env;
    services.defaults = cfg.limits;
    if (errors.empty()) {
      if (auto st = module->registerTools(registry, services); !st)
        errors.push_back(st.error().message);
    }
  }

  // Calls a tool as the session does (its limits, a deadline `budget` from now); `audit` receives
  // what the handler put in the call's audit sink.
  Result<protocol::ToolOutput> call(const std::string& tool, const Json& args,
                                    std::chrono::milliseconds budget = std::chrono::seconds(30),
                                    protocol::CallAudit* audit = nullptr) {
    const protocol::Tool* t = registry.find(tool);
    if (t == nullptr) return makeError(Code::NotFound, "no tool " + tool);
    protocol::CallContext ctx;
    ctx.limits = t->limits;
    ctx.deadline = std::chrono::steady_clock::now() + budget;
    auto out = t->handler(args, ctx);
    if (audit != nullptr) *audit = ctx.audit;
    return out;
  }

  // Reads a resource as the session does.
  Result<Json> read(const std::string& uri) {
    const protocol::Resource* r = registry.findResource(uri);
    if (r == nullptr) return makeError(Code::NotFound, "no resource " + uri);
    protocol::CallContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    return r->read(ctx);
  }
};

}  // namespace mcpdb::mysql::itest
