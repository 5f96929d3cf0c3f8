#include "aws/credential_provider.hpp"

#include "aws/provider_util.hpp"

namespace mcpdb::aws {

CachingProvider::CachingProvider(std::unique_ptr<CredentialProvider> inner,
                                 std::chrono::seconds refreshBefore, Now now)
    : inner_(std::move(inner)), refreshBefore_(refreshBefore), now_(std::move(now)) {}

Result<Credentials> CachingProvider::get() {
  std::lock_guard lock(mu_);
  const auto now = now_();
  if (cached_ && (!cached_->expiration || now < *cached_->expiration - refreshBefore_))
    return *cached_;
  auto fresh = inner_->get();
  if (fresh.ok()) {
    cached_ = *fresh;
    return fresh;
  }
  // Refresh failed: keep serving credentials that are still valid, retrying on the next call.
  if (cached_ && cached_->expiration && now < *cached_->expiration) return *cached_;
  cached_.reset();
  return fresh;
}

ChainProvider::ChainProvider(std::vector<std::unique_ptr<CredentialProvider>> providers)
    : providers_(std::move(providers)) {}

Result<Credentials> ChainProvider::get() {
  std::lock_guard lock(mu_);
  if (active_) {
    auto r = providers_[*active_]->get();
    if (r.ok()) return r;
    active_.reset();  // the source that worked stopped working: look again from the top
  }
  std::string tried;
  for (std::size_t i = 0; i < providers_.size(); ++i) {
    auto r = providers_[i]->get();
    if (r.ok()) {
      active_ = i;
      return r;
    }
    if (r.error().code != Code::NotFound) {
      return makeError(r.error().code,
                       "AWS credentials (" + providers_[i]->name() + "): " + r.error().message);
    }
    if (!tried.empty()) tried += "; ";
    tried += providers_[i]->name() + ": " + r.error().message;
  }
  return makeError(Code::NotFound, "no AWS credentials found (" + tried + ")");
}

std::string stsEndpoint(const Env& env) {
  auto ignore = env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
  if (!ignore || !detail::iequals(*ignore, "true")) {
    for (auto var : {"AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"}) {
      if (auto url = env.get(var)) {
        std::string u = *url;
        while (!u.empty() && u.back() == '/') u.pop_back();
        return u;
      }
    }
  }
  auto region = env.get("AWS_REGION");
  if (!region) region = env.get("AWS_DEFAULT_REGION");
  if (!region) return "https://sts.amazonaws.com";
  const std::string suffix = region->rfind("cn-", 0) == 0 ? ".amazonaws.com.cn" : ".amazonaws.com";
  return "https://sts." + *region + suffix;
}

std::unique_ptr<CredentialProvider> makeDefaultCredentialChain(const Env& env,
                                                               ChainOptions options) {
  std::vector<std::unique_ptr<CredentialProvider>> sources;
  auto add = [&](std::unique_ptr<CredentialProvider> p) {
    sources.push_back(
        std::make_unique<CachingProvider>(std::move(p), options.refreshBefore, options.now));
  };
  add(std::make_unique<EnvironmentProvider>(env));
  add(std::make_unique<ProfileProvider>(env, options.http));
  add(std::make_unique<WebIdentityProvider>(env, options.http));
  add(std::make_unique<ContainerProvider>(env, options.http));
  add(std::make_unique<ImdsProvider>(env, options.http));
  return std::make_unique<ChainProvider>(std::move(sources));
}

}  // namespace mcpdb::aws
