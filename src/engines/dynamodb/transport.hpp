#pragma once
// DynamoDB's JSON API (POST /, X-Amz-Target: DynamoDB_20120810.<Operation>,
// Content-Type: application/x-amz-json-1.0) over the shared libcurl client, signed with the shared
// SigV4 signer. Keep-alive connections are reused through a small pool of HttpClients (one per
// concurrent call). Throttling errors and 5xx are retried with full-jitter exponential backoff,
// within the call's deadline; nothing else is retried.
//
// The transport does not know which operations exist: the serving code names only read operations
// (requests.hpp) and the self-check's denied write (doctor.cpp); the loader, a separate
// executable, names the writes.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "aws/credentials.hpp"
#include "common/env.hpp"
#include "common/http_client.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "telemetry/span.hpp"

namespace mcpdb::dynamodb {

struct Endpoint {
  std::string url;   // "https://dynamodb.eu-west-1.amazonaws.com/" (with the path)
  std::string host;  // Host header value ("host[:port]")
  std::string path;  // request path, "/" by default
};

// AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL, else the regional AWS endpoint.
// FailedPrecondition when the region is unusable or the override is not an http(s) URL.
Result<Endpoint> resolveEndpoint(const Env& env, const std::string& region);
Result<Endpoint> parseEndpoint(std::string_view url);

// Where credentials come from; called before every attempt (a chain caches and refreshes).
using CredentialSource = std::function<Result<aws::Credentials>()>;

// The standard AWS chain (aws/credential_provider.hpp: environment, shared files, web identity,
// container, IMDSv2), cached and refreshed. "Nothing found" becomes FailedPrecondition (NotFound
// would read as "table not found").
CredentialSource defaultCredentials(const Env& env);
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN only (tests, the loader's admin
// keys).
CredentialSource environmentCredentials(const Env& env);

// The environment variables holding a source's static keys (session_token may be empty).
struct KeyVariables {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token = {};
};
// Static keys read from `vars` at each call. An unset variable is FailedPrecondition
// "<owner>: <VARIABLE> is not set" (the variable's name, never a value).
CredentialSource variableCredentials(const Env& env, KeyVariables vars, std::string owner);

struct RetryPolicy {
  int max_attempts = 4;  // first try included
  std::chrono::milliseconds base{
      50};  // backoff before attempt n+1: random in [0, min(cap, base * 2^n)]
  std::chrono::milliseconds cap{2000};
};

// True for the errors worth retrying: throttling exceptions and any 5xx.
bool isRetryable(long http_status, std::string_view error_type);

// A DynamoDB error reply -> a safe tool error. Never includes AWS's message text (validation
// messages can quote values), only the exception name.
Error mapServiceError(long http_status, std::string_view error_type, int attempts);

// "ResourceNotFoundException" from
// {"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"}.
std::string errorTypeOf(const std::string& body);

struct TransportOptions {
  std::string region;
  Endpoint endpoint;
  RetryPolicy retry{};
  HttpClientOptions http{};
};

struct CallOptions {
  std::stop_token stop{};
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  // The call's span (protocol::CallContext::span): each DynamoDB request (its retries included)
  // gets a child; null: untraced.
  telemetry::Span* span = nullptr;
};

// Details of the last reply, for callers that must tell exceptions apart (the self-check).
struct CallInfo {
  int attempts = 0;
  long http_status = 0;
  std::string error_type;  // empty on success
};

class Transport {
 public:
  Transport(TransportOptions options, CredentialSource credentials);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // One API call: `operation` is the X-Amz-Target suffix. Returns the parsed reply body.
  Result<Json> call(std::string_view operation, const Json& body, const CallOptions& options,
                    CallInfo* info = nullptr);

  const TransportOptions& options() const { return options_; }

  // Keep-alive HTTP connections (metrics gauges): leased to a running request, and idle in the
  // pool waiting for the next one.
  struct ConnectionStats {
    std::size_t in_use = 0;
    std::size_t idle = 0;
  };
  ConnectionStats connectionStats() const;

 private:
  // call() without its span: the attempts (retries included).
  Result<Json> attempt(std::string_view operation, const Json& body, const CallOptions& options,
                       CallInfo& ci);
  std::unique_ptr<HttpClient> acquire();
  // Ends a lease from acquire(); a null client (a failed connection) is dropped, not pooled.
  void release(std::unique_ptr<HttpClient> client);

  TransportOptions options_;
  CredentialSource credentials_;
  mutable std::mutex pool_mu_;
  std::vector<std::unique_ptr<HttpClient>> pool_;
  std::size_t in_use_ = 0;  // acquired and not yet released
};

}  // namespace mcpdb::dynamodb
