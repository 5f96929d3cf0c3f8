#pragma once
// The MongoDB engine at run time: one client pool per source, each created on first use under one
// lock (registering tools never connects). A tool resolves its source's slot when it is built, so
// a call only takes the slot's pool; a source that cannot be used (variable unset, bad URI) fails
// its own calls with an error naming the source and the variable, and no other source's.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"
#include "engines/mongodb/client.hpp"
#include "engines/mongodb/config.hpp"

namespace mcpdb::mongodb {

class Runtime;

// One source's client pool, made on first use.
class SourceClient {
 public:
  SourceClient(Source source, Runtime& runtime) : source_(std::move(source)), runtime_(runtime) {}
  SourceClient(const SourceClient&) = delete;
  SourceClient& operator=(const SourceClient&) = delete;

  const Source& source() const { return source_; }
  // The pool (created now if it was not): FailedPrecondition naming the source and the variable
  // when it cannot be made, never the URI.
  Result<Client*> client();
  // The pool if a call already made it (metrics: sampling never connects).
  Client* clientIfCreated() const { return ready_.load(std::memory_order_acquire); }
  // Readiness (EngineModule::probes): {ping: 1} on one pooled client of the source, bounded by
  // the driver's server selection and socket timeouts (the URI's, or io_timeout).
  Status probe();

 private:
  friend class Runtime;
  Source source_;
  Runtime& runtime_;
  std::atomic<Client*> ready_{nullptr};
  std::unique_ptr<Client> owned_;  // written once, under the runtime's lock
};

class Runtime {
 public:
  // `io_timeout` bounds socket reads of every pool (when its URI does not set socketTimeoutMS).
  Runtime(const Settings& settings, Env env, std::chrono::milliseconds io_timeout);

  // The slot of a source the settings declare (every name a target holds after parsing);
  // nullptr for another name.
  SourceClient* find(std::string_view name);
  const std::vector<std::unique_ptr<SourceClient>>& sources() const { return sources_; }

 private:
  friend class SourceClient;
  Result<std::unique_ptr<Client>> open(const Source& source) const;

  Env env_;
  std::string read_preference_;
  std::chrono::milliseconds io_timeout_;
  std::mutex mu_;  // creating a pool
  std::vector<std::unique_ptr<SourceClient>> sources_;
};

}  // namespace mcpdb::mongodb
