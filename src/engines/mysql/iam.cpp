#include "engines/mysql/iam.hpp"

#include <mutex>

#include "aws/rds_auth.hpp"

namespace mcpdb::mysql {
namespace {

// The credential chain is built on the first connection, not when the pool is made: a server
// that never connects (or uses no IAM source) never reads AWS files or asks instance metadata.
class LazyChain final : public aws::CredentialProvider {
 public:
  explicit LazyChain(Env env) : env_(std::move(env)) {}
  Result<aws::Credentials> get() override {
    aws::CredentialProvider* chain = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!chain_) chain_ = aws::makeDefaultCredentialChain(env_);
      chain = chain_.get();
    }
    return chain->get();
  }
  std::string name() const override { return "credential chain"; }

 private:
  Env env_;
  std::mutex mu_;
  std::unique_ptr<aws::CredentialProvider> chain_;
};

}  // namespace

std::string awsRegion(const Env& env) {
  return env.get("AWS_REGION").value_or(env.get("AWS_DEFAULT_REGION").value_or(""));
}

TokenSource rdsTokenSource(std::string region, std::shared_ptr<aws::CredentialProvider> credentials,
                           aws::Now now) {
  return [region = std::move(region), credentials = std::move(credentials), now = std::move(now)](
             const std::string& host, std::uint16_t port,
             const std::string& user) -> Result<std::string> {
    if (region.empty()) {
      return makeError(Code::FailedPrecondition,
                       "RDS IAM authentication needs AWS_REGION (or AWS_DEFAULT_REGION)");
    }
    if (host.empty() || user.empty()) {
      return makeError(Code::FailedPrecondition, "RDS IAM authentication needs a host and a user");
    }
    auto creds = credentials->get();
    if (!creds) {
      // The providers' messages never contain a secret (credential_provider.hpp).
      return makeError(Code::FailedPrecondition, "RDS IAM authentication: no AWS credentials (" +
                                                     creds.error().message + ")");
    }
    return aws::generateRdsAuthToken(host, port, user, region, *creds, now());
  };
}

TokenSource rdsTokenSource(const Env& env) {
  return rdsTokenSource(awsRegion(env), std::make_shared<LazyChain>(env));
}

}  // namespace mcpdb::mysql
