#pragma once
// The MongoDB engine at run time: one client pool per source, made by the engine kit on the
// source's first use (kit::PerSource; registering tools never connects). A tool resolves its
// source's slot when it is built, so a call only takes the slot's pool; a source that cannot be
// used (variable unset, bad URI) fails its own calls with an error naming the source and the
// variable, and no other source's.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"
#include "engines/kit/module.hpp"
#include "engines/mongodb/client.hpp"
#include "engines/mongodb/config.hpp"

namespace mcpdb::mongodb {

// The sources' client pools, each made on its source's first use.
using Clients = engines::kit::PerSource<Client>;

// One source: its settings and its slot in the engine's Clients.
class SourceClient {
 public:
  SourceClient(Source source, Clients::SlotPtr client)
      : source_(std::move(source)), client_(std::move(client)) {}

  const Source& source() const { return source_; }
  // The pool (made now if it was not): FailedPrecondition naming the source and the variable
  // when it cannot be made, never the URI.
  Result<Client*> client() { return client_->get(); }
  // Readiness (EngineModule::probes): {ping: 1} on one pooled client of the source, bounded by
  // the driver's server selection and socket timeouts (the URI's, or io_timeout).
  Status probe();

 private:
  Source source_;
  Clients::SlotPtr client_;
};

class Runtime {
 public:
  // `io_timeout` bounds socket reads of every pool (when its URI does not set socketTimeoutMS).
  Runtime(const Settings& settings, Env env, std::chrono::milliseconds io_timeout);

  // The slot of a source the settings declare (every name a target holds after parsing);
  // nullptr for another name.
  SourceClient* find(std::string_view name);
  const std::vector<std::unique_ptr<SourceClient>>& sources() const { return sources_; }
  // The pools made so far, in the order of the sources (metrics: sampling never makes one).
  const Clients& clients() const { return clients_; }

 private:
  // The pool of `source` (Clients' maker): the source's variables read, the URI parsed; no
  // connection is opened.
  Result<std::shared_ptr<Client>> open(const Source& source) const;

  Env env_;
  std::string read_preference_;
  std::chrono::milliseconds io_timeout_;
  Clients clients_;
  std::vector<std::unique_ptr<SourceClient>> sources_;
};

}  // namespace mcpdb::mongodb
