#pragma once
// The connection state of one source, created lazily on its first call (registering tools never
// connects): its region, endpoint and credential source, and the transport. And the routes: each
// target with the backend of its source, resolved once when the tools are registered.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string_view>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"
#include "engines/dynamodb/config.hpp"
#include "engines/dynamodb/transport.hpp"

namespace mcpdb::dynamodb {

struct BackendOptions {
  CredentialSource credentials{};  // empty: the standard AWS credential chain
  RetryPolicy retry{};
  HttpClientOptions http{};
};

class Backend {
 public:
  Backend(Source source, Env env, BackendOptions options)
      : source_(std::move(source)), env_(std::move(env)), options_(std::move(options)) {}

  const Source& source() const { return source_; }

  // The source's shared transport; FailedPrecondition naming the source and the variable when its
  // region or endpoint is unusable (never a value).
  Result<std::shared_ptr<Transport>> transport();
  // The transport if a call already created it (metrics: sampling never connects).
  // Readiness (EngineModule::probes): DescribeTable of `target` (one of this source's; the
  // permission the tools need anyway), with the transport's retries ending by `deadline`.
  Status probe(const Target& target, std::chrono::steady_clock::time_point deadline,
               const std::stop_token& stop);
  std::shared_ptr<Transport> transportIfCreated() {
    std::lock_guard lock(mu_);
    return transport_;
  }

 private:
  Error sourceError(const std::string& what) const;
  Result<std::string> region() const;
  Result<Endpoint> endpoint(const std::string& region) const;
  CredentialSource credentials() const;

  Source source_;
  Env env_;
  BackendOptions options_;
  std::mutex mu_;
  std::shared_ptr<Transport> transport_;
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
  // `backends[i]` serves `settings->sources[i]`.
  Routes(std::shared_ptr<const Settings> settings, std::vector<std::shared_ptr<Backend>> backends);

  const Settings& settings() const { return *settings_; }
  const std::vector<std::shared_ptr<Backend>>& backends() const { return backends_; }
  // In target order.
  const std::vector<Route>& routes() const { return routes_; }
  const Route* find(std::string_view target) const;
  // The name of the only source, empty when there are several (a call reads the one of its target).
  const std::string& onlySource() const { return only_source_; }
  // The targets `backend` serves, in config order.
  std::vector<const Target*> targetsOf(const Backend& backend) const;

 private:
  std::shared_ptr<const Settings> settings_;
  std::vector<std::shared_ptr<Backend>> backends_;
  std::vector<Route> routes_;
  std::string only_source_;
};

}  // namespace mcpdb::dynamodb
