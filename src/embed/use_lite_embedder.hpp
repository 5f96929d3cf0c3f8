#pragma once
// The local USE-Lite provider: Tokenizer + UseLiteModel, loaded once from a model directory.

#include <filesystem>
#include <memory>

#include "embed/embedder.hpp"
#include "embed/tokenizer.hpp"
#include "embed/use_lite_model.hpp"

namespace mcpdb::embed {

struct UseLiteOptions {
  bool verify_model = true;
  std::size_t max_input_bytes = std::size_t{1024} * 1024;
  // OpenBLAS threads (process-wide setting; 0 = leave OpenBLAS's default / OPENBLAS_NUM_THREADS).
  int blas_threads = 1;
};

class UseLiteEmbedder final : public Embedder {
 public:
  // Loads dir/model.json, its shards and dir/vocab.json; checks every tensor and, when asked,
  // that a fixed sentence embeds to the reference's vector.
  static Result<std::unique_ptr<UseLiteEmbedder>> load(const std::filesystem::path& dir,
                                                       UseLiteOptions options = {});

  Result<std::vector<Vector>> embed(std::span<const std::string> texts) const override;
  std::size_t dimension() const override { return UseLiteModel::kOutputDim; }
  const std::string& modelId() const override { return modelId_; }

  const Tokenizer& tokenizer() const { return tokenizer_; }
  const UseLiteModel& model() const { return *model_; }

 private:
  UseLiteEmbedder(Tokenizer tokenizer, std::unique_ptr<UseLiteModel> model, UseLiteOptions options);
  Status verify() const;

  Tokenizer tokenizer_;
  std::unique_ptr<UseLiteModel> model_;
  UseLiteOptions options_;
  std::string modelId_{kUseLiteModelId};
};

}  // namespace mcpdb::embed
