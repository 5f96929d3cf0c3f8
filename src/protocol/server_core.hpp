#pragma once
// What every session of one server process shares: options, the tool registry, the worker pool,
// the sources' bulkheads, the budget for results in flight, the call observers, cached pages.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/fence.hpp"
#include "common/memory_budget.hpp"
#include "protocol/bulkhead.hpp"
#include "protocol/call_record.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/tool_registry.hpp"
#include "protocol/worker_pool.hpp"
#include "telemetry/tracer.hpp"

namespace mcpdb::protocol {

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

// The limits of the sources' bulkheads (ServerOptions::calls_per_source, calls_by_source): the
// part of the server's options a config reload may change.
struct SourceLimits {
  std::size_t calls_per_source = 0;
  std::map<std::string, std::size_t, std::less<>> calls_by_source;
};

// One generation of the tool surface: the registry, its sources' bulkheads, the cached pages of
// tools/list. Immutable once published. A request holds the generation it started on (shared)
// until it ends, so a reload never pulls a tool, its runtime (which its handler holds) or its
// bulkhead from under it: the old generation dies with its last call.
class ToolSurface {
 public:
  const ToolRegistry& registry() const { return *registry_; }
  // The bulkhead of the source `tool` reads (a tool of this generation); nullptr when none.
  Bulkhead* bulkheadFor(const Tool& tool) const;
  const std::vector<std::shared_ptr<Bulkhead>>& bulkheads() const { return bulkheads_; }
  // 1 for the surface the server started with, one more for each reload that replaced it.
  std::uint64_t generation() const { return generation_; }
  // The serialised tools/list result page starting at `start` for sessions that see every tool,
  // in the legacy or the modern shape; `make` fills the cache on first use.
  std::string unscopedToolsPage(std::size_t start, bool modern, std::size_t page_size,
                                const std::function<std::string()>& make) const;

 private:
  friend class ServerCore;
  std::shared_ptr<const ToolRegistry> registry_;
  std::shared_ptr<const void> owner_;  // what the tools' handlers may need besides themselves
  std::vector<std::shared_ptr<Bulkhead>> bulkheads_;
  std::unordered_map<const Tool*, Bulkhead*> bulkhead_of_;
  std::uint64_t generation_ = 1;
  mutable std::mutex pages_mu_;
  mutable std::map<std::pair<std::size_t, bool>, std::string> pages_;
};

class ServerCore {
 public:
  // `owner`: kept alive with the first tool surface (as replaceTools' `owner`).
  ServerCore(ServerOptions options, std::shared_ptr<const ToolRegistry> registry,
             std::shared_ptr<const void> owner = nullptr);
  ~ServerCore();
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;

  const ServerOptions& options() const { return options_; }
  // The current tool surface, shared: one atomic load. Hold it for as long as its tools are used.
  std::shared_ptr<const ToolSurface> surface() const {
    return surface_.load(std::memory_order_acquire);
  }
  // The current registry. Valid until the next replaceTools(): for tests and code that runs
  // before serving starts; a request takes surface() instead.
  const ToolRegistry& registry() const { return surface()->registry(); }
  // Publishes a new tool surface (a config reload): calls started from now on see it; calls in
  // flight finish on the one they started with. A source whose bulkhead keeps its size keeps its
  // bulkhead (the calls it holds count against the same limit); a resized or new one gets a new
  // bulkhead. `owner` is kept alive as long as the new generation is (the assembly the registry's
  // tools came from). Returns the new generation's number. Thread-safe.
  std::uint64_t replaceTools(std::shared_ptr<const ToolRegistry> registry, SourceLimits limits,
                             std::shared_ptr<const void> owner = nullptr);
  WorkerPool& pool() { return pool_; }
  // The bulkhead of the source `tool` reads in the current surface; nullptr for a tool not in it,
  // and when the server reads one source only without a size set for it (nothing to keep apart).
  Bulkhead* bulkheadFor(const Tool& tool) const { return surface()->bulkheadFor(tool); }
  // Every source's bulkhead of the current surface (metrics, tests).
  const std::vector<std::shared_ptr<Bulkhead>>& bulkheads() const { return surface()->bulkheads(); }
  MemoryBudget& resultMemory() { return result_memory_; }
  void addObserver(std::shared_ptr<CallObserver> observer) {
    observers_.push_back(std::move(observer));
  }
  void notify(const CallRecord& record) const;
  // The current surface's cached tools/list page (ToolSurface::unscopedToolsPage).
  std::string unscopedToolsPage(std::size_t start, bool modern,
                                const std::function<std::string()>& make) {
    return surface()->unscopedToolsPage(start, modern, options_.page_size, make);
  }
  // `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}` without braces around it: what every
  // modern result carries, serialised once.
  const std::string& serverInfoMetaMember() const { return server_info_meta_; }
  // The tracer of OpenTelemetry spans (telemetry:); null when tracing is off, which is what every
  // request tests. Set before the first request.
  telemetry::Tracer* tracer() const { return tracer_.get(); }
  void setTracer(std::shared_ptr<telemetry::Tracer> tracer) { tracer_ = std::move(tracer); }
  const std::shared_ptr<telemetry::Tracer>& sharedTracer() const { return tracer_; }

 private:
  // A surface of `registry` whose bulkheads are sized by `limits`, reusing `previous`'s where a
  // source keeps its size.
  std::shared_ptr<ToolSurface> makeSurface(std::shared_ptr<const ToolRegistry> registry,
                                           const SourceLimits& limits, const ToolSurface* previous);
  std::size_t callsFor(const SourceLimits& limits, const std::string& key,
                       std::size_t sources) const;

  ServerOptions options_;
  std::string server_info_meta_;
  std::vector<std::shared_ptr<CallObserver>> observers_;
  std::shared_ptr<telemetry::Tracer> tracer_;
  MemoryBudget result_memory_;
  // Answers calls waiting for a slot when their deadline passes; only when there are bulkheads.
  // Declared before them: it outlives them.
  std::unique_ptr<WaitTimer> wait_timer_;
  std::mutex replace_mu_;  // replaceTools(), one at a time
  // Every bulkhead made, so that the destructor closes those old generations still hold.
  std::vector<std::weak_ptr<Bulkhead>> all_bulkheads_;
  std::atomic<std::shared_ptr<const ToolSurface>> surface_;
  WorkerPool pool_;
};

// The key of the bulkhead `tool` takes: "<engine>/<source>", or "<engine>/*" without a source.
std::string bulkheadKey(const Tool& tool);

}  // namespace mcpdb::protocol
