// A test-only server: the real HTTP transport, auth, audit and metrics over a ServerCore whose
// tools are fakes tagged with engine names, so transport tests need no database.
// Usage: mcpdb_http_test_server --config FILE --listen ADDR:PORT [--allow-insecure-http]
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "common/cursor.hpp"
#include "config/config.hpp"
#include "observe/audit_log.hpp"
#include "observe/metrics.hpp"
#include "protocol/session.hpp"
#include "protocol/tool_registry.hpp"
#include "transport/http/serve.hpp"

using namespace mcpdb;

namespace {

protocol::Tool fakeTool(std::string name, std::string engine) {
  protocol::Tool t;
  t.name = std::move(name);
  t.title = t.name;
  t.description = "A fake " + engine + " tool for transport tests.";
  t.engine = std::move(engine);
  t.input_schema = {{"type", "object"},
                    {"properties",
                     {{"email", {{"type", "string"}, {"maxLength", 200}}},
                      {"ms", {{"type", "integer"}, {"minimum", 0}, {"maximum", 5000}}}}},
                    {"additionalProperties", false}};
  t.output_schema = {{"type", "object"}};
  return t;
}

std::shared_ptr<protocol::ToolRegistry> fakeRegistry() {
  auto reg = std::make_shared<protocol::ToolRegistry>();
  auto lookup = fakeTool("pg_lookup", "postgres");
  lookup.handler = [](const Json&, protocol::CallContext&) -> Result<protocol::ToolOutput> {
    // The row value is a marker the tests look for in logs (it must never appear there).
    return protocol::ToolOutput{
        Json{{"rows", Json::array({Json{{"name", "ROWVALUE-zq81-private"}}})}}, 1};
  };
  (void)reg->add(lookup);
  auto slow = fakeTool("pg_slow", "postgres");
  slow.handler = [](const Json& args, protocol::CallContext& ctx) -> Result<protocol::ToolOutput> {
    const int ms = args.value("ms", 300);
    ctx.progress(0, 2, "started");
    for (int waited = 0; waited < ms && !ctx.stop.stop_requested(); waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (ctx.stop.stop_requested()) return makeError(Code::Cancelled, "cancelled");
    ctx.progress(1, 2, "halfway");
    return protocol::ToolOutput{Json{{"slept_ms", ms}}, 0};
  };
  (void)reg->add(slow);
  // An answer larger than a socket buffer takes at once (`kb` KiB of text, twice in the answer).
  // Tagged with an engine the tool-list tests' clients do not see.
  auto big = fakeTool("ddb_big", "dynamodb");
  big.input_schema = {
      {"type", "object"},
      {"properties", {{"kb", {{"type", "integer"}, {"minimum", 0}, {"maximum", 16384}}}}},
      {"additionalProperties", false}};
  big.handler = [](const Json& args, protocol::CallContext&) -> Result<protocol::ToolOutput> {
    const auto kb = static_cast<std::size_t>(args.value("kb", 1));
    return protocol::ToolOutput{Json{{"text", std::string(kb * 1024, 'b')}}, 1};
  };
  (void)reg->add(big);
  // Pages through a fake table with signed cursors bound to the calling client, as the DynamoDB
  // scan and MongoDB list tools do (the key is a test constant, 32 bytes).
  auto page = fakeTool("ddb_page", "dynamodb");
  page.input_schema = {{"type", "object"},
                       {"properties", {{"cursor", {{"type", "string"}, {"maxLength", 4096}}}}},
                       {"additionalProperties", false}};
  auto codec = std::make_shared<const CursorCodec>("test-cursor-key-0123456789abcdefghij");
  page.handler = [codec](const Json& args,
                         protocol::CallContext& ctx) -> Result<protocol::ToolOutput> {
    const std::string context = clientCursorContext("dynamodb:ddb_page:t", ctx.principal.client_id);
    std::int64_t at = 0;
    if (args.contains("cursor")) {
      auto pos = codec->decode(context, args["cursor"].get<std::string>());
      if (!pos) return makeError(Code::InvalidArgument, "arguments.cursor: " + pos.error().message);
      at = pos->value("at", std::int64_t{0});
    }
    return protocol::ToolOutput{
        Json{{"page", at}, {"next_cursor", codec->encode(context, Json{{"at", at + 1}})}}, 1};
  };
  (void)reg->add(page);
  auto count = fakeTool("mongo_count", "mongodb");
  count.handler = [](const Json&, protocol::CallContext&) -> Result<protocol::ToolOutput> {
    return protocol::ToolOutput{Json{{"count", 42}}, 1};
  };
  (void)reg->add(count);
  return reg;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::string listen = "127.0.0.1:0";
  bool insecure = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      config_path = argv[++i];
    } else if (std::strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
      listen = argv[++i];
    } else if (std::strcmp(argv[i], "--allow-insecure-http") == 0) {
      insecure = true;
    } else {
      std::cerr << "usage: mcpdb_http_test_server --config FILE --listen ADDR:PORT "
                   "[--allow-insecure-http]\n";
      return 2;
    }
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  const std::vector<std::string> sections = {"http", "audit"};
  config::Diagnostics diag(config_path);
  config::Config cfg = config::loadConfigFile(config_path, sections, diag);
  transport::http::ServeParams p;
  observe::AuditSettings audit;
  if (diag.ok()) {
    config::Node root(cfg.root, "", diag);
    transport::http::parseHttpSettings(root.child("http"), p.settings);
    observe::parseAuditSettings(root.child("audit"), audit);
  }
  auto addr = transport::http::parseListenAddress(listen);
  if (!diag.ok() || !addr) {
    for (const auto& e : diag.errors()) std::cerr << e << "\n";
    return 3;
  }
  protocol::ServerOptions so;
  so.workers = 4;
  protocol::ServerCore core(so, fakeRegistry());
  p.listen = *addr;
  p.allow_insecure_http = insecure;
  p.drain = std::chrono::milliseconds(3000);
  if (audit.enabled) {
    auto log = observe::AuditLog::open(audit);
    if (!log) {
      std::cerr << log.error().message << "\n";
      return 3;
    }
    p.audit = *log;
    core.addObserver(p.audit);
  }
  p.metrics = std::make_shared<observe::Metrics>();
  core.addObserver(p.metrics);
  p.reload = [config_path, sections] {
    return transport::http::reloadAuthFromFile(config_path, sections);
  };
  return transport::http::serveHttp(core, std::move(p));
}
