#include <filesystem>

#include "aws/credential_provider.hpp"
#include "aws/provider_util.hpp"
#include "aws/shared_config.hpp"

namespace mcpdb::aws {

ProfileProvider::ProfileProvider(Env env, HttpClientOptions http)
    : env_(std::move(env)), http_(std::move(http)) {}

Result<Credentials> ProfileProvider::get() {
  auto explicitProfile = env_.get("AWS_PROFILE");
  if (!explicitProfile) explicitProfile = env_.get("AWS_DEFAULT_PROFILE");
  const std::string profile = explicitProfile.value_or("default");
  const std::string home = env_.get("HOME").value_or("");

  struct Source {
    std::string path;
    SharedFileKind kind;
  };
  std::vector<Source> files;
  if (auto p = env_.get("AWS_CONFIG_FILE")) {
    files.push_back({detail::expandHome(*p, home), SharedFileKind::Config});
  } else if (!home.empty()) {
    files.push_back({home + "/.aws/config", SharedFileKind::Config});
  }
  // The credentials file comes second so that its values win over the config file's.
  if (auto p = env_.get("AWS_SHARED_CREDENTIALS_FILE")) {
    files.push_back({detail::expandHome(*p, home), SharedFileKind::Credentials});
  } else if (!home.empty()) {
    files.push_back({home + "/.aws/credentials", SharedFileKind::Credentials});
  }

  ProfileValues merged;
  bool found = false;
  std::string searched;
  for (const auto& f : files) {
    if (!searched.empty()) searched += ", ";
    searched += f.path;
    std::error_code ec;
    if (!std::filesystem::exists(f.path, ec)) continue;
    auto text = detail::readSmallFile(f.path, "AWS shared");
    if (!text.ok()) return text.error();
    auto profiles = parseSharedFile(*text, f.kind, f.path);
    if (!profiles.ok()) return profiles.error();
    auto it = profiles->find(profile);
    if (it == profiles->end()) continue;
    found = true;
    for (auto& [k, v] : it->second) merged[k] = v;
  }
  if (!found) {
    if (explicitProfile) {
      return makeError(Code::FailedPrecondition, "AWS profile '" + profile + "' not found in " +
                                                     (searched.empty() ? "(no files)" : searched));
    }
    return makeError(Code::NotFound, "no profile '" + profile + "' in " +
                                         (searched.empty() ? "(no HOME)" : searched));
  }

  const std::string source = "profile " + profile;
  auto value = [&](const char* key) -> std::string {
    auto it = merged.find(key);
    return it == merged.end() ? std::string() : it->second;
  };
  const std::string id = value("aws_access_key_id");
  const std::string secret = value("aws_secret_access_key");
  if (!id.empty() || !secret.empty()) {
    if (id.empty() || secret.empty()) {
      return makeError(
          Code::FailedPrecondition,
          "AWS profile '" + profile + "' needs both aws_access_key_id and aws_secret_access_key");
    }
    Credentials c;
    c.accessKeyId = id;
    c.secretAccessKey = secret;
    c.sessionToken = value("aws_session_token");
    c.source = source;
    return c;
  }
  if (!value("role_arn").empty() && !value("web_identity_token_file").empty()) {
    std::string session = value("role_session_name");
    if (session.empty()) session = "mcp-dbserver";
    std::lock_guard lock(mu_);
    return assumeRoleWithWebIdentity(http_, stsEndpoint(env_), value("role_arn"), session,
                                     detail::expandHome(value("web_identity_token_file"), home),
                                     source + " (web identity)");
  }
  for (const char* unsupported : {"credential_process", "sso_session", "sso_start_url",
                                  "source_profile", "credential_source", "role_arn"}) {
    if (!value(unsupported).empty()) {
      return makeError(Code::FailedPrecondition,
                       "AWS profile '" + profile + "' uses " + unsupported +
                           ", which mcp-dbserver does not support; use static keys, "
                           "web identity, container or instance credentials");
    }
  }
  return makeError(Code::NotFound, "AWS profile '" + profile + "' has no credentials");
}

}  // namespace mcpdb::aws
