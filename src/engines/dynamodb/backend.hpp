#pragma once
// The engine's connection state, created lazily on the first call (registering tools never
// connects): region and endpoint from the environment, the credential source, the transport.

#include <memory>
#include <mutex>
#include <optional>

#include "common/env.hpp"
#include "common/result.hpp"
#include "engines/dynamodb/transport.hpp"

namespace mcpdb::dynamodb {

struct BackendOptions {
  CredentialSource credentials{};  // empty: the standard AWS credential chain
  RetryPolicy retry{};
  HttpClientOptions http{};
};

class Backend {
 public:
  Backend(Env env, BackendOptions options) : env_(std::move(env)), options_(std::move(options)) {}

  // The shared transport; FailedPrecondition when AWS_REGION or the endpoint is unusable.
  Result<std::shared_ptr<Transport>> transport();
  // The transport if a call already created it (metrics: sampling never connects).
  std::shared_ptr<Transport> transportIfCreated() {
    std::lock_guard lock(mu_);
    return transport_;
  }

 private:
  Env env_;
  BackendOptions options_;
  std::mutex mu_;
  std::shared_ptr<Transport> transport_;
};

}  // namespace mcpdb::dynamodb
