#pragma once
// The MCP server side of one connection: lifecycle, tools/list, tools/call, logging, cancellation.
// Transports (stdio, HTTP) parse framing and hand messages to a Session; all replies go to an
// Outbox.

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

#include "common/memory_budget.hpp"
#include "common/json.hpp"
#include "protocol/bulkhead.hpp"
#include "protocol/era.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/resource.hpp"
#include "protocol/tool.hpp"
#include "protocol/tool_registry.hpp"
#include "protocol/worker_pool.hpp"

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

// Where a session's responses and notifications go. Implementations must be thread-safe.
class Outbox {
 public:
  virtual ~Outbox() = default;
  virtual void send(const Json& message) = 0;
  // One message already serialised as serialize() writes it (compact, one line), moved through
  // so that nothing dumps it a second time. `response`: it answers a request (a response or a
  // batch of them) rather than being a notification. Transports override this to write the bytes
  // as they are; the default parses them back for outboxes that keep Json (tests).
  virtual void sendSerialized(std::string text, bool response);

  // A transport's refusal of one tools/call (its per-client limits): the audit outcome and the
  // message of the JSON-RPC error (kLimitExceeded) that answers the call.
  struct CallRefusal {
    std::string outcome;
    std::string message;
  };
  // Asked once for every tools/call about to be dispatched through this outbox, in the order the
  // calls came: nullopt lets it run. So limits count calls, not requests (a batch holds many).
  virtual std::optional<CallRefusal> admitCall() { return std::nullopt; }
  // Stops when nobody waits for these answers any more (HTTP: the connection closed): every call
  // started through this outbox is then cancelled, down to the database.
  virtual std::stop_token gone() const { return {}; }
};

// The JSON-RPC error code of a call refused by a transport limit (rate or concurrency); the same
// code the HTTP transport's 429 bodies carry.
inline constexpr int kLimitExceeded = -32000;

// One finished (or refused) tool call, for the audit log and metrics. Never holds argument values
// or result rows.
struct CallRecord {
  std::string client_id;
  std::string tool;
  std::string engine;
  std::string outcome;  // "ok", a Code name, "cancelled", "unknown_tool", "invalid_arguments",
                        // "busy", or a transport's refusal ("rate_limited", "concurrency_limited")
  std::chrono::microseconds duration{0};
  std::uint64_t rows = 0;
  std::uint64_t bytes = 0;
  // The JSON-RPC id of the tools/call as text (a string id as is, bounded; an integer in
  // decimal), so an audit line can be matched to the client's request.
  std::string request_id;
  // What the engine reported through the call context (CallAudit).
  std::string source = {};
  bool truncated = false;
};

// Whether a session answers `message` (one element of a batch, or a message alone): a non-object
// always (one error, id null); an object only when it has an `id` and is not a client's response.
// Notifications, valid or not, are never answered (JSON-RPC 2.0). The one rule for counting a
// batch's answers, answering, and a transport deciding whether a POST waits for an answer.
bool getsAnswer(const Json& message);
// A tools/call request with a usable id (a string or an integer): one call that may run.
bool isToolCall(const Json& message);

// The text form of a JSON-RPC request id for logs: a string id as is (at most 64 bytes, then
// "..."), an integer in decimal, anything else empty.
std::string requestIdText(const Json& id);

class CallObserver {
 public:
  virtual ~CallObserver() = default;
  virtual void onCall(const CallRecord& record) = 0;
};

struct ServerOptions {
  std::string name = "mcp-dbserver";
  std::string version = "0.0.0";
  std::string instructions;
  std::size_t page_size = 50;  // tools per tools/list page
  std::size_t workers = 8;     // concurrent tool calls
  std::size_t max_queue = 64;  // queued calls beyond the workers before "busy"
  // Calls one source may have running at once (its bulkhead, protocol/bulkhead.hpp); more wait
  // for a slot, up to kWaitingPerSlot times as many. 0: three quarters of the workers (at least
  // 1), or no bulkhead when the tools read one source only. `calls_by_source` overrides it for a
  // source named "<engine>/<source>" ("<engine>/*": the tools of an engine whose arguments pick
  // the source).
  std::size_t calls_per_source = 0;
  std::map<std::string, std::size_t, std::less<>> calls_by_source;
  // Memory for results in flight, over all sessions (server.max_result_memory): each call reserves
  // kResultCopies times its byte cap while it runs and its answer is written.
  std::uint64_t max_result_memory = std::uint64_t{512} << 20;
  // Untrusted-data fencing of tools without a setting of their own (server.fence).
  Fence fence = Fence::Auto;
  ParseLimits parse;
};

// How many calls may wait for a source's slot, per slot of its share: enough for an agent's burst
// to a source slow for a moment, few enough that a hung source's queue stays small (each waiter
// holds its request, no worker).
inline constexpr std::size_t kWaitingPerSlot = 4;

// What one call's result may cost in memory, in multiples of its byte cap: the rows as a JSON
// tree, their serialised text, and the response line that carries the text twice.
inline constexpr std::uint64_t kResultCopies = 5;

// State shared by all sessions of one server process.
class ServerCore {
 public:
  ServerCore(ServerOptions options, std::shared_ptr<const ToolRegistry> registry);
  ~ServerCore();
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;

  const ServerOptions& options() const { return options_; }
  const ToolRegistry& registry() const { return *registry_; }
  WorkerPool& pool() { return pool_; }
  // The bulkhead of the source `tool` reads; nullptr for a tool not in the registry, and when the
  // server reads one source only without a size set for it (nothing to keep apart).
  Bulkhead* bulkheadFor(const Tool& tool) const;
  // Every source's bulkhead (metrics, tests).
  const std::vector<std::unique_ptr<Bulkhead>>& bulkheads() const { return bulkheads_; }
  MemoryBudget& resultMemory() { return result_memory_; }
  void addObserver(std::shared_ptr<CallObserver> observer) {
    observers_.push_back(std::move(observer));
  }
  void notify(const CallRecord& record) const;
  // The serialised tools/list result page starting at `start` for sessions that see every tool
  // (the registry never changes after start-up), in the legacy or the modern shape; `make` fills
  // the cache on first use.
  std::string unscopedToolsPage(std::size_t start, bool modern,
                                const std::function<std::string()>& make);
  // `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}` without braces around it: what every
  // modern result carries, serialised once.
  const std::string& serverInfoMetaMember() const { return server_info_meta_; }

 private:
  ServerOptions options_;
  std::mutex pages_mu_;
  std::map<std::pair<std::size_t, bool>, std::string> pages_;
  void makeBulkheads();
  std::size_t callsFor(const std::string& key, std::size_t sources) const;

  std::string server_info_meta_;
  std::shared_ptr<const ToolRegistry> registry_;
  std::vector<std::shared_ptr<CallObserver>> observers_;
  MemoryBudget result_memory_;
  // Answers calls waiting for a slot when their deadline passes; only when there are bulkheads.
  // Declared before them: it outlives them.
  std::unique_ptr<WaitTimer> wait_timer_;
  std::vector<std::unique_ptr<Bulkhead>> bulkheads_;
  std::unordered_map<const Tool*, Bulkhead*> bulkhead_of_;
  WorkerPool pool_;
};

// The key of the bulkhead `tool` takes: "<engine>/<source>", or "<engine>/*" without a source.
std::string bulkheadKey(const Tool& tool);

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

  // How a tools/call that passed admission runs: by default a job on the worker pool. A transport
  // may run it elsewhere (stdio runs it on the thread that read it, see stdio_transport.cpp);
  // the function takes the job or returns false, which answers the call as busy. Set before
  // the first message. `watches_input` is the tool's Tool::watches_input.
  using Dispatch = std::function<bool(std::function<void()>& job, bool watches_input)>;
  void setDispatch(Dispatch dispatch) { dispatch_ = std::move(dispatch); }

  // Sends a notifications/message to the client when it asked for this level (logging/setLevel).
  void log(std::string_view level, std::string_view logger, const Json& data);
  void setLogOutbox(std::shared_ptr<Outbox> out);

  // Waits up to `grace` for in-flight calls, then cancels the rest and waits for them to end.
  void drain(std::chrono::milliseconds grace);
  // Cancels every in-flight call now and drops open subscriptions (no answer: they were
  // cancelled).
  void cancelAll();
  // Ends every open subscriptions/listen gracefully: each gets its completion result (2026-07-28
  // basic/patterns/subscriptions, "Graceful Closure"). drain() does it first.
  void closeSubscriptions();

  // How a call that waited for its source's bulkhead ended without running: the pool refused it
  // once it had its slot, its deadline passed, it was cancelled, or the server shut down.
  enum class WaitEnd { Busy, TimedOut, Cancelled, Closed };

  bool initialized() const { return initialized_.load(); }
  std::string protocolVersion() const;
  std::size_t inFlight() const;
  const Principal& principal() const { return principal_; }
  ServerCore& core() const { return core_; }

 private:
  void handleOne(Json message, const std::shared_ptr<Outbox>& out);
  void handleRequest(const Json& id, const std::string& method, Json& params,
                     const std::shared_ptr<Outbox>& out);
  void handleNotification(const std::string& method, const Json& params);
  // A request carrying 2026-07-28 per-request metadata: served on its own, whatever the session.
  void handleModern(const Json& id, const std::string& method, Json& params,
                    const std::shared_ptr<Outbox>& out);
  // The methods both eras share, once the era is known (legacy: after initialize).
  void handleShared(const Json& id, const std::string& method, Json& params,
                    const std::shared_ptr<Outbox>& out, bool modern);
  Json initializeResult(const Json& params);
  Json discoverResult() const;
  // A result as the era wants it: at 2026-07-28 with resultType and the server's identity, and,
  // when `cacheable`, the caching hints (private when the answer depends on the client's key).
  Json finishResult(Json result, bool modern, bool cacheable) const;
  // The serialised tools/list result; false for a bad cursor.
  bool listTools(const Json& params, std::string& page, bool modern) const;
  Json toolsPage(std::size_t start, bool& bad_cursor) const;
  void callTool(const Json& id, Json& params, const std::shared_ptr<Outbox>& out, bool modern);
  void runCall(const Json& id, const std::shared_ptr<const Tool>& tool, const Json& arguments,
               Json progress_token, const std::stop_token& stop, const std::shared_ptr<Outbox>& out,
               bool modern, Bulkhead::Slot* slot, std::chrono::steady_clock::time_point deadline);
  // For a call that found its source's slots all held: `job` waits in the source's queue (moved
  // there) for a slot, put into `*slot`, then for a worker; `ended` answers the call when it never
  // runs. Now: a slot came free meanwhile (`job` kept, to dispatch as usual); Full: the queue is
  // full (`job` kept).
  enum class SlotWait { Now, Queued, Full };
  SlotWait waitForSlot(Bulkhead& bulkhead, std::chrono::steady_clock::time_point deadline,
                       const std::stop_token& stop, const std::shared_ptr<Bulkhead::Slot>& slot,
                       std::function<void()>& job, const std::function<void(WaitEnd)>& ended);
  // Ends request `key` with `line` as its answer, drain() waiting until it is written.
  void finishAndSend(const std::string& key, const std::shared_ptr<Outbox>& out, std::string line);
  void listResources(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                     bool modern) const;
  void listTemplates(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                     bool modern) const;
  void readResource(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                    bool modern);
  void listen(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out);
  bool visible(const Tool& tool) const { return !scope_ || scope_(tool); }
  bool visible(const Resource& resource) const;
  bool visible(const ResourceTemplate& tmpl) const;
  void finishCall(const std::string& key);
  // Registers a request id as in flight; false (and the error sent) when it already is.
  bool startRequest(const Json& id, const std::shared_ptr<Outbox>& out, std::stop_source& source);

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
  };
  std::map<std::string, Subscription> subscriptions_;
};

}  // namespace mcpdb::protocol
