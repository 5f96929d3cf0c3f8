// Damaged or wrong model directories fail to load with an error naming the problem; never a crash
// and never a model that answers wrongly.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "embed/use_lite_embedder.hpp"
#include "test_model.hpp"

namespace mcpdb::embed {
namespace {

namespace fs = std::filesystem;
using testing::modelDir;

// A scratch copy of the model directory: files are symlinks until a test replaces them.
class ModelCopy {
 public:
  ModelCopy() {
    char tmpl[] = "/tmp/mcpdb-embed-model-XXXXXX";
    dir_ = mkdtemp(tmpl);
    for (const auto& entry : fs::directory_iterator(modelDir())) {
      fs::create_symlink(entry.path(), dir_ / entry.path().filename());
    }
  }
  ~ModelCopy() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }

  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void write(const std::string& name, const std::string& bytes) const {
    fs::remove(dir_ / name);
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  void remove(const std::string& name) const { fs::remove(dir_ / name); }
  // Applies edit to the weightsManifest entry of tensor `name`.
  template <class Fn>
  void editWeight(const std::string& name, Fn edit) const {
    Json doc = Json::parse(read("model.json"));
    bool found = false;
    for (Json& group : doc["weightsManifest"]) {
      for (Json& w : group["weights"]) {
        if (w["name"] == name) {
          edit(w);
          found = true;
        }
      }
    }
    ASSERT_TRUE(found) << name;
    write("model.json", doc.dump());
  }

 private:
  fs::path dir_;
};

std::string loadError(const fs::path& dir) {
  auto e = UseLiteEmbedder::load(dir);
  if (e.ok()) return "";
  EXPECT_EQ(e.error().code, Code::FailedPrecondition);
  return e.error().message;
}

class EmbedModelFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(modelDir() / "model.json")) << testing::missingModelMessage();
  }
};

TEST_F(EmbedModelFiles, IntactCopyLoads) {
  ModelCopy m;
  EXPECT_EQ(loadError(m.dir()), "");
}

TEST_F(EmbedModelFiles, MissingShard) {
  ModelCopy m;
  m.remove("group1-shard3of7");
  const auto err = loadError(m.dir());
  EXPECT_NE(err.find("group1-shard3of7"), std::string::npos) << err;
  EXPECT_NE(err.find("missing"), std::string::npos) << err;
}

TEST_F(EmbedModelFiles, TruncatedShard) {
  ModelCopy m;
  std::string shard = m.read("group1-shard7of7");
  m.write("group1-shard7of7", shard.substr(0, shard.size() - 4));
  EXPECT_NE(loadError(m.dir()).find("truncated"), std::string::npos) << loadError(m.dir());
  m.write("group1-shard7of7", "");
  EXPECT_NE(loadError(m.dir()).find("truncated"), std::string::npos);
}

TEST_F(EmbedModelFiles, OversizedShard) {
  ModelCopy m;
  m.write("group1-shard7of7", m.read("group1-shard7of7") + "garbage!");
  EXPECT_NE(loadError(m.dir()).find("larger than the manifest"), std::string::npos)
      << loadError(m.dir());
}

TEST_F(EmbedModelFiles, WrongShape) {
  ModelCopy m;
  m.editWeight("module/Embeddings_en", [](Json& w) { w["shape"] = {256, 8002}; });
  const auto err = loadError(m.dir());
  EXPECT_NE(err.find("module/Embeddings_en has shape [256,8002], expected [8002,256]"),
            std::string::npos)
      << err;
}

TEST_F(EmbedModelFiles, MissingTensor) {
  ModelCopy m;
  m.editWeight("module/Encoder_en/hidden_layers/tanh_layer_0/weights",
               [](Json& w) { w["name"] = "module/Encoder_en/hidden_layers/tanh_layer_0/renamed"; });
  const auto err = loadError(m.dir());
  EXPECT_NE(err.find("tanh_layer_0/weights is missing"), std::string::npos) << err;
}

TEST_F(EmbedModelFiles, WrongDtype) {
  ModelCopy m;
  m.editWeight("module/Encoder_en/hidden_layers/tanh_layer_0/bias",
               [](Json& w) { w["dtype"] = "int32"; });
  const auto err = loadError(m.dir());
  EXPECT_NE(err.find("tanh_layer_0/bias is int32, expected float32"), std::string::npos) << err;
}

TEST_F(EmbedModelFiles, UnsupportedDtypeAndBadManifest) {
  ModelCopy m;
  m.editWeight("module/Embeddings_en", [](Json& w) { w["dtype"] = "float16"; });
  EXPECT_NE(loadError(m.dir()).find("unsupported dtype float16"), std::string::npos);
  m.write("model.json",
          "{\"weightsManifest\": [{\"paths\": [\"../../etc/passwd\"], \"weights\": []}]}");
  EXPECT_NE(loadError(m.dir()).find("bad shard path"), std::string::npos);
  m.write("model.json", "{not json");
  EXPECT_NE(loadError(m.dir()).find("not a JSON object"), std::string::npos);
  m.remove("model.json");
  EXPECT_NE(loadError(m.dir()).find("model.json"), std::string::npos);
}

TEST_F(EmbedModelFiles, NonFiniteWeight) {
  ModelCopy m;
  std::string shard = m.read("group1-shard1of7");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(shard.data() + 400, &nan, sizeof nan);
  m.write("group1-shard1of7", shard);
  EXPECT_NE(loadError(m.dir()).find("non-finite"), std::string::npos) << loadError(m.dir());
}

TEST_F(EmbedModelFiles, PlausibleButWrongWeightsFailTheSelfCheck) {
  ModelCopy m;
  // Two same-shaped tensors swapped: every check on names, shapes and values passes.
  const std::string layer0 =
      "module_apply_default/Encoder_en/KonaTransformer/Encode/Layer_0/TransformerLayer/FFN/conv1/"
      "bias/ConcatPartitions/concat";
  const std::string layer1 =
      "module_apply_default/Encoder_en/KonaTransformer/Encode/Layer_1/TransformerLayer/FFN/conv1/"
      "bias/ConcatPartitions/concat";
  m.editWeight(layer0, [](Json& w) { w["name"] = "swap-tmp"; });
  m.editWeight(layer1, [&](Json& w) { w["name"] = layer0; });
  m.editWeight("swap-tmp", [&](Json& w) { w["name"] = layer1; });
  const auto err = loadError(m.dir());
  EXPECT_NE(err.find("do not reproduce the reference"), std::string::npos) << err;
  // Without the self-check it would load and answer wrongly: that is what the check is for.
  EXPECT_TRUE(UseLiteEmbedder::load(m.dir(), UseLiteOptions{false, 1 << 20}).ok());
}

TEST_F(EmbedModelFiles, BadVocabulary) {
  ModelCopy m;
  m.write("vocab.json", "[[\"x\", 0]]");
  EXPECT_NE(loadError(m.dir()).find("vocab.json"), std::string::npos);
  m.remove("vocab.json");
  EXPECT_NE(loadError(m.dir()).find("vocab.json"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::embed
