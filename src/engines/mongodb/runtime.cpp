#include "engines/mongodb/runtime.hpp"

#include "engines/kit/module.hpp"
#include "engines/mongodb/commands.hpp"

namespace mcpdb::mongodb {

Status SourceClient::probe() {
  auto c = client();
  if (!c) return c.error();
  auto reply = (*c)->readCommand(*pingCommand());
  if (!reply) return reply.error();
  return {};
}

Runtime::Runtime(const Settings& settings, Env env, std::chrono::milliseconds io_timeout)
    : env_(std::move(env)), read_preference_(settings.read_preference), io_timeout_(io_timeout) {
  for (const auto& s : settings.sources) {
    auto slot = clients_.slot(s.name, [this, s] { return open(s); });
    sources_.push_back(std::make_unique<SourceClient>(s, std::move(slot)));
  }
}

SourceClient* Runtime::find(std::string_view name) {
  for (auto& s : sources_) {
    if (s->source().name == name) return s.get();
  }
  return nullptr;
}

Result<std::shared_ptr<Client>> Runtime::open(const Source& source) const {
  const auto failed = [&source](Code code, const std::string& what) {
    return engines::kit::sourceError(code, "mongodb", source.name, what);
  };
  const auto uri = env_.get(source.uri_env);
  if (!uri) return failed(Code::FailedPrecondition, source.uri_env + " is not set");
  std::string database = source.database;
  if (database.empty()) {
    const auto db = env_.get(source.database_env);
    if (!db) return failed(Code::FailedPrecondition, source.database_env + " is not set");
    if (auto p = databaseNameProblem(*db); !p.empty()) {
      return failed(Code::FailedPrecondition, source.database_env + " " + p);
    }
    database = *db;
  }
  auto c = Client::create(*uri, std::move(database), read_preference_, io_timeout_,
                          "mongodb source '" + source.name + "' (" + source.uri_env + ")");
  if (!c) {
    // Client::create's messages name no variable and never quote the URI.
    return failed(c.error().code, source.uri_env + " " + c.error().message);
  }
  return std::shared_ptr<Client>(std::move(*c));
}

}  // namespace mcpdb::mongodb
