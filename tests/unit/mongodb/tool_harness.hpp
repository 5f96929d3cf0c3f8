#pragma once
// Test harness: the MongoDB module configured from YAML, its tools registered, and calls made the
// way the session makes them (arguments validated against the input schema first).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "common/env.hpp"
#include "config/node.hpp"
#include "embed/embedder.hpp"
#include "engines/mongodb/module.hpp"
#include "protocol/schema.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::mongodb::testing {

// Maps known query texts to fixed vectors (hand-made fixtures); unknown texts fail.
class FixedEmbedder : public embed::Embedder {
 public:
  explicit FixedEmbedder(std::map<std::string, embed::Vector> table, std::size_t dim)
      : table_(std::move(table)), dim_(dim) {}
  Result<std::vector<embed::Vector>> embed(std::span<const std::string> texts) const override {
    std::vector<embed::Vector> out;
    for (const auto& t : texts) {
      auto it = table_.find(t);
      if (it == table_.end())
        return makeError(Code::InvalidArgument, "fixed embedder: unknown text");
      out.push_back(it->second);
    }
    return out;
  }
  std::size_t dimension() const override { return dim_; }
  const std::string& modelId() const override { return id_; }

 private:
  std::map<std::string, embed::Vector> table_;
  std::size_t dim_;
  std::string id_ = "fixed-test-embedder";
};

class ToolHarness {
 public:
  ToolHarness(const std::string& yaml, std::map<std::string, std::string, std::less<>> env_vars,
              Limits limits = Limits{}, std::shared_ptr<embed::Embedder> embedder = nullptr,
              std::string cursor_key = "unit-test-cursor-key")
      : env_(Env::fromMap(std::move(env_vars))), diag_("test.yaml"), module_(makeModule()) {
    YAML::Node root = YAML::Load(yaml);
    config::Node node(root, "", diag_);
    module_->configure(node.child("mongodb"), limits);
    services_.env = &env_;
    services_.defaults = limits;
    services_.cursor_key = std::move(cursor_key);
    services_.embedder = [embedder]() -> Result<std::shared_ptr<embed::Embedder>> {
      if (!embedder) return makeError(Code::FailedPrecondition, "no embedder in this test");
      return embedder;
    };
    if (diag_.ok()) status_ = module_->registerTools(registry_, services_);
  }

  bool ok() const { return diag_.ok() && status_.ok(); }
  const config::Diagnostics& diag() const { return diag_; }
  protocol::ToolRegistry& registry() { return registry_; }
  engines::EngineModule& module() { return *module_; }
  engines::EngineServices& services() { return services_; }
  // What the last call's handler put in the audit sink (also when it failed).
  const protocol::CallAudit& lastAudit() const { return last_audit_; }

  // Calls a tool like the session does; InvalidArgument for schema violations.
  Result<Json> call(const std::string& name, const Json& args,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10),
                    std::stop_token stop = {}) {
    const protocol::Tool* tool = registry_.find(name);
    if (tool == nullptr) return makeError(Code::NotFound, "no tool " + name);
    if (auto st = protocol::validateJson(tool->input_schema, args); !st) return st.error();
    protocol::CallContext ctx;
    ctx.stop = stop;
    ctx.deadline = std::chrono::steady_clock::now() + timeout;
    ctx.limits = tool->limits;
    auto r = tool->handler(args, ctx);
    last_audit_ = ctx.audit;
    if (!r) return r.error();
    return r->structured;
  }

 private:
  Env env_;
  config::Diagnostics diag_;
  engines::EngineModulePtr module_;
  engines::EngineServices services_;
  protocol::ToolRegistry registry_;
  Status status_;
  protocol::CallAudit last_audit_;
};

}  // namespace mcpdb::mongodb::testing
