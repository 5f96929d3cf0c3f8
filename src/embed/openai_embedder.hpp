#pragma once
// OpenAI-compatible embeddings provider: POST {model, input: [...]} to .../v1/embeddings.
// Retries 429 / 5xx / connection failures with exponential backoff (Retry-After honoured);
// checks every returned vector's width against the configured dimension. The API key is only
// ever put in the Authorization header: no error message, log line or modelId() carries it, and
// response bodies are never echoed (a provider may quote the key or the input back).

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/http_client.hpp"
#include "embed/embedder.hpp"

namespace mcpdb::embed {

struct OpenAiOptions {
  std::string url;  // the full .../embeddings endpoint (see resolveEmbeddingsUrl)
  std::string model;
  std::string apiKey;  // may be empty (local servers); never logged
  std::size_t dimension = 0;
  bool sendDimensions = false;
  std::chrono::milliseconds timeout{15000};
  std::chrono::milliseconds connectTimeout{3000};
  int maxRetries = 3;
  std::chrono::milliseconds initialBackoff{250};
  std::chrono::milliseconds maxBackoff{8000};
  std::size_t maxBatch = 96;
  std::size_t maxInputBytes = std::size_t{1024} * 1024;
  // Waits between attempts; tests replace it to record the delays instead of sleeping.
  std::function<void(std::chrono::milliseconds)> sleep;
};

// ".../embeddings" stays as is; "http://h/v1" -> "http://h/v1/embeddings"; "http://h" ->
// "http://h/v1/embeddings".
std::string resolveEmbeddingsUrl(std::string_view url);

class OpenAiEmbedder final : public Embedder {
 public:
  static Result<std::unique_ptr<OpenAiEmbedder>> create(OpenAiOptions options);

  Result<std::vector<Vector>> embed(std::span<const std::string> texts) const override;
  std::size_t dimension() const override { return options_.dimension; }
  const std::string& modelId() const override { return modelId_; }

 private:
  explicit OpenAiEmbedder(OpenAiOptions options);
  Result<std::vector<Vector>> embedBatch(std::span<const std::string> texts) const;
  std::unique_ptr<HttpClient> acquireClient() const;
  void releaseClient(std::unique_ptr<HttpClient> client) const;

  OpenAiOptions options_;
  std::string modelId_;
  std::string where_;  // scheme://host:port, safe for messages
  // HttpClient is single-threaded: keep idle clients (and their keep-alive connections) here.
  mutable std::mutex poolMutex_;
  mutable std::vector<std::unique_ptr<HttpClient>> pool_;
};

}  // namespace mcpdb::embed
