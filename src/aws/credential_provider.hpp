#pragma once
// The standard AWS credential chain. Each source is one CredentialProvider; the default chain
// tries, in order: environment, shared files (~/.aws/credentials + ~/.aws/config), web identity
// (STS), container (ECS/EKS) and EC2 instance metadata (IMDSv2) - the order of the AWS SDKs for JS
// v3 and Rust. Every environment read goes through mcpdb::Env, every endpoint is overridable (tests
// point them at a local fake server), and no error message ever contains a secret.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "aws/credentials.hpp"
#include "common/env.hpp"
#include "common/http_client.hpp"
#include "common/result.hpp"

namespace mcpdb::aws {

using Now = std::function<Clock::time_point()>;

// One source of credentials.
class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;
  // Current credentials. Code::NotFound means "this source is not configured" (a chain moves on);
  // any other error means the source is configured but broken. Thread-safe.
  virtual Result<Credentials> get() = 0;
  // Short name for messages, e.g. "environment".
  virtual std::string name() const = 0;
};

// Caches another provider's credentials. Long-term credentials are kept; temporary ones are
// refreshed `refreshBefore` ahead of their expiry. If a refresh fails while the cached credentials
// have not yet expired, those are returned. Failures are not cached.
class CachingProvider final : public CredentialProvider {
 public:
  explicit CachingProvider(std::unique_ptr<CredentialProvider> inner,
                           std::chrono::seconds refreshBefore = std::chrono::minutes(5),
                           Now now = Clock::now);
  Result<Credentials> get() override;
  std::string name() const override { return inner_->name(); }

 private:
  std::unique_ptr<CredentialProvider> inner_;
  std::chrono::seconds refreshBefore_;
  Now now_;
  std::mutex mu_;
  std::optional<Credentials> cached_;
};

// Tries providers in order; remembers the one that worked and asks it first next time.
class ChainProvider final : public CredentialProvider {
 public:
  explicit ChainProvider(std::vector<std::unique_ptr<CredentialProvider>> providers);
  Result<Credentials> get() override;
  std::string name() const override { return "credential chain"; }

 private:
  std::vector<std::unique_ptr<CredentialProvider>> providers_;
  std::mutex mu_;
  std::optional<std::size_t> active_;
};

// (a) AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN.
class EnvironmentProvider final : public CredentialProvider {
 public:
  explicit EnvironmentProvider(Env env) : env_(std::move(env)) {}
  Result<Credentials> get() override;
  std::string name() const override { return "environment"; }

 private:
  Env env_;
};

// (b) Shared files: AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials) and AWS_CONFIG_FILE
// (default ~/.aws/config), profile AWS_PROFILE (default "default"). Static keys, or role_arn +
// web_identity_token_file (via STS). Other profile kinds (SSO, credential_process, source_profile)
// are refused with a clear error.
class ProfileProvider final : public CredentialProvider {
 public:
  explicit ProfileProvider(Env env, HttpClientOptions http = {});
  Result<Credentials> get() override;
  std::string name() const override { return "shared files"; }

 private:
  Env env_;
  std::mutex mu_;
  HttpClient http_;
};

// (c) AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (+ AWS_ROLE_SESSION_NAME): STS
// AssumeRoleWithWebIdentity (unsigned). Endpoint: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, else the
// regional STS endpoint of AWS_REGION / AWS_DEFAULT_REGION, else the global one.
class WebIdentityProvider final : public CredentialProvider {
 public:
  explicit WebIdentityProvider(Env env, HttpClientOptions http = {});
  Result<Credentials> get() override;
  std::string name() const override { return "web identity"; }

 private:
  Env env_;
  std::mutex mu_;
  HttpClient http_;
};

// (d) AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (against http://169.254.170.2) or
// AWS_CONTAINER_CREDENTIALS_FULL_URI (https, or http to loopback / the ECS and EKS agent
// addresses), with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or AWS_CONTAINER_AUTHORIZATION_TOKEN.
class ContainerProvider final : public CredentialProvider {
 public:
  explicit ContainerProvider(Env env, HttpClientOptions http = {},
                             std::string relativeBase = "http://169.254.170.2");
  Result<Credentials> get() override;
  std::string name() const override { return "container"; }

 private:
  Env env_;
  std::string relativeBase_;
  std::mutex mu_;
  HttpClient http_;
};

// (e) EC2 instance metadata, IMDSv2 only (session token first; no IMDSv1 fallback). Disabled by
// AWS_EC2_METADATA_DISABLED=true; endpoint AWS_EC2_METADATA_SERVICE_ENDPOINT, else
// http://169.254.169.254 (or [fd00:ec2::254] with AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE=IPv6).
// An unreachable endpoint is NotFound (not on EC2); short timeouts keep the chain from hanging.
class ImdsProvider final : public CredentialProvider {
 public:
  explicit ImdsProvider(Env env, HttpClientOptions http = {});
  Result<Credentials> get() override;
  std::string name() const override { return "instance metadata"; }

 private:
  Env env_;
  std::mutex mu_;
  HttpClient http_;
};

struct ChainOptions {
  std::chrono::seconds refreshBefore{std::chrono::minutes(5)};
  Now now = Clock::now;
  HttpClientOptions http{};
};

// The standard chain (a)..(e), each source cached.
std::unique_ptr<CredentialProvider> makeDefaultCredentialChain(const Env& env,
                                                               ChainOptions options = {});

// STS endpoint (no trailing slash) as resolved from the environment (see WebIdentityProvider).
std::string stsEndpoint(const Env& env);

// Shared by WebIdentityProvider and web-identity profiles.
Result<Credentials> assumeRoleWithWebIdentity(HttpClient& http, const std::string& endpoint,
                                              const std::string& roleArn,
                                              const std::string& sessionName,
                                              const std::string& tokenFile,
                                              const std::string& source);

}  // namespace mcpdb::aws
