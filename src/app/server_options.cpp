#include "app/server_options.hpp"

#include <spdlog/spdlog.h>

#include <string>

namespace mcpdb::app {
namespace {

std::string instructionsFor(const Assembly& a) {
  std::string engines;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    if (a.enabled[i]) engines += (engines.empty() ? "" : ", ") + std::string(a.modules[i]->name());
  }
  if (engines.empty()) engines = "none";
  return "Read-only access to operator-approved database operations (engines: " + engines +
         "). Every tool is a fixed, named operation with typed arguments; there is no way to run "
         "arbitrary queries or change data. Results are capped in rows and bytes; when a result "
         "says "
         "truncated, narrow the request or use the returned cursor.";
}

}  // namespace

protocol::ServerOptions serverOptionsFor(const Assembly& a, const AppOptions& options) {
  protocol::ServerOptions so;
  so.version = options.version;
  so.instructions = instructionsFor(a);
  so.page_size = a.config.server.page_size;
  so.workers = a.config.server.workers;
  so.max_queue = a.config.server.max_queue;
  so.calls_per_source = a.config.server.max_calls_per_source;
  so.calls_by_source = a.config.server.max_calls_by_source;
  so.parse.max_bytes = a.config.server.max_message_bytes;
  so.max_result_memory = a.config.server.max_result_memory;
  so.fence = a.config.server.fence;
  return so;
}

std::shared_ptr<observe::AuditLog> openAudit(const Assembly& a) {
  if (!a.audit.enabled) return nullptr;
  auto log = observe::AuditLog::open(a.audit);
  if (!log) {
    spdlog::error("audit: {}", log.error().message);
    return nullptr;
  }
  return *log;
}

}  // namespace mcpdb::app
