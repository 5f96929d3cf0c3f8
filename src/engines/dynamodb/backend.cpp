#include "engines/dynamodb/backend.hpp"

namespace mcpdb::dynamodb {

Result<std::shared_ptr<Transport>> Backend::transport() {
  std::lock_guard lock(mu_);
  if (transport_) return transport_;
  auto region = env_.get("AWS_REGION");
  if (!region)
    return makeError(Code::FailedPrecondition,
                     "AWS_REGION is not set: the DynamoDB engine needs it");
  auto endpoint = resolveEndpoint(env_, *region);
  if (!endpoint) return endpoint.error();
  TransportOptions t;
  t.region = *region;
  t.endpoint = std::move(*endpoint);
  t.retry = options_.retry;
  t.http = options_.http;
  CredentialSource creds = options_.credentials ? options_.credentials : defaultCredentials(env_);
  transport_ = std::make_shared<Transport>(std::move(t), std::move(creds));
  return transport_;
}

}  // namespace mcpdb::dynamodb
