#include "engines/dynamodb/runtime.hpp"

#include "engines/dynamodb/requests.hpp"
#include "engines/kit/module.hpp"

namespace mcpdb::dynamodb {

Error Backend::sourceError(const std::string& what) const {
  return engines::kit::sourceError(Code::FailedPrecondition, "dynamodb", source_.name, what);
}

Status Backend::probe(const Target& target, std::chrono::steady_clock::time_point deadline,
                      const std::stop_token& stop) {
  auto t = transport();
  if (!t) return t.error();
  CallOptions opts;
  opts.stop = stop;
  opts.deadline = deadline;
  auto desc = (*t)->call(readOpName(ReadOp::DescribeTable), describeTableRequest(target), opts);
  if (!desc) return desc.error();
  return {};
}

Result<std::string> Backend::region() const {
  if (!source_.region.empty()) return source_.region;
  if (auto region = env_.get("AWS_REGION")) return std::move(*region);
  return sourceError("AWS_REGION is not set (or give the source a region)");
}

Result<Endpoint> Backend::endpoint(const std::string& region) const {
  if (source_.endpoint_env.empty()) {
    auto e = resolveEndpoint(env_, region);
    if (!e) return sourceError(e.error().message);
    return e;
  }
  auto url = env_.get(source_.endpoint_env);
  if (!url) return sourceError(source_.endpoint_env + " is not set");
  auto e = parseEndpoint(*url);
  if (!e) return sourceError(source_.endpoint_env + ": " + e.error().message);
  return e;
}

CredentialSource Backend::credentials() const {
  if (!source_.access_key_id_env.empty()) {
    return variableCredentials(
        env_, {source_.access_key_id_env, source_.secret_access_key_env, source_.session_token_env},
        "dynamodb source '" + source_.name + "'");
  }
  return options_.credentials ? options_.credentials : defaultCredentials(env_);
}

Result<std::shared_ptr<Transport>> Backend::transport() {
  std::lock_guard lock(mu_);
  if (transport_) return transport_;
  auto r = region();
  if (!r) return r.error();
  auto e = endpoint(*r);
  if (!e) return e.error();
  TransportOptions t;
  t.region = std::move(*r);
  t.endpoint = std::move(*e);
  t.retry = options_.retry;
  t.http = options_.http;
  transport_ = std::make_shared<Transport>(std::move(t), credentials());
  return transport_;
}

Routes::Routes(std::shared_ptr<const Settings> settings,
               std::vector<std::shared_ptr<Backend>> backends)
    : settings_(std::move(settings)), backends_(std::move(backends)) {
  if (backends_.size() == 1) only_source_ = backends_.front()->source().name;
  for (const Target& t : settings_->targets) {
    const Source* s = settings_->sourceOf(t);
    std::shared_ptr<Backend> backend;
    for (const auto& b : backends_) {
      if (s != nullptr && b->source().name == s->name) backend = b;
    }
    // A target without a source (a refused config) gets no route: it is an unknown target.
    if (backend) routes_.push_back({&t, std::move(backend)});
  }
}

const Route* Routes::find(std::string_view target) const {
  for (const Route& r : routes_) {
    if (r.target->name == target) return &r;
  }
  return nullptr;
}

std::vector<const Target*> Routes::targetsOf(const Backend& backend) const {
  std::vector<const Target*> out;
  for (const Route& r : routes_) {
    if (r.backend.get() == &backend) out.push_back(r.target);
  }
  return out;
}

}  // namespace mcpdb::dynamodb
