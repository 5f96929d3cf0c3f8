#include <cctype>
#include <ctime>
#include <optional>

#include "aws/credential_provider.hpp"
#include "aws/provider_util.hpp"
#include "aws/sigv4.hpp"
#include "aws/xml_fields.hpp"

namespace mcpdb::aws {
namespace {

// STS error codes are short identifiers ("InvalidIdentityToken"); anything else is not echoed.
std::string safeErrorCode(const std::optional<std::string>& code) {
  if (!code || code->empty() || code->size() > 64) return "unknown error";
  for (unsigned char c : *code) {
    if (!std::isalnum(c) && c != '.' && c != '_') return "unknown error";
  }
  return *code;
}

}  // namespace

Result<Credentials> assumeRoleWithWebIdentity(HttpClient& http, const std::string& endpoint,
                                              const std::string& roleArn,
                                              const std::string& sessionName,
                                              const std::string& tokenFile,
                                              const std::string& source) {
  auto token = detail::readSmallFile(tokenFile, "web identity token");
  if (!token.ok()) return token.error();
  const std::string jwt = detail::trim(*token);
  if (jwt.empty())
    return makeError(Code::FailedPrecondition,
                     "web identity token file " + tokenFile + " is empty");

  // Unsigned Query API call; POSTed as a form so the token never appears in a URL.
  HttpRequest req;
  req.method = "POST";
  req.url = endpoint + "/";
  req.headers = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
                 {"Accept", "text/xml"}};
  req.body =
      "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" + uriEncode(roleArn, false) +
      "&RoleSessionName=" + uriEncode(sessionName, false) +
      "&WebIdentityToken=" + uriEncode(jwt, false);
  auto res = http.send(req);
  if (!res.ok())
    return makeError(res.error().code, "STS AssumeRoleWithWebIdentity: " + res.error().message);
  if (res->status != 200) {
    // Only STS's error code is reported: its message text may quote request details.
    std::string code = safeErrorCode(xmlElementText(res->body, "Code"));
    Code mapped =
        res->status >= 500 || res->status == 429 ? Code::Unavailable : Code::PermissionDenied;
    return makeError(mapped, "STS AssumeRoleWithWebIdentity failed: HTTP " +
                                 std::to_string(res->status) + " " + code);
  }
  Credentials c;
  c.accessKeyId = xmlElementText(res->body, "AccessKeyId").value_or("");
  c.secretAccessKey = xmlElementText(res->body, "SecretAccessKey").value_or("");
  c.sessionToken = xmlElementText(res->body, "SessionToken").value_or("");
  c.source = source;
  if (c.accessKeyId.empty() || c.secretAccessKey.empty() || c.sessionToken.empty()) {
    return makeError(Code::Internal, "STS AssumeRoleWithWebIdentity response lacks credentials");
  }
  if (auto exp = xmlElementText(res->body, "Expiration")) {
    c.expiration = parseIso8601(*exp);
    if (!c.expiration)
      return makeError(Code::Internal,
                       "STS AssumeRoleWithWebIdentity returned an unreadable Expiration");
  }
  return c;
}

WebIdentityProvider::WebIdentityProvider(Env env, HttpClientOptions http)
    : env_(std::move(env)), http_(std::move(http)) {}

Result<Credentials> WebIdentityProvider::get() {
  auto tokenFile = env_.get("AWS_WEB_IDENTITY_TOKEN_FILE");
  auto roleArn = env_.get("AWS_ROLE_ARN");
  if (!tokenFile && !roleArn)
    return makeError(Code::NotFound, "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN not set");
  if (!tokenFile)
    return makeError(Code::FailedPrecondition,
                     "AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not");
  if (!roleArn)
    return makeError(Code::FailedPrecondition,
                     "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not");
  std::string session = env_.get("AWS_ROLE_SESSION_NAME")
                            .value_or("mcp-dbserver-" + std::to_string(std::time(nullptr)));
  std::lock_guard lock(mu_);
  return assumeRoleWithWebIdentity(http_, stsEndpoint(env_), *roleArn, session, *tokenFile,
                                   "web identity");
}

}  // namespace mcpdb::aws
