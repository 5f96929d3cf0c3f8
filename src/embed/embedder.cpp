#include "embed/embedder.hpp"

#include <filesystem>
#include <fstream>

#include <charconv>

#include "common/json.hpp"
#include "embed/openai_embedder.hpp"
#include "embed/use_lite_embedder.hpp"

namespace mcpdb::embed {

Result<Vector> Embedder::embedOne(std::string_view text) const {
  const std::string owned(text);
  auto r = embed(std::span<const std::string>(&owned, 1));
  if (!r.ok()) return r.error();
  return std::move(r.value().front());
}

namespace {

// The use-lite model's folder, once seen to hold model.json and vocab.json.
Result<std::string> useLiteDir(const EmbedConfig& config, const Env& env) {
  std::string dir = config.model_dir;
  if (dir.empty()) dir = env.get("MCPDB_EMBED_MODEL_DIR").value_or("");
  if (dir.empty()) {
    return makeError(
        Code::FailedPrecondition,
        "no embedding model directory: set embedding.model_dir in the config or the "
        "MCPDB_EMBED_MODEL_DIR environment variable to the folder holding model.json and "
        "vocab.json (scripts/install.sh puts it in tools/node_modules/@energetic-ai/"
        "model-embeddings-en/dist)");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / "model.json", ec) ||
      !std::filesystem::is_regular_file(std::filesystem::path(dir) / "vocab.json", ec)) {
    return makeError(
        Code::FailedPrecondition,
        "embedding model directory " + dir +
            " has no readable model.json and vocab.json: check embedding.model_dir in the "
            "config or the MCPDB_EMBED_MODEL_DIR environment variable (run scripts/install.sh "
            "to fetch the model)");
  }
  return dir;
}

// Every weight shard model.json names is a file beside it (the weights are not read).
Status checkShards(const std::string& dir) {
  const auto model = std::filesystem::path(dir) / "model.json";
  std::ifstream in(model);
  const Json doc = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  const auto manifest = doc.is_object() ? doc.find("weightsManifest") : doc.end();
  if (!doc.is_object() || manifest == doc.end() || !manifest->is_array()) {
    return makeError(Code::FailedPrecondition,
                     model.string() +
                         " is not a model manifest (run scripts/install.sh to "
                         "restore the model)");
  }
  std::error_code ec;
  for (const Json& group : *manifest) {
    const auto paths = group.is_object() ? group.find("paths") : group.end();
    if (!group.is_object() || paths == group.end() || !paths->is_array()) continue;
    for (const Json& p : *paths) {
      if (!p.is_string()) continue;
      const auto shard = std::filesystem::path(dir) / p.get<std::string>();
      if (!std::filesystem::is_regular_file(shard, ec)) {
        return makeError(Code::FailedPrecondition,
                         "embedding model directory " + dir + " lacks the weight file " +
                             p.get<std::string>() +
                             " that model.json names (run scripts/install.sh to restore the "
                             "model)");
      }
    }
  }
  return {};
}

Result<std::unique_ptr<Embedder>> makeUseLite(const EmbedConfig& config, const Env& env) {
  auto found = useLiteDir(config, env);
  if (!found) return found.error();
  const std::string& dir = *found;
  auto e = UseLiteEmbedder::load(
      dir, UseLiteOptions{config.verify_model, config.max_input_bytes, config.blas_threads});
  if (!e.ok()) {
    return makeError(e.error().code,
                     e.error().message +
                         " (embedding.model_dir / MCPDB_EMBED_MODEL_DIR; run scripts/install.sh "
                         "to restore the model)");
  }
  return std::unique_ptr<Embedder>(std::move(e.value()));
}

Result<std::unique_ptr<Embedder>> makeOpenAi(const EmbedConfig& config, const Env& env) {
  OpenAiOptions o;
  const std::string url =
      !config.url.empty() ? config.url : env.get("MCPDB_EMBED_URL").value_or("");
  if (url.empty()) {
    return makeError(
        Code::FailedPrecondition,
        "embedding provider openai needs an endpoint: set embedding.url in the config or the "
        "MCPDB_EMBED_URL environment variable");
  }
  o.url = resolveEmbeddingsUrl(url);
  o.model = !config.model.empty() ? config.model : env.get("MCPDB_EMBED_MODEL").value_or("");
  o.dimension = config.dimension;
  if (o.dimension == 0) {
    if (auto d = env.get("MCPDB_EMBED_DIMENSION")) {
      std::size_t v = 0;
      auto [p, ec] = std::from_chars(d->data(), d->data() + d->size(), v);
      if (ec != std::errc() || p != d->data() + d->size()) {
        return makeError(Code::FailedPrecondition,
                         "MCPDB_EMBED_DIMENSION must be a positive integer");
      }
      o.dimension = v;
    }
  }
  o.apiKey = env.get("MCPDB_EMBED_API_KEY").value_or("");
  o.sendDimensions = config.send_dimensions;
  o.timeout = config.timeout;
  o.connectTimeout = config.connect_timeout;
  o.maxRetries = config.max_retries;
  o.initialBackoff = config.initial_backoff;
  o.maxBackoff = config.max_backoff;
  o.maxBatch = config.max_batch;
  o.maxInputBytes = config.max_input_bytes;
  auto e = OpenAiEmbedder::create(std::move(o));
  if (!e.ok()) return e.error();
  return std::unique_ptr<Embedder>(std::move(e.value()));
}

}  // namespace

Result<std::unique_ptr<Embedder>> makeEmbedder(const EmbedConfig& config, const Env& env) {
  if (config.provider == "use-lite" || config.provider.empty()) return makeUseLite(config, env);
  if (config.provider == "openai") return makeOpenAi(config, env);
  return makeError(
      Code::FailedPrecondition,
      "embedding.provider must be \"use-lite\" or \"openai\", not \"" + config.provider + "\"");
}

Status checkEmbedderSetup(const EmbedConfig& config, const Env& env) {
  if (config.provider == "openai") {
    if (config.url.empty() && !env.has("MCPDB_EMBED_URL")) {
      return makeError(Code::FailedPrecondition,
                       "embedding provider openai needs an endpoint: set embedding.url in the "
                       "config or the MCPDB_EMBED_URL environment variable");
    }
    return {};
  }
  auto dir = useLiteDir(config, env);
  if (!dir) return dir.error();
  return checkShards(*dir);
}

}  // namespace mcpdb::embed
