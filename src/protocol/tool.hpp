#pragma once
// What an engine hands the tool registry: a named, typed, read-only operation.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "common/call_waits.hpp"
#include "common/fence.hpp"
#include "common/json.hpp"
#include "common/limits.hpp"
#include "common/result.hpp"

namespace mcpdb::telemetry {
class Span;
}  // namespace mcpdb::telemetry

namespace mcpdb::protocol {

// Who is calling: "stdio" for the local process, an API key's name over HTTP.
struct Principal {
  std::string client_id = "stdio";
};

// What an engine adds to its call's audit line and metrics (the call context's audit sink). Only
// facts from the configuration or about the call's shape: never an argument value, a row or a
// credential. Filled while the call runs, read when it finishes, also when it failed.
struct CallAudit {
  std::string source;      // the named source the call read (its engine's `sources:` key)
  bool truncated = false;  // a row, byte or item cap cut the result short
};

// Per-call context handed to a tool handler. Handlers must honour `stop` (cancellation or
// shutdown) and `deadline`, and must never throw.
struct CallContext {
  std::stop_token stop;
  std::chrono::steady_clock::time_point deadline;
  Limits limits;
  Principal principal;
  // The call's audit sink (see CallAudit).
  CallAudit audit;
  // The deadline of work bounded by `l`: its timeout from now, never past the call's own deadline
  // (when one is set). The one place a deadline is derived from limits.
  std::chrono::steady_clock::time_point deadlineFor(const Limits& l) const {
    const auto by_timeout = std::chrono::steady_clock::now() + l.timeout;
    if (deadline == std::chrono::steady_clock::time_point{}) return by_timeout;
    return std::min(deadline, by_timeout);
  }
  // What the call owes its runner while it waits (common/call_waits.hpp): set only when the
  // runner offers it and the tool honours it (Tool::honours_waits); null otherwise.
  CallWaits* waits = nullptr;
  // The call's span when the call is traced (telemetry/span.hpp), else null: an engine puts a
  // telemetry::ChildSpan of it around each database round trip (a null test when untraced).
  telemetry::Span* span = nullptr;
  // Reports progress when the client sent a progress token; a no-op otherwise.
  std::function<void(double progress, std::optional<double> total, const std::string& message)>
      progress = [](double, std::optional<double>, const std::string&) {};
};

// A successful tool result: `structured` becomes structuredContent (and the text content).
struct ToolOutput {
  Json structured;
  std::uint64_t rows = 0;  // rows/items/documents returned, for the audit log and metrics
  // Whether the result can carry free text from the database (a text-like column, a document):
  // what Fence::Auto fences. An engine that cannot tell leaves it true.
  bool free_text = true;
  // The fencing this result asks for (a DynamoDB or MongoDB target's `fence:`); Inherit takes the
  // tool's, then the server's.
  Fence fence = Fence::Inherit;
};

using ToolHandler = std::function<Result<ToolOutput>(const Json& arguments, CallContext& ctx)>;

struct Tool {
  std::string name;         // unique; MCP tool-name rules (1-128 of [A-Za-z0-9_.-])
  std::string title;        // short human title
  std::string description;  // written for an LLM: what it returns, when to use it, its bounds
  std::string engine;       // "postgres", "dynamodb", "mongodb", ...
  // The named source its calls read (its engine's `sources:` key), whose bulkhead it takes
  // (protocol/bulkhead.hpp); empty when a call's arguments pick the source (a DynamoDB or MongoDB
  // target): such tools share one bulkhead for their whole engine.
  std::string source;
  Json input_schema;   // JSON Schema (object); arguments are validated against it first
  Json output_schema;  // JSON Schema of structuredContent
  Limits limits;       // effective limits for this tool
  ToolHandler handler;
  // The handler honours CallContext::waits (common/call_waits.hpp): it watches their descriptors
  // while it sleeps and hands on before blocking otherwise, so a runner with other work of its
  // own (a stdio reader) may run it without passing that work on first.
  bool honours_waits = false;
  // Whether its text content is fenced as untrusted data (common/fence.hpp); Inherit takes the
  // server's setting.
  Fence fence = Fence::Inherit;
};

}  // namespace mcpdb::protocol
