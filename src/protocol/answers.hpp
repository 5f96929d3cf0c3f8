#pragma once
// What an agent reads: the text of a failed call, the refusals of a busy server or source, and
// the tools/call response assembled around its serialised result.

#include <chrono>
#include <string>
#include <string_view>

#include "common/fence.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "protocol/bulkhead.hpp"

namespace mcpdb::protocol {

// Agent-supplied strings echoed in errors are bounded so they cannot flood a log or a reply.
std::string bounded(const std::string& s, std::size_t max = 64);

// One place maps a failure Code to what the agent reads. All codes become a tool result with
// isError (the model can read and act on it); Cancelled produces no response at all (MCP
// cancellation rules), which the session handles before getting here.
std::string errorText(const Error& e);

// `{"content":[{"type":"text","text":...}],"isError":true}`.
Json toolErrorResult(const std::string& text);

// Why a request dispatched to a worker (tools/call, resources/read) never ran.
enum class NotRun {
  SourceFull,  // its source's slots were held and its queue full
  Busy,        // the worker pool refused it
  TimedOut,    // it waited for its source's slot until its deadline
  Cancelled,   // cancelled while it waited: no answer
  Closed,      // the server shut down while it waited
};
// The request that never ran: why, whether it had waited in its source's queue (and how long,
// from when it came), and the source's bulkhead (null for Busy when it never waited on one).
struct Unrun {
  NotRun why;
  bool waited = false;
  std::chrono::microseconds waited_for{0};
  const Bulkhead* bulkhead = nullptr;
  std::chrono::milliseconds timeout{0};  // the request's own, which bounded its wait
};
// What a tools/call that never ran reads (its isError text); the same for a resources/read that
// waited. Not for Cancelled.
std::string notRunText(const Unrun& unrun);

// The fencing that applies to a result: its own, else its tool's, else the server's.
Fence effectiveFence(Fence result, Fence tool, Fence server);

// A successful tools/call's response, assembled around its result serialised once (as the text
// content, escaped, fenced when asked, and as structuredContent) in the bytes serialize() would
// write for the same message.
struct CallSuccess {
  const Json& id;
  const std::string& structured;  // serialize(result)
  bool fenced = false;
  // 2026-07-28: also the server's identity (ServerCore::serverInfoMetaMember) and resultType.
  bool modern = false;
  std::string_view server_info_meta;
};
std::string callSuccessLine(const CallSuccess& call);

}  // namespace mcpdb::protocol
