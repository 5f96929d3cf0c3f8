#include "engines/dynamodb/transport.hpp"

#include <algorithm>
#include <condition_variable>
#include <random>
#include <vector>

#include "aws/credential_provider.hpp"
#include "aws/sigv4.hpp"
#include "engines/dynamodb/config.hpp"

namespace mcpdb::dynamodb {
namespace {

constexpr std::string_view kTargetPrefix = "DynamoDB_20120810.";
constexpr std::size_t kMaxPooledClients = 16;

bool isThrottling(std::string_view type) {
  return type == "ProvisionedThroughputExceededException" || type == "ThrottlingException" ||
         type == "RequestLimitExceeded";
}

// An exception name is safe to show only when it looks like one.
std::string safeTypeName(std::string_view type) {
  // [A-Za-z][A-Za-z0-9]{0,79}
  const auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool ok = !type.empty() && type.size() <= 80 && alpha(type[0]);
  for (std::size_t i = 1; ok && i < type.size(); ++i) ok = alpha(type[i]) || digit(type[i]);
  return ok ? std::string(type) : std::string("unknown error");
}

std::chrono::milliseconds backoff(const RetryPolicy& p, int attempt) {
  // Full jitter (AWS architecture blog "Exponential Backoff And Jitter").
  const auto ceiling =
      std::min<std::int64_t>(p.cap.count(), p.base.count() << std::min(attempt, 20));
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<std::int64_t> dist(0, std::max<std::int64_t>(ceiling, 0));
  return std::chrono::milliseconds(dist(rng));
}

// Sleeps, waking early on stop. Returns false when stopped.
bool sleepFor(std::chrono::milliseconds d, const std::stop_token& stop) {
  if (d.count() <= 0) return !stop.stop_requested();
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, d, [] { return false; });
  return !stop.stop_requested();
}

aws::Credentials keyCredentials(std::string id, std::string secret, std::string token,
                                std::string source) {
  aws::Credentials c;
  c.accessKeyId = std::move(id);
  c.secretAccessKey = std::move(secret);
  c.sessionToken = std::move(token);
  c.source = std::move(source);
  return c;
}

}  // namespace

Result<Endpoint> parseEndpoint(std::string_view url) {
  std::string_view rest;
  if (url.rfind("https://", 0) == 0) {
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return makeError(Code::FailedPrecondition,
                     "the DynamoDB endpoint override must be an http:// or https:// URL");
  }
  const auto slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  if (authority.empty() || authority.find('@') != std::string_view::npos) {
    return makeError(Code::FailedPrecondition,
                     "the DynamoDB endpoint override must be scheme://host[:port][/path]");
  }
  std::string_view path =
      slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
  if (path.find_first_of("?#") != std::string_view::npos) {
    return makeError(Code::FailedPrecondition,
                     "the DynamoDB endpoint override must not carry a query or fragment");
  }
  Endpoint e;
  e.host = std::string(authority);
  e.path = std::string(path);
  e.url = std::string(url.substr(0, url.size() - rest.size())) + e.host + e.path;
  return e;
}

Result<Endpoint> resolveEndpoint(const Env& env, const std::string& region) {
  if (auto v = env.get("AWS_ENDPOINT_URL_DYNAMODB")) return parseEndpoint(*v);
  if (auto v = env.get("AWS_ENDPOINT_URL")) return parseEndpoint(*v);
  if (!validRegion(region)) {
    return makeError(Code::FailedPrecondition,
                     "AWS_REGION does not look like an AWS region (e.g. eu-west-1)");
  }
  const std::string suffix = region.rfind("cn-", 0) == 0 ? ".amazonaws.com.cn" : ".amazonaws.com";
  return parseEndpoint("https://dynamodb." + region + suffix + "/");
}

CredentialSource defaultCredentials(const Env& env) {
  std::shared_ptr<aws::CredentialProvider> chain = aws::makeDefaultCredentialChain(env);
  return [chain]() -> Result<aws::Credentials> {
    auto c = chain->get();
    if (!c && c.error().code == Code::NotFound)
      return makeError(Code::FailedPrecondition, c.error().message);
    return c;
  };
}

CredentialSource environmentCredentials(const Env& env) {
  return [env]() -> Result<aws::Credentials> {
    auto id = env.get("AWS_ACCESS_KEY_ID");
    auto secret = env.get("AWS_SECRET_ACCESS_KEY");
    if (!id || !secret) {
      return makeError(Code::FailedPrecondition,
                       "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                       "AWS_SESSION_TOKEN "
                       "for temporary credentials)");
    }
    return keyCredentials(*id, *secret, env.get("AWS_SESSION_TOKEN").value_or(""), "environment");
  };
}

CredentialSource variableCredentials(const Env& env, KeyVariables vars, std::string owner) {
  return [env, vars = std::move(vars), owner = std::move(owner)]() -> Result<aws::Credentials> {
    const auto read = [&](const std::string& var) -> Result<std::string> {
      if (var.empty()) return std::string();
      if (auto v = env.get(var)) return std::move(*v);
      return makeError(Code::FailedPrecondition, owner + ": " + var + " is not set");
    };
    auto id = read(vars.access_key_id);
    if (!id) return id.error();
    auto secret = read(vars.secret_access_key);
    if (!secret) return secret.error();
    auto token = read(vars.session_token);
    if (!token) return token.error();
    return keyCredentials(std::move(*id), std::move(*secret), std::move(*token),
                          "environment variables of " + owner);
  };
}

bool isRetryable(long http_status, std::string_view error_type) {
  return http_status >= 500 || isThrottling(error_type);
}

std::string errorTypeOf(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {};
  auto it = j.find("__type");
  if (it == j.end() || !it->is_string()) return {};
  std::string t = it->get<std::string>();
  const auto hash = t.rfind('#');
  return hash == std::string::npos ? t : t.substr(hash + 1);
}

Error mapServiceError(long http_status, std::string_view error_type, int attempts) {
  const std::string type = error_type.empty() ? std::string() : safeTypeName(error_type);
  const std::string tries = std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
  if (type == "ResourceNotFoundException") {
    return makeError(
        Code::NotFound,
        "DynamoDB table not found in this region and account (ResourceNotFoundException)");
  }
  if (type == "AccessDeniedException" || type == "UnrecognizedClientException" ||
      type == "InvalidSignatureException" || type == "MissingAuthenticationTokenException" ||
      type == "IncompleteSignatureException" || type == "ExpiredTokenException" ||
      type == "InvalidClientTokenId") {
    return makeError(Code::PermissionDenied,
                     "DynamoDB refused the credentials or the permission (" + type + ")");
  }
  if (isThrottling(type)) {
    return makeError(Code::ResourceExhausted, "DynamoDB throttled the request (" + type +
                                                  ") after " + tries + "; retry in a few seconds");
  }
  if (type == "ValidationException" || type == "SerializationException") {
    return makeError(Code::InvalidArgument,
                     "DynamoDB rejected the request as invalid (" + type + ")");
  }
  if (type == "ConditionalCheckFailedException") {
    return makeError(Code::FailedPrecondition,
                     "DynamoDB condition not met (ConditionalCheckFailedException)");
  }
  if (http_status >= 500) {
    return makeError(Code::Unavailable, "DynamoDB returned HTTP " + std::to_string(http_status) +
                                            (type.empty() ? "" : " (" + type + ")") + " after " +
                                            tries);
  }
  return makeError(Code::Internal, "unexpected DynamoDB reply: HTTP " +
                                       std::to_string(http_status) +
                                       (type.empty() ? "" : " (" + type + ")"));
}

Transport::Transport(TransportOptions options, CredentialSource credentials)
    : options_(std::move(options)), credentials_(std::move(credentials)) {}

Transport::~Transport() = default;

std::unique_ptr<HttpClient> Transport::acquire() {
  {
    std::lock_guard lock(pool_mu_);
    ++in_use_;
    if (!pool_.empty()) {
      auto c = std::move(pool_.back());
      pool_.pop_back();
      return c;
    }
  }
  return std::make_unique<HttpClient>(options_.http);
}

void Transport::release(std::unique_ptr<HttpClient> client) {
  std::lock_guard lock(pool_mu_);
  --in_use_;
  if (client && pool_.size() < kMaxPooledClients) pool_.push_back(std::move(client));
}

Transport::ConnectionStats Transport::connectionStats() const {
  std::lock_guard lock(pool_mu_);
  return {in_use_, pool_.size()};
}

Result<Json> Transport::call(std::string_view operation, const Json& body,
                             const CallOptions& options, CallInfo* info) {
  CallInfo local;
  CallInfo& ci = info != nullptr ? *info : local;
  // A span per request when the call is traced: the operation (this server's own name for it)
  // and how many attempts it took; never the key, the body or the reply.
  telemetry::ChildSpan db(options.span, "dynamodb");
  auto result = attempt(operation, body, options, ci);
  if (db) {
    db->setName("dynamodb " + std::string(operation));
    db->setString("db.system.name", "aws.dynamodb");
    db->setString("db.operation.name", operation);
    db->setInt("mcpdb.attempts", ci.attempts);
    if (!result) db->setError(codeName(result.error().code));
  }
  return result;
}

Result<Json> Transport::attempt(std::string_view operation, const Json& body,
                                const CallOptions& options, CallInfo& ci) {
  ci = CallInfo{};
  const std::string payload = body.dump();
  const int max_attempts = std::max(1, options_.retry.max_attempts);
  Error last = makeError(Code::Internal, "DynamoDB call not attempted");

  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    if (attempt > 0) {
      const auto wait = backoff(options_.retry, attempt - 1);
      if (std::chrono::steady_clock::now() + wait >= options.deadline)
        break;  // no time left: report the last error
      if (!sleepFor(wait, options.stop))
        return makeError(Code::Cancelled, "DynamoDB call cancelled");
    }
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        options.deadline - std::chrono::steady_clock::now());
    if (remaining.count() <= 0) {
      // A backoff sleep that overran into the deadline reports what made it retry.
      if (attempt > 0) break;
      return makeError(Code::TimedOut, "DynamoDB call exceeded its time limit");
    }
    auto creds = credentials_();
    if (!creds) return creds.error();

    aws::SignableRequest req;
    req.method = "POST";
    req.path = options_.endpoint.path;
    req.headers = {{"Host", options_.endpoint.host},
                   {"Content-Type", "application/x-amz-json-1.0"},
                   {"X-Amz-Target", std::string(kTargetPrefix) + std::string(operation)}};
    req.body = payload;
    aws::signHeaders(req, *creds,
                     aws::SigningScope{options_.region, "dynamodb", aws::Clock::now()});

    HttpRequest http;
    http.method = "POST";
    http.url = options_.endpoint.url;
    http.headers.assign(req.headers.begin(), req.headers.end());
    http.body = std::move(req.body);
    http.stop = options.stop;
    http.totalTimeout = std::min(remaining, options_.http.totalTimeout);
    http.connectTimeout = std::min(remaining, options_.http.connectTimeout);

    auto client = acquire();
    auto resp = client->send(http);
    ++ci.attempts;
    if (!resp) {
      release(nullptr);  // the connection failed: dropped, not pooled
      // Transport failures are not retried (only throttling and 5xx are): the client's message
      // names only scheme://host:port.
      if (resp.error().code == Code::TimedOut) {
        // A retry cut short by the call's deadline reports what made it retry, as a backoff
        // sleep that overran would.
        if (attempt > 0 && std::chrono::steady_clock::now() >= options.deadline) break;
        return makeError(Code::TimedOut, "DynamoDB call exceeded its time limit");
      }
      return resp.error();
    }
    release(std::move(client));
    ci.http_status = resp->status;
    if (resp->status == 200) {
      Json j = Json::parse(resp->body, nullptr, false);
      if (j.is_discarded() || !j.is_object())
        return makeError(Code::Internal, "unexpected DynamoDB reply (not a JSON object)");
      ci.error_type.clear();
      return j;
    }
    ci.error_type = errorTypeOf(resp->body);
    last = mapServiceError(resp->status, ci.error_type, ci.attempts);
    if (!isRetryable(resp->status, ci.error_type)) return last;
  }
  // Out of attempts (or of time) on a retryable error.
  return mapServiceError(ci.http_status, ci.error_type, ci.attempts);
}

}  // namespace mcpdb::dynamodb
