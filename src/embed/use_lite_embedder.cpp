#include "embed/use_lite_embedder.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "embed/blas.hpp"

namespace mcpdb::embed {
namespace {

// The reference (@energetic-ai/embeddings@0.2.0) embeds this sentence to a vector starting with
// these components; a model directory holding other or damaged weights will not reproduce them.
constexpr std::string_view kCheckSentence = "Which indexes does the orders table have?";
constexpr std::array<float, 8> kCheckVector = {0.03701432f,  -0.06189336f, 0.04825011f,
                                               0.05250293f,  -0.02587187f, 0.00636246f,
                                               -0.04413069f, -0.06163186f};
constexpr float kCheckTolerance = 1e-3f;

struct EmbedScratch {
  std::vector<std::vector<std::int32_t>> ids;
  std::vector<float> flat;
};

EmbedScratch& embedScratch() {
  thread_local EmbedScratch s;
  return s;
}

}  // namespace

UseLiteEmbedder::UseLiteEmbedder(Tokenizer tokenizer, std::unique_ptr<UseLiteModel> model,
                                 UseLiteOptions options)
    : tokenizer_(std::move(tokenizer)), model_(std::move(model)), options_(options) {}

Result<std::unique_ptr<UseLiteEmbedder>> UseLiteEmbedder::load(const std::filesystem::path& dir,
                                                               UseLiteOptions options) {
  // Per-query matrices are small (tokens x 512): OpenBLAS's worker threads cost more CPU than they
  // save (measured 4x the CPU time per query), and requests already run in parallel on the
  // server's workers. The setting is process-wide; mcpdb_embed is the only BLAS user.
  if (auto st = blas::load(options.blas_threads); !st.ok()) return st.error();
  auto model = UseLiteModel::load(dir);
  if (!model.ok()) return model.error();
  auto tokenizer = Tokenizer::fromFile(dir / "vocab.json");
  if (!tokenizer.ok()) return makeError(Code::FailedPrecondition, tokenizer.error().message);
  if (tokenizer->vocabSize() > (*model)->vocabRows()) {
    return makeError(Code::FailedPrecondition, "model " + dir.string() + ": vocab.json has " +
                                                   std::to_string(tokenizer->vocabSize()) +
                                                   " pieces but the embedding table only " +
                                                   std::to_string((*model)->vocabRows()) + " rows");
  }
  std::unique_ptr<UseLiteEmbedder> e(
      new UseLiteEmbedder(std::move(tokenizer.value()), std::move(model.value()), options));
  if (options.verify_model) {
    if (auto st = e->verify(); !st.ok())
      return makeError(st.error().code, "model " + dir.string() + ": " + st.error().message);
  }
  return e;
}

Status UseLiteEmbedder::verify() const {
  const std::string sentence(kCheckSentence);
  auto v = embed(std::span<const std::string>(&sentence, 1));
  if (!v.ok()) return v.error();
  for (std::size_t i = 0; i < kCheckVector.size(); ++i) {
    if (!(std::abs((*v)[0][i] - kCheckVector[i]) <= kCheckTolerance)) {
      return makeError(Code::FailedPrecondition,
                       "the weights do not reproduce the reference embedding of " +
                           std::string(kUseLiteModelId) + " (wrong or damaged model files)");
    }
  }
  return {};
}

Result<std::vector<Vector>> UseLiteEmbedder::embed(std::span<const std::string> texts) const {
  EmbedScratch& s = embedScratch();
  if (s.ids.size() < texts.size()) s.ids.resize(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].size() > options_.max_input_bytes) {
      return makeError(Code::InvalidArgument, "text " + std::to_string(i) + " is longer than " +
                                                  std::to_string(options_.max_input_bytes) +
                                                  " bytes");
    }
    if (auto st = tokenizer_.encodeInto(texts[i], s.ids[i]); !st.ok()) return st.error();
    for (std::int32_t id : s.ids[i]) {
      if (id < 0 || static_cast<std::size_t>(id) >= model_->vocabRows()) {
        return makeError(Code::Internal, "token id out of range");
      }
    }
  }
  const std::size_t dim = UseLiteModel::kOutputDim;
  s.flat.resize(texts.size() * dim);
  model_->forward(std::span<const std::vector<std::int32_t>>(s.ids.data(), texts.size()), s.flat);

  std::vector<Vector> out;
  out.reserve(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    out.emplace_back(s.flat.begin() + static_cast<std::ptrdiff_t>(i * dim),
                     s.flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
  }
  return out;
}

}  // namespace mcpdb::embed
