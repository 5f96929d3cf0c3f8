#include "engines/dynamodb/runtime.hpp"

#include "engines/dynamodb/requests.hpp"
#include "engines/kit/module.hpp"

namespace mcpdb::dynamodb {

namespace {

Error sourceError(const Source& source, const std::string& what) {
  return engines::kit::sourceError(Code::FailedPrecondition, "dynamodb", source.name, what);
}

Result<std::string> regionOf(const Source& source, const Env& env) {
  if (!source.region.empty()) return source.region;
  if (auto region = env.get("AWS_REGION")) return std::move(*region);
  return sourceError(source, "AWS_REGION is not set (or give the source a region)");
}

Result<Endpoint> endpointOf(const Source& source, const Env& env, const std::string& region) {
  if (source.endpoint_env.empty()) {
    auto e = resolveEndpoint(env, region);
    if (!e) return sourceError(source, e.error().message);
    return e;
  }
  auto url = env.get(source.endpoint_env);
  if (!url) return sourceError(source, source.endpoint_env + " is not set");
  auto e = parseEndpoint(*url);
  if (!e) return sourceError(source, source.endpoint_env + ": " + e.error().message);
  return e;
}

CredentialSource credentialsOf(const Source& source, const Env& env,
                               const BackendOptions& options) {
  if (!source.access_key_id_env.empty()) {
    return variableCredentials(
        env, {source.access_key_id_env, source.secret_access_key_env, source.session_token_env},
        "dynamodb source '" + source.name + "'");
  }
  return options.credentials ? options.credentials : defaultCredentials(env);
}

}  // namespace

Result<std::shared_ptr<Transport>> makeTransport(const Source& source, const Env& env,
                                                 const BackendOptions& options) {
  auto r = regionOf(source, env);
  if (!r) return r.error();
  auto e = endpointOf(source, env, *r);
  if (!e) return e.error();
  TransportOptions t;
  t.region = std::move(*r);
  t.endpoint = std::move(*e);
  t.retry = options.retry;
  t.http = options.http;
  return std::make_shared<Transport>(std::move(t), credentialsOf(source, env, options));
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

Routes::Routes(std::shared_ptr<const Settings> settings, const Env& env,
               const BackendOptions& options)
    : settings_(std::move(settings)), transports_(std::make_shared<Transports>()) {
  for (const Source& s : settings_->sources) {
    auto slot =
        transports_->slot(s.name, [s, env, options] { return makeTransport(s, env, options); });
    backends_.push_back(std::make_shared<Backend>(s, std::move(slot)));
  }
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
