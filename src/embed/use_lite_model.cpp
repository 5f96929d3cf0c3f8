#include "embed/use_lite_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "embed/blas.hpp"

namespace mcpdb::embed {
namespace {

constexpr std::size_t kEmbedDim = 256;
constexpr std::size_t kHeads = 4;
constexpr std::size_t kFfnDim = 1536;
constexpr std::size_t kVocabRows = 8002;
// Sentences are packed into chunks of at most this many token rows so that the dense layers run
// as one GEMM while the per-thread buffers stay small (~4 MB).
constexpr std::size_t kChunkRows = 256;

const std::string kApply = "module_apply_default/Encoder_en/KonaTransformer/";
const std::string kModule = "module/Encoder_en/KonaTransformer/";

struct Scratch {
  std::vector<float> x0, h, ln, qkv, attn, ffn, scores, pooled;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// C[m x n] = A[m x k] @ B[k x n] + bias (broadcast over rows); row-major, contiguous.
void denseBias(const float* a, std::size_t m, std::size_t k, std::span<const float> b,
               std::span<const float> bias, std::size_t n, float* c) {
  for (std::size_t r = 0; r < m; ++r) std::copy(bias.begin(), bias.end(), c + r * n);
  blas::sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(k), b.data(), static_cast<int>(n),
              1.0f, c, static_cast<int>(n));
}

// C += A @ B + bias (the residual connection).
void addDenseBias(const float* a, std::size_t m, std::size_t k, std::span<const float> b,
                  std::span<const float> bias, std::size_t n, float* c) {
  for (std::size_t r = 0; r < m; ++r) {
    float* row = c + r * n;
    for (std::size_t j = 0; j < n; ++j) row[j] += bias[j];
  }
  blas::sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(k), b.data(), static_cast<int>(n),
              1.0f, c, static_cast<int>(n));
}

// Layer norm over the last axis, as the graph spells it: scale * rsqrt(mean((x-mu)^2) + eps) *
// (x-mu) + bias.
void layerNorm(const float* x, std::size_t rows, std::size_t width, std::span<const float> scale,
               std::span<const float> bias, float eps, float* y) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* in = x + r * width;
    float* out = y + r * width;
    double sum = 0;
    for (std::size_t j = 0; j < width; ++j) sum += in[j];
    const auto mean = static_cast<float>(sum / static_cast<double>(width));
    double sq = 0;
    for (std::size_t j = 0; j < width; ++j) {
      const double d = in[j] - mean;
      sq += d * d;
    }
    const auto inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(width) + eps));
    for (std::size_t j = 0; j < width; ++j) out[j] = (scale[j] * inv) * (in[j] - mean) + bias[j];
  }
}

void softmaxRows(float* s, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = s + r * cols;
    const float mx = *std::max_element(row, row + cols);
    double sum = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      row[j] = std::exp(row[j] - mx);
      sum += row[j];
    }
    const auto inv = static_cast<float>(1.0 / sum);
    for (std::size_t j = 0; j < cols; ++j) row[j] *= inv;
  }
}

// One pre-norm transformer block applied in place to h (rows x 512). For layer 0 the input is x0
// (rows x 256) and h already holds the projected residual.
void transformerLayer(const UseLiteModel::Layer& L, const float* input, std::size_t rows,
                      std::span<const std::vector<std::int32_t>> batch, std::size_t maxTokens,
                      float eps, Scratch& s) {
  const std::size_t w = L.width;
  const std::size_t w3 = 3 * w;
  layerNorm(input, rows, w, L.lnScale, L.lnBias, eps, s.ln.data());
  denseBias(s.ln.data(), rows, w, L.qkvW, L.qkvB, w3, s.qkv.data());

  // Attention never crosses sentences: each sentence's rows attend among themselves.
  std::size_t r0 = 0;
  for (const auto& ids : batch) {
    const std::size_t t = std::min(ids.size(), maxTokens);
    if (t == 0) continue;
    for (std::size_t head = 0; head < kHeads; ++head) {
      const float* q = s.qkv.data() + r0 * w3 + head * L.headDim;
      const float* k = q + w;
      const float* v = q + 2 * w;
      blas::sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(t), static_cast<int>(t),
                  static_cast<int>(L.headDim), L.queryScale, q, static_cast<int>(w3), k,
                  static_cast<int>(w3), 0.0f, s.scores.data(), static_cast<int>(t));
      softmaxRows(s.scores.data(), t, t);
      blas::sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(t),
                  static_cast<int>(L.headDim), static_cast<int>(t), 1.0f, s.scores.data(),
                  static_cast<int>(t), v, static_cast<int>(w3), 0.0f,
                  s.attn.data() + r0 * w + head * L.headDim, static_cast<int>(w));
    }
    r0 += t;
  }
  addDenseBias(s.attn.data(), rows, w, L.outW, L.outB, UseLiteModel::kOutputDim, s.h.data());

  // Position-wise FFN with its own pre-norm and residual.
  constexpr std::size_t d = UseLiteModel::kOutputDim;
  layerNorm(s.h.data(), rows, d, L.ffnLnScale, L.ffnLnBias, eps, s.ln.data());
  denseBias(s.ln.data(), rows, d, L.ffn1W, L.ffn1B, kFfnDim, s.ffn.data());
  for (std::size_t i = 0; i < rows * kFfnDim; ++i) s.ffn[i] = std::max(s.ffn[i], 0.0f);
  addDenseBias(s.ffn.data(), rows, kFfnDim, L.ffn2W, L.ffn2B, d, s.h.data());
}

}  // namespace

Result<std::unique_ptr<UseLiteModel>> UseLiteModel::load(const std::filesystem::path& dir) {
  if (auto st = blas::load(); !st.ok()) return st.error();
  auto store = WeightStore::load(dir);
  if (!store.ok()) return store.error();
  std::unique_ptr<UseLiteModel> m(new UseLiteModel());
  m->store_ = std::move(store.value());
  if (auto st = m->bind(); !st.ok()) return st.error();
  return m;
}

Status UseLiteModel::bind() {
  Status status;
  auto f = [&](const std::string& name,
               std::initializer_list<std::int64_t> shape) -> std::span<const float> {
    auto r = store_.floats(name, shape);
    if (!r.ok()) {
      if (status.ok()) status = r.error();
      return {};
    }
    return *r;
  };
  auto scalar = [&](const std::string& name) -> float {
    auto v = f(name, {});
    return v.empty() ? 0.0f : v[0];
  };
  auto ints = [&](const std::string& name,
                  std::initializer_list<std::int64_t> shape) -> std::vector<std::int32_t> {
    auto r = store_.ints(name, shape);
    if (!r.ok()) {
      if (status.ok()) status = r.error();
      return {};
    }
    return *r;
  };
  const std::string stack = kApply + "Encode/TransformerStack/";

  embeddings_ = f("module/Embeddings_en", {static_cast<std::int64_t>(kVocabRows), kEmbedDim});
  vocabRows_ = kVocabRows;
  invTimescales_ =
      f(stack + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", {1, kEmbedDim / 2});
  residualW_ = f(kApply + "Encode/Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat",
                 {kEmbedDim, kOutputDim});
  residualB_ = f(kApply + "Encode/Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat",
                 {kOutputDim});
  tanhW_ = f("module/Encoder_en/hidden_layers/tanh_layer_0/weights", {kOutputDim, kOutputDim});
  tanhB_ = f("module/Encoder_en/hidden_layers/tanh_layer_0/bias", {kOutputDim});
  epsilon_ = scalar(stack + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x");
  l2Floor_ = scalar("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y");
  auto maxLen = ints(kApply + "ClipToMaxLength/Less/y", {});
  auto heads = ints(stack +
                        "Layer_1/TransformerLayer/MultiheadAttention/split_heads/"
                        "split_last_dimension/Reshape/shape/2",
                    {});

  for (std::size_t i = 0; i < 2; ++i) {
    Layer& L = layers_[i];
    const auto n = std::to_string(i);
    const auto w = static_cast<std::int64_t>(i == 0 ? kEmbedDim : kOutputDim);
    L.width = static_cast<std::size_t>(w);
    L.headDim = L.width / kHeads;
    const std::string layer = (kApply + "Encode/Layer_").append(n).append("/TransformerLayer/");
    const std::string stackLayer = (stack + "Layer_").append(n).append("/TransformerLayer/");
    const std::string kernels =
        (kModule + "Encode/Layer_").append(n).append("/TransformerLayer/MultiheadAttention/");
    L.queryScale = scalar(stackLayer + "MultiheadAttention/mul/y");
    L.lnScale =
        f(layer + "layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", {w});
    L.lnBias =
        f(layer + "layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", {w});
    L.qkvW = f(kernels + "qkv_transform_single/kernel/part_0", {1, 1, w, 3 * w});
    L.qkvB =
        f(layer + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", {3 * w});
    L.outW = f(kernels + "output_transform_single/kernel/part_0", {1, 1, w, kOutputDim});
    L.outB = f(layer + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat",
               {kOutputDim});
    L.ffnLnScale =
        f(layer + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat",
          {kOutputDim});
    L.ffnLnBias =
        f(layer + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat",
          {kOutputDim});
    L.ffn1W = f(stackLayer + "FFN/conv1/Tensordot/Reshape_1", {kOutputDim, kFfnDim});
    L.ffn1B = f(layer + "FFN/conv1/bias/ConcatPartitions/concat", {kFfnDim});
    L.ffn2W = f(stackLayer + "FFN/conv2/Tensordot/Reshape_1", {kFfnDim, kOutputDim});
    L.ffn2B = f(layer + "FFN/conv2/bias/ConcatPartitions/concat", {kOutputDim});
    // The q/k/v split and per-head width are structural: check the graph agrees with this code.
    auto split = ints(stackLayer + "MultiheadAttention/Const", {3});
    auto headDim = ints(
        stackLayer + "MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3", {});
    if (status.ok() && (split != std::vector<std::int32_t>(3, static_cast<std::int32_t>(w)) ||
                        headDim[0] != static_cast<std::int32_t>(L.headDim))) {
      status = makeError(
          Code::FailedPrecondition,
          "model layer " + n + " attention layout is not 4 heads of " + std::to_string(L.headDim));
    }
    if (status.ok() &&
        std::abs(L.queryScale - 1.0f / std::sqrt(static_cast<float>(L.headDim))) > 1e-6f) {
      status = makeError(Code::FailedPrecondition,
                         "model layer " + n + " has an unexpected attention scale");
    }
  }
  if (!status.ok()) return status;
  if (heads[0] != static_cast<std::int32_t>(kHeads)) {
    return makeError(Code::FailedPrecondition, "model does not have 4 attention heads");
  }
  if (maxLen[0] < 1 || maxLen[0] > 4096)
    return makeError(Code::FailedPrecondition, "model max length is out of range");
  maxTokens_ = static_cast<std::size_t>(maxLen[0]);
  // The timing signal only depends on the position: tabulate it once. Like the graph, the angle
  // is a float32 product; sin/cos are taken in double and rounded.
  const std::size_t half = kEmbedDim / 2;
  timing_.resize(maxTokens_ * kEmbedDim);
  for (std::size_t p = 0; p < maxTokens_; ++p) {
    for (std::size_t j = 0; j < half; ++j) {
      const float arg = static_cast<float>(p) * invTimescales_[j];
      timing_[p * kEmbedDim + j] = static_cast<float>(std::sin(static_cast<double>(arg)));
      timing_[p * kEmbedDim + half + j] = static_cast<float>(std::cos(static_cast<double>(arg)));
    }
  }
  if (!(epsilon_ > 0 && epsilon_ < 1e-2f) || !(l2Floor_ > 0 && l2Floor_ < 1e-3f)) {
    return makeError(Code::FailedPrecondition, "model normalisation constants are out of range");
  }
  return {};
}

void UseLiteModel::forward(std::span<const std::vector<std::int32_t>> batch,
                           std::span<float> out) const {
  std::size_t i = 0;
  while (i < batch.size()) {
    std::size_t rows = 0;
    std::size_t j = i;
    while (j < batch.size()) {
      const std::size_t t = std::min(batch[j].size(), maxTokens_);
      if (j > i && rows + t > std::max(kChunkRows, maxTokens_)) break;
      rows += t;
      ++j;
    }
    runChunk(batch.subspan(i, j - i), rows, out.data() + i * kOutputDim);
    i = j;
  }
}

void UseLiteModel::runChunk(std::span<const std::vector<std::int32_t>> batch, std::size_t rows,
                            float* out) const {
  Scratch& s = scratch();
  const std::size_t r = std::max<std::size_t>(rows, 1);
  s.x0.resize(r * kEmbedDim);
  s.h.resize(r * kOutputDim);
  s.ln.resize(r * kOutputDim);
  s.qkv.resize(r * 3 * kOutputDim);
  s.attn.resize(r * kOutputDim);
  s.ffn.resize(r * kFfnDim);
  s.scores.resize(maxTokens_ * maxTokens_);
  s.pooled.resize(batch.size() * kOutputDim);

  // Token embedding plus sinusoidal timing signal, in the graph's order: E + (E + timing).
  std::size_t row = 0;
  for (const auto& ids : batch) {
    const std::size_t t = std::min(ids.size(), maxTokens_);
    for (std::size_t p = 0; p < t; ++p, ++row) {
      const float* e = embeddings_.data() + static_cast<std::size_t>(ids[p]) * kEmbedDim;
      float* x = s.x0.data() + row * kEmbedDim;
      const float* timing = timing_.data() + p * kEmbedDim;
      for (std::size_t j = 0; j < kEmbedDim; ++j) x[j] = e[j] + (e[j] + timing[j]);
    }
  }

  if (rows > 0) {
    // Layer 0's residual is projected from 256 to 512 wide.
    denseBias(s.x0.data(), rows, kEmbedDim, residualW_, residualB_, kOutputDim, s.h.data());
    transformerLayer(layers_[0], s.x0.data(), rows, batch, maxTokens_, epsilon_, s);
    transformerLayer(layers_[1], s.h.data(), rows, batch, maxTokens_, epsilon_, s);
  }

  // Mean over each sentence's tokens; an empty sentence pools to zeros (divisor max(len, 1)).
  row = 0;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const std::size_t t = std::min(batch[k].size(), maxTokens_);
    float* pooled = s.pooled.data() + k * kOutputDim;
    for (std::size_t j = 0; j < kOutputDim; ++j) {
      double sum = 0;
      for (std::size_t p = 0; p < t; ++p) sum += s.h[(row + p) * kOutputDim + j];
      pooled[j] = static_cast<float>(sum / static_cast<double>(std::max<std::size_t>(t, 1)));
    }
    row += t;
  }
  denseBias(s.pooled.data(), batch.size(), kOutputDim, tanhW_, tanhB_, kOutputDim, out);
  for (std::size_t k = 0; k < batch.size(); ++k) {
    float* v = out + k * kOutputDim;
    double sq = 0;
    for (std::size_t j = 0; j < kOutputDim; ++j) {
      v[j] = std::tanh(v[j]);
      sq += static_cast<double>(v[j]) * v[j];
    }
    const auto inv =
        static_cast<float>(1.0 / std::sqrt(std::max(sq, static_cast<double>(l2Floor_))));
    for (std::size_t j = 0; j < kOutputDim; ++j) v[j] *= inv;
  }
}

}  // namespace mcpdb::embed
