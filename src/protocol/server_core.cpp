#include "protocol/server_core.hpp"

#include <algorithm>

#include "protocol/era.hpp"

namespace mcpdb::protocol {

ServerCore::ServerCore(ServerOptions options, std::shared_ptr<const ToolRegistry> registry,
                       std::shared_ptr<const void> owner)
    : options_(std::move(options)),
      result_memory_(options_.max_result_memory),
      pool_(options_.workers, options_.max_queue) {
  const std::string info = serialize(Json{{"name", options_.name}, {"version", options_.version}});
  server_info_meta_ = R"("_meta":{")" + std::string(meta_key::kServerInfo) + R"(":)" + info + "}";
  auto first =
      makeSurface(std::move(registry),
                  SourceLimits{options_.calls_per_source, options_.calls_by_source}, nullptr);
  first->owner_ = std::move(owner);
  surface_.store(std::move(first));
}

std::string bulkheadKey(const Tool& tool) {
  return tool.engine + "/" + (tool.source.empty() ? std::string("*") : tool.source);
}

// The size of a source's bulkhead: the operator's, or three quarters of the workers, so however
// many of its calls hang, a quarter stays for every other source (half was too few for a burst of
// five calls of one agent to one source). Calls over it wait for a slot rather than being refused
// (an agent's burst to a source slow for a moment, as the soak test sends, must not fail). 0:
// none, when the server reads one source only and no size is set: there is nothing to keep apart,
// the pool's limits are its own.
std::size_t ServerCore::callsFor(const SourceLimits& limits, const std::string& key,
                                 std::size_t sources) const {
  if (const auto set = limits.calls_by_source.find(key); set != limits.calls_by_source.end())
    return set->second;
  if (limits.calls_per_source > 0) return limits.calls_per_source;
  if (sources <= 1) return 0;
  return std::max<std::size_t>(1, options_.workers * 3 / 4);
}

// One bulkhead per source the tools read, resolved once per tool so a call only looks its tool up.
std::shared_ptr<ToolSurface> ServerCore::makeSurface(std::shared_ptr<const ToolRegistry> registry,
                                                     const SourceLimits& limits,
                                                     const ToolSurface* previous) {
  auto surface = std::make_shared<ToolSurface>();
  surface->registry_ = std::move(registry);
  if (previous != nullptr) surface->generation_ = previous->generation_ + 1;
  std::map<std::string, const Tool*, std::less<>> first_of;  // a tool of each source, by key
  for (const auto& tool : surface->registry_->tools())
    first_of.emplace(bulkheadKey(*tool), tool.get());
  // The previous generation's bulkheads by key, to keep those whose size stays.
  std::map<std::string, std::shared_ptr<Bulkhead>, std::less<>> kept;
  if (previous != nullptr) {
    for (const auto& [tool, bulkhead] : previous->bulkhead_of_) {
      for (const auto& b : previous->bulkheads_) {
        if (b.get() == bulkhead) kept.emplace(bulkheadKey(*tool), b);
      }
    }
  }
  std::map<std::string, Bulkhead*, std::less<>> by_key;
  for (const auto& [key, tool] : first_of) {
    const std::size_t limit = callsFor(limits, key, first_of.size());
    if (limit == 0) continue;
    if (const auto it = kept.find(key); it != kept.end() && it->second->limit() == limit) {
      surface->bulkheads_.push_back(it->second);
    } else {
      if (!wait_timer_) wait_timer_ = std::make_unique<WaitTimer>();
      const std::string name = tool->source.empty()
                                   ? "the " + tool->engine + " sources"
                                   : "the " + tool->engine + " source '" + tool->source + "'";
      surface->bulkheads_.push_back(
          std::make_shared<Bulkhead>(name, limit, kWaitingPerSlot * limit, wait_timer_.get()));
      all_bulkheads_.push_back(surface->bulkheads_.back());
    }
    by_key.emplace(key, surface->bulkheads_.back().get());
  }
  for (const auto& tool : surface->registry_->tools()) {
    if (auto it = by_key.find(bulkheadKey(*tool)); it != by_key.end())
      surface->bulkhead_of_.emplace(tool.get(), it->second);
  }
  return surface;
}

std::uint64_t ServerCore::replaceTools(std::shared_ptr<const ToolRegistry> registry,
                                       SourceLimits limits, std::shared_ptr<const void> owner) {
  std::lock_guard<std::mutex> lock(replace_mu_);
  const auto previous = surface();
  auto next = makeSurface(std::move(registry), limits, previous.get());
  next->owner_ = std::move(owner);
  const std::uint64_t generation = next->generation_;
  // Forget the bulkheads nobody holds any more (the list grows by reloads, not by calls).
  std::erase_if(all_bulkheads_, [](const std::weak_ptr<Bulkhead>& b) { return b.expired(); });
  surface_.store(std::move(next), std::memory_order_release);
  return generation;
}

Bulkhead* ToolSurface::bulkheadFor(const Tool& tool) const {
  if (bulkhead_of_.empty()) return nullptr;  // one source: nothing to look up per call
  const auto it = bulkhead_of_.find(&tool);
  return it == bulkhead_of_.end() ? nullptr : it->second;
}

ServerCore::~ServerCore() {
  // Calls still running give their slots to waiters, whose jobs the stopping pool refuses (busy);
  // whoever still waits then is told the server is shutting down.
  pool_.shutdown();
  for (auto& weak : all_bulkheads_) {
    if (auto bulkhead = weak.lock()) bulkhead->close();
  }
}

void ServerCore::notify(const CallRecord& record) const {
  for (const auto& o : observers_) o->onCall(record);
}

std::string ToolSurface::unscopedToolsPage(std::size_t start, bool modern, std::size_t page_size,
                                           const std::function<std::string()>& make) const {
  {
    std::lock_guard<std::mutex> lock(pages_mu_);
    if (auto it = pages_.find({start, modern}); it != pages_.end()) return it->second;
  }
  std::string page = make();
  // Only the pages this server hands out cursors for are kept (bounded by the tool count); a bad
  // cursor (an empty page) or an odd start a client made up is computed each time.
  if (page.empty() || start % std::max<std::size_t>(1, page_size) != 0) return page;
  std::lock_guard<std::mutex> lock(pages_mu_);
  return pages_.emplace(std::make_pair(start, modern), std::move(page)).first->second;
}

}  // namespace mcpdb::protocol
