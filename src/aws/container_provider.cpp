#include <cctype>
#include <string>

#include "aws/credential_provider.hpp"
#include "aws/provider_util.hpp"

namespace mcpdb::aws {
namespace {

// Host part of an http(s) URL ("[::1]" keeps its brackets), lower-cased.
std::string urlHost(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  auto rest = url.substr(scheme + 3);
  auto authority = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = authority.rfind('@'); at != std::string_view::npos)
    authority = authority.substr(at + 1);
  std::string_view host;
  if (!authority.empty() && authority.front() == '[') {
    host = authority.substr(0, authority.find(']') + 1);
  } else {
    host = authority.substr(0, authority.find(':'));
  }
  std::string out(host);
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The AWS SDKs accept plain http only to loopback or to the ECS / EKS Pod Identity agents.
bool httpHostAllowed(const std::string& host) {
  if (host == "localhost" || host == "[::1]" || host == "169.254.170.2" ||
      host == "169.254.170.23" || host == "[fd00:ec2::23]") {
    return true;
  }
  if (host.rfind("127.", 0) != 0) return false;
  return host.find_first_not_of("0123456789.") == std::string::npos;
}

}  // namespace

ContainerProvider::ContainerProvider(Env env, HttpClientOptions http, std::string relativeBase)
    : env_(std::move(env)), relativeBase_(std::move(relativeBase)), http_(std::move(http)) {}

Result<Credentials> ContainerProvider::get() {
  std::string url;
  if (auto rel = env_.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
    url = relativeBase_ + (rel->front() == '/' ? "" : "/") + *rel;
  } else if (auto full = env_.get("AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
    url = *full;
    const bool https = url.rfind("https://", 0) == 0;
    const bool http = url.rfind("http://", 0) == 0;
    if (!https && !(http && httpHostAllowed(urlHost(url)))) {
      return makeError(
          Code::FailedPrecondition,
          "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, or http to a loopback or the ECS/EKS "
          "agent address (got " +
              redactUrl(url) + ")");
    }
  } else {
    return makeError(
        Code::NotFound,
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI not set");
  }

  HttpRequest req;
  req.url = url;
  req.headers = {{"Accept", "application/json"}};
  req.connectTimeout = std::chrono::seconds(2);
  req.totalTimeout = std::chrono::seconds(5);
  std::optional<std::string> auth;
  if (auto file = env_.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")) {
    auto text = detail::readSmallFile(*file, "container authorization token");
    if (!text.ok()) return text.error();
    auth = detail::trim(*text);
  } else if (auto token = env_.get("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
    auth = *token;
  }
  if (auth) {
    if (auth->find_first_of("\r\n") != std::string::npos) {
      return makeError(Code::FailedPrecondition,
                       "container authorization token contains a line break");
    }
    req.headers.emplace_back("Authorization", *auth);
  }

  std::lock_guard lock(mu_);
  auto res = http_.send(req);
  if (!res.ok())
    return makeError(res.error().code, "container credentials endpoint: " + res.error().message);
  if (res->status != 200) {
    Code code =
        res->status >= 500 || res->status == 429 ? Code::Unavailable : Code::PermissionDenied;
    return makeError(code, "container credentials endpoint " + redactUrl(url) + " answered HTTP " +
                               std::to_string(res->status));
  }
  return detail::credentialsFromJson(res->body, "container credentials");
}

}  // namespace mcpdb::aws
