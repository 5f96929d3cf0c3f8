#include <cctype>
#include <string>

#include "aws/credential_provider.hpp"
#include "aws/provider_util.hpp"

namespace mcpdb::aws {
namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(1);
constexpr auto kTotalTimeout = std::chrono::seconds(2);

bool validRoleName(const std::string& role) {
  if (role.empty() || role.size() > 128) return false;
  for (unsigned char c : role) {
    if (!std::isalnum(c) &&
        std::string_view("+=,.@_-").find(static_cast<char>(c)) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

}  // namespace

ImdsProvider::ImdsProvider(Env env, HttpClientOptions http)
    : env_(std::move(env)), http_(std::move(http)) {}

Result<Credentials> ImdsProvider::get() {
  if (auto off = env_.get("AWS_EC2_METADATA_DISABLED"); off && detail::iequals(*off, "true")) {
    return makeError(Code::NotFound, "disabled by AWS_EC2_METADATA_DISABLED");
  }
  std::string endpoint;
  if (auto e = env_.get("AWS_EC2_METADATA_SERVICE_ENDPOINT")) {
    endpoint = *e;
  } else if (auto mode = env_.get("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
             mode && detail::iequals(*mode, "IPv6")) {
    endpoint = "http://[fd00:ec2::254]";
  } else {
    endpoint = "http://169.254.169.254";
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();

  std::lock_guard lock(mu_);
  // IMDSv2: a session token first (PUT with a TTL), then every read carries it.
  HttpRequest tokenReq;
  tokenReq.method = "PUT";
  tokenReq.url = endpoint + "/latest/api/token";
  tokenReq.headers = {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}};
  tokenReq.connectTimeout = kConnectTimeout;
  tokenReq.totalTimeout = kTotalTimeout;
  auto tokenRes = http_.send(tokenReq);
  if (!tokenRes.ok()) {
    return makeError(Code::NotFound, "not reachable at " + redactUrl(endpoint) + " (not on EC2?)");
  }
  if (tokenRes->status != 200 || tokenRes->body.empty()) {
    return makeError(Code::NotFound, "IMDSv2 session token refused (HTTP " +
                                         std::to_string(tokenRes->status) + ")");
  }
  const std::string token = detail::trim(tokenRes->body);

  auto read = [&](const std::string& path) {
    HttpRequest r;
    r.url = endpoint + path;
    r.headers = {{"X-aws-ec2-metadata-token", token}};
    r.connectTimeout = kConnectTimeout;
    r.totalTimeout = kTotalTimeout;
    return http_.send(r);
  };
  const std::string base = "/latest/meta-data/iam/security-credentials/";
  auto roleRes = read(base);
  if (!roleRes.ok())
    return makeError(roleRes.error().code, "instance metadata: " + roleRes.error().message);
  if (roleRes->status == 404)
    return makeError(Code::NotFound, "no IAM role attached to this instance");
  if (roleRes->status != 200) {
    return makeError(Code::Unavailable, "instance metadata role lookup answered HTTP " +
                                            std::to_string(roleRes->status));
  }
  std::string role = detail::trim(roleRes->body.substr(0, roleRes->body.find('\n')));
  if (!validRoleName(role))
    return makeError(Code::Internal, "instance metadata returned an invalid role name");

  auto credRes = read(base + role);
  if (!credRes.ok())
    return makeError(credRes.error().code, "instance metadata: " + credRes.error().message);
  if (credRes->status != 200) {
    return makeError(Code::Unavailable, "instance metadata credentials answered HTTP " +
                                            std::to_string(credRes->status));
  }
  return detail::credentialsFromJson(credRes->body, "instance metadata");
}

}  // namespace mcpdb::aws
