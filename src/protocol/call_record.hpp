#pragma once
// What the audit log and the metrics learn of one tool call.

#include <chrono>
#include <cstdint>
#include <string>

namespace mcpdb::protocol {

// One finished (or refused) tool call. Never holds argument values or result rows. Built by field
// name; every member has a default so that a record names only what it knows.
struct CallRecord {
  std::string client_id = {};
  std::string tool = {};
  std::string engine = {};
  std::string outcome =
      {};  // "ok", a Code name, "cancelled", "unknown_tool", "invalid_arguments",
           // "busy", or a transport's refusal ("rate_limited", "concurrency_limited")
  std::chrono::microseconds duration{0};
  std::uint64_t rows = 0;
  std::uint64_t bytes = 0;
  // The JSON-RPC id of the tools/call as text (a string id as is, bounded; an integer in
  // decimal), so an audit line can be matched to the client's request.
  std::string request_id = {};
  // What the engine reported through the call context (CallAudit).
  std::string source = {};
  bool truncated = false;
};

class CallObserver {
 public:
  virtual ~CallObserver() = default;
  virtual void onCall(const CallRecord& record) = 0;
};

}  // namespace mcpdb::protocol
