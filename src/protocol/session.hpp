#pragma once
// The MCP server side of one connection: lifecycle, lists, tools/call, resources, logging,
// cancellation. Transports (stdio, HTTP) parse framing and hand messages to a Session; all replies
// go to an Outbox. Its definitions are split by concern:
//   session.cpp            messages in: validation, lifecycle, routing by era and method, drain
//   session_lists.cpp      tools/list, resources/list, resources/templates/list, prompts/*
//   session_dispatch.cpp   one path for requests that run on a worker: ids in flight,
//                          cancellation, the source's bulkhead, the pool
//   session_calls.cpp      tools/call: checks, then the call's steps on its worker
//   session_resources.cpp  resources/read and subscriptions/listen

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/json.hpp"
#include "protocol/answers.hpp"
#include "protocol/bulkhead.hpp"
#include "protocol/call_record.hpp"
#include "protocol/classify.hpp"
#include "protocol/era.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/outbox.hpp"
#include "protocol/resource.hpp"
#include "protocol/server_core.hpp"
#include "protocol/tool.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::protocol {

// The newest version served through initialize (legacy era; protocol/era.hpp).
inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";
// Newest first; initialize answers with the client's version when it is listed here.
inline const std::vector<std::string>& supportedProtocolVersions() {
  return legacyProtocolVersions();
}

// How long a client may cache a list, a discovery or a resource description (2026-07-28
// `ttlMs`): the tool surface is fixed after start-up, a key's scope changes only on reload, and
// a statement's columns only with the schema.
inline constexpr std::int64_t kCacheTtlMs = 60'000;
// At most this many open subscriptions/listen requests per session (stdio) or HTTP request.
inline constexpr std::size_t kMaxSubscriptions = 8;

// The version a legacy session runs at when the client asks for `requested`: that one when this
// server speaks it, else the newest (the initialize handshake's rule).
std::string negotiatedVersion(std::string_view requested);

// The text form of a JSON-RPC request id for logs: a string id as is (at most 64 bytes, then
// "..."), an integer in decimal, anything else empty.
std::string requestIdText(const Json& id);

// MCP logging levels, in order (RFC 5424 names as MCP uses them).
int logLevelRank(std::string_view level);  // -1 when unknown

class Session : public std::enable_shared_from_this<Session> {
 public:
  using ScopeFn = std::function<bool(const Tool&)>;

  Session(ServerCore& core, Principal principal, ScopeFn scope = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Parses one framed message and handles it.
  void handleText(std::string_view text, const std::shared_ptr<Outbox>& out);
  // Handles one message (or a batch, where the negotiated version allows it).
  void handle(const Json& message, const std::shared_ptr<Outbox>& out);
  // Handles a message (or a batch) its transport classified (protocol/classify.hpp, with
  // `classified` from that very message): a modern request's metadata is not checked again.
  void handleClassified(Json message, const Classified& classified,
                        const std::shared_ptr<Outbox>& out);
  // A session that serves one request on its own (HTTP's stateless mode): initialised at the
  // version the client names (negotiatedVersion), without an initialize request.
  void startStateless(std::string_view requested_version);

  // How a tools/call that passed admission runs: by default a job on the worker pool. A transport
  // may run it elsewhere (stdio runs it on the thread that read it, see stdio_transport.cpp; HTTP
  // a call that honours its waits on the I/O thread that read it, see call_fibers.hpp);
  // the function takes the job or returns false, which answers the call as busy. Set before
  // the first message. `honours_waits` is the tool's Tool::honours_waits: the job may be given
  // the runner's CallWaits (common/call_waits.hpp), which reach the call's context.
  using Dispatch = std::function<bool(CallJob& job, bool honours_waits)>;
  void setDispatch(Dispatch dispatch) { dispatch_ = std::move(dispatch); }

  // Sends a notifications/message to the client when it asked for this level (logging/setLevel).
  void log(std::string_view level, std::string_view logger, const Json& data);
  void setLogOutbox(std::shared_ptr<Outbox> out);

  // Where this session's unsolicited list-changed notifications go at 2025-11-25 (stdio's
  // stdout, an HTTP session's GET stream); none by default. Set before or after initialize.
  void setNotificationOutbox(std::shared_ptr<Outbox> out);
  // The transport can deliver unsolicited notifications to this session (stdio; an HTTP session
  // that may open a GET stream): initialize then declares tools and resources `listChanged`.
  // Set before the first message.
  void enableListChanged() { list_changed_ = true; }
  // The tool or resource list changed (a config reload): sends notifications/tools/list_changed
  // and/or notifications/resources/list_changed to the notification outbox (legacy) and to every
  // open subscriptions/listen stream that asked for them (2026-07-28). Thread-safe.
  void notifyListChanged(bool tools, bool resources);

  // Waits up to `grace` for in-flight calls, then cancels the rest and waits for them to end.
  void drain(std::chrono::milliseconds grace);
  // Cancels every in-flight call now and drops open subscriptions (no answer: they were
  // cancelled).
  void cancelAll();
  // Ends every open subscriptions/listen gracefully: each gets its completion result (2026-07-28
  // basic/patterns/subscriptions, "Graceful Closure"). drain() does it first.
  void closeSubscriptions();

  bool initialized() const { return initialized_.load(); }
  std::string protocolVersion() const;
  std::size_t inFlight() const;
  const Principal& principal() const { return principal_; }
  ServerCore& core() const { return core_; }

 private:
  using Clock = std::chrono::steady_clock;

  // ---- messages in (session.cpp)
  void handleOne(Json message, const Classified& classified, const std::shared_ptr<Outbox>& out);
  void handleRequest(const Json& id, const std::string& method, Json& params,
                     const std::shared_ptr<Outbox>& out);
  void handleNotification(const std::string& method, const Json& params);
  // A request carrying 2026-07-28 per-request metadata: served on its own, whatever the session.
  void handleModern(const Json& id, const std::string& method, Json& params,
                    const std::shared_ptr<Outbox>& out, const Classified& classified);
  // The methods both eras share, once the era is known (legacy: after initialize).
  void handleShared(const Json& id, const std::string& method, Json& params,
                    const std::shared_ptr<Outbox>& out, bool modern);
  Json initializeResult(const Json& params);
  Json discoverResult() const;
  // A result as the era wants it: at 2026-07-28 with resultType and the server's identity, and,
  // when `cacheable`, the caching hints (private when the answer depends on the client's key).
  Json finishResult(Json result, bool modern, bool cacheable) const;

  // ---- lists (session_lists.cpp)
  // The serialised tools/list result; empty for a bad cursor.
  std::string toolsPage(const Json& params, bool modern) const;
  void listTools(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                 bool modern) const;
  void listResources(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                     bool modern) const;
  void listTemplates(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                     bool modern) const;
  void listPrompts(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                   bool modern) const;
  bool visible(const Tool& tool) const { return !scope_ || scope_(tool); }
  // Against the registry of the surface the request started on.
  bool visible(const Resource& resource, const ToolRegistry& registry) const;
  bool visible(const ResourceTemplate& tmpl, const ToolRegistry& registry) const;

  // ---- requests that run on a worker (session_dispatch.cpp)
  // A checked tools/call or resources/read, its id registered in flight (startRequest).
  struct Job {
    Json id;
    std::string key;  // the id, serialised: its entry in in_flight_
    // Whose bulkhead it takes and whose timeout bounds its wait (null: none).
    const Tool* tool = nullptr;
    // The tool surface the request started on: held until the work ends (its tool, its runtime
    // and its bulkhead outlive a reload).
    std::shared_ptr<const ToolSurface> surface;
    bool honours_waits = false;  // the tool's Tool::honours_waits
    // The work, on a worker: its stop token, its source's slot (null: none; released by the
    // work), the deadline it had when it came, when it waited for the slot (else max()), and
    // what its runner offers it while it waits (null: nothing).
    std::function<void(const std::stop_token&, Bulkhead::Slot*, Clock::time_point, CallWaits*)> run;
    // The answer of a request that never ran (serialised; ignored for NotRun::Cancelled, which
    // has none); it also audits, where the request is audited.
    std::function<std::string(const Unrun&)> unrun;
  };
  // Registers a request id as in flight; false (and the error sent) when it already is.
  bool startRequest(const Json& id, const std::shared_ptr<Outbox>& out, std::stop_source& source);
  // Runs `job`: cancelled with `source` (notifications/cancelled, and when the outbox's reader
  // goes away), in its source's bulkhead (waiting for a slot when all are held), on the worker
  // pool or the transport's dispatch; answered by job.unrun when it never runs.
  void dispatch(Job job, std::stop_source source, const std::shared_ptr<Outbox>& out);
  // For a job that found its source's slots all held: `work` waits in the source's queue (moved
  // there) for a slot, put into `*slot`, then for a worker; `ended` answers the job when it never
  // runs. Now: a slot came free meanwhile (`work` kept, to dispatch as usual); Full: the queue is
  // full (`work` kept).
  enum class SlotWait { Now, Queued, Full };
  SlotWait waitForSlot(Bulkhead& bulkhead, Clock::time_point deadline, const std::stop_token& stop,
                       const std::shared_ptr<Bulkhead::Slot>& slot, CallJob& work,
                       const std::function<void(NotRun)>& ended);
  // Ends request `key` without an answer (cancelled).
  void endUnanswered(const std::string& key, const std::shared_ptr<Outbox>& out);
  // Ends request `key` with `line` as its answer, drain() waiting until it is written.
  void finishAndSend(const std::string& key, const std::shared_ptr<Outbox>& out, std::string line);
  void finishCall(const std::string& key);
  // From construction to destruction, request `key` is no longer in flight (its id free for
  // reuse) but its answer is being written: drain() waits for it.
  class Sending {
   public:
    Sending(Session& session, const std::string& key);
    ~Sending();
    Sending(const Sending&) = delete;
    Sending& operator=(const Sending&) = delete;

   private:
    Session& session_;
  };

  // ---- tools/call (session_calls.cpp)
  struct Call;
  void callTool(const Json& id, Json& params, const std::shared_ptr<Outbox>& out, bool modern);
  // `waits`: what the call's runner offers it while it waits (null: nothing).
  void runCall(const Call& call, const std::stop_token& stop, Bulkhead::Slot* slot,
               Clock::time_point deadline, CallWaits* waits);
  CallContext callContext(const Call& call, const std::stop_token& stop, Clock::time_point started,
                          Clock::time_point deadline, CallWaits* waits) const;
  Result<ToolOutput> invokeTool(const Call& call, CallContext& ctx) const;
  std::string callAnswer(const Call& call, const Result<ToolOutput>& result,
                         CallRecord& record) const;
  std::string callNotRunAnswer(const Json& id, bool modern, const Unrun& unrun, CallRecord record,
                               telemetry::Span* span) const;
  void endCancelledCall(const Call& call, CallRecord record);

  // ---- resources and subscriptions (session_resources.cpp)
  void readResource(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                    bool modern);
  void listen(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out);

  ServerCore& core_;
  Principal principal_;
  ScopeFn scope_;
  Dispatch dispatch_;
  std::atomic<bool> initialized_{false};
  std::atomic<int> log_rank_{-1};  // -1: the client has not asked for log messages

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::string protocol_version_;
  std::map<std::string, std::stop_source> in_flight_;  // key: the request id, serialised
  // Responses finished but still being written: drain() waits for them too, so the last answer
  // is never lost at EOF or shutdown (the id is free for reuse as soon as the call finished).
  std::size_t sending_ = 0;
  std::shared_ptr<Outbox> log_out_;
  // Open subscriptions/listen requests, by serialised id: where their stream goes, and the
  // callback that ends one when its stream's reader goes away (HTTP).
  struct Subscription {
    Json id;
    std::shared_ptr<Outbox> out;
    std::shared_ptr<void> on_gone;
    bool tools_changed = false;      // the client asked for toolsListChanged
    bool resources_changed = false;  // ... and for resourcesListChanged
  };
  bool list_changed_ = false;           // enableListChanged()
  std::shared_ptr<Outbox> notify_out_;  // setNotificationOutbox(), under mu_
  std::shared_ptr<void> notify_gone_;   // drops notify_out_ when its reader goes away
  std::map<std::string, Subscription> subscriptions_;
};

}  // namespace mcpdb::protocol
