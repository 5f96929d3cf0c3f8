#pragma once
// The connection state of each source: its transport (region, endpoint, credential source, the
// keep-alive connections), made by the engine kit on the source's first call (registering tools
// never connects). And the routes: each target with the backend of its source, resolved once when
// the tools are registered.

#include <chrono>
#include <memory>
#include <stop_token>
#include <string_view>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"
#include "engines/dynamodb/config.hpp"
#include "engines/dynamodb/transport.hpp"
#include "engines/kit/module.hpp"

namespace mcpdb::dynamodb {

struct BackendOptions {
  CredentialSource credentials{};  // empty: the standard AWS credential chain
  RetryPolicy retry{};
  HttpClientOptions http{};
};

// The transport of `source`: FailedPrecondition naming the source and the variable when its
// region or endpoint is unusable (never a value). Opens no connection.
Result<std::shared_ptr<Transport>> makeTransport(const Source& source, const Env& env,
                                                 const BackendOptions& options);

// The sources' transports, each made on its source's first call (kit::PerSource).
using Transports = engines::kit::PerSource<Transport>;

// One source: its settings and its slot in the engine's Transports.
class Backend {
 public:
  Backend(Source source, Transports::SlotPtr transport)
      : source_(std::move(source)), transport_(std::move(transport)) {}

  const Source& source() const { return source_; }

  // The source's shared transport, made on first use (makeTransport's error when it cannot be).
  Result<Transport*> transport() { return transport_->get(); }
  // Readiness (EngineModule::probes): DescribeTable of `target` (one of this source's; the
  // permission the tools need anyway), with the transport's retries ending by `deadline`.
  Status probe(const Target& target, std::chrono::steady_clock::time_point deadline,
               const std::stop_token& stop);

 private:
  Source source_;
  Transports::SlotPtr transport_;
};

// A target and the backend of the source it reads.
struct Route {
  const Target* target = nullptr;
  std::shared_ptr<Backend> backend;
};

// The registry's targets routed to their sources' backends: a call finds its target and backend
// in one lookup; nothing is resolved per call.
class Routes {
 public:
  // A backend per source of `settings`, each with its slot in a new Transports.
  Routes(std::shared_ptr<const Settings> settings, const Env& env, const BackendOptions& options);

  const Settings& settings() const { return *settings_; }
  const std::vector<std::shared_ptr<Backend>>& backends() const { return backends_; }
  // The transports made so far (metrics: sampling never makes one).
  const Transports& transports() const { return *transports_; }
  // In target order.
  const std::vector<Route>& routes() const { return routes_; }
  const Route* find(std::string_view target) const;
  // The name of the only source, empty when there are several (a call reads the one of its target).
  const std::string& onlySource() const { return only_source_; }
  // The targets `backend` serves, in config order.
  std::vector<const Target*> targetsOf(const Backend& backend) const;

 private:
  std::shared_ptr<const Settings> settings_;
  std::shared_ptr<Transports> transports_;
  std::vector<std::shared_ptr<Backend>> backends_;
  std::vector<Route> routes_;
  std::string only_source_;
};

}  // namespace mcpdb::dynamodb
