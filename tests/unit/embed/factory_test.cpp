// makeEmbedder(): where the model is found and what the errors say.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "embed/embedder.hpp"
#include "test_model.hpp"

namespace mcpdb::embed {
namespace {

bool mentions(const Error& e, std::string_view what) {
  return e.message.find(what) != std::string::npos;
}

TEST(EmbedFactory, MissingModelDirNamesConfigKeyAndEnvVar) {
  auto e = makeEmbedder(EmbedConfig{}, Env::fromMap({}));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Code::FailedPrecondition);
  EXPECT_TRUE(mentions(e.error(), "embedding.model_dir")) << e.error().message;
  EXPECT_TRUE(mentions(e.error(), "MCPDB_EMBED_MODEL_DIR")) << e.error().message;
}

TEST(EmbedFactory, UnreadableModelDirNamesConfigKeyAndEnvVar) {
  auto e =
      makeEmbedder(EmbedConfig{}, Env::fromMap({{"MCPDB_EMBED_MODEL_DIR", "/nonexistent/model"}}));
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(mentions(e.error(), "/nonexistent/model")) << e.error().message;
  EXPECT_TRUE(mentions(e.error(), "embedding.model_dir")) << e.error().message;
  EXPECT_TRUE(mentions(e.error(), "MCPDB_EMBED_MODEL_DIR")) << e.error().message;
}

// checkEmbedderSetup(): what makeEmbedder would open, without loading it (issue 30: doctor and
// the self-check report a semantic-search tool whose model is missing).
TEST(EmbedSetupCheck, EachMissingPieceIsNamed) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mcpdb-embed-check-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const Env env = Env::fromMap({{"MCPDB_EMBED_MODEL_DIR", dir.string()}});
  auto check = [&](const Env& e) { return checkEmbedderSetup(EmbedConfig{}, e); };
  const auto none = check(Env::fromMap({}));
  ASSERT_FALSE(none);
  EXPECT_TRUE(mentions(none.error(), "MCPDB_EMBED_MODEL_DIR")) << none.error().message;
  const auto empty = check(env);
  ASSERT_FALSE(empty);
  EXPECT_TRUE(mentions(empty.error(), "model.json")) << empty.error().message;
  std::ofstream(dir / "model.json")
      << R"({"weightsManifest":[{"paths":["group1-shard1of2","group1-shard2of2"],"weights":[]}]})";
  std::ofstream(dir / "vocab.json") << "[]";
  std::ofstream(dir / "group1-shard1of2") << "x";
  const auto shard = check(env);
  ASSERT_FALSE(shard);
  EXPECT_TRUE(mentions(shard.error(), "group1-shard2of2")) << shard.error().message;
  std::ofstream(dir / "group1-shard2of2") << "x";
  EXPECT_TRUE(check(env)) << "every file is there (the weights are not read)";
  std::ofstream(dir / "model.json") << "not json";
  EXPECT_FALSE(check(env));
  std::filesystem::remove_all(dir);
  // openai: an endpoint is needed; nothing is contacted.
  EmbedConfig openai;
  openai.provider = "openai";
  EXPECT_FALSE(checkEmbedderSetup(openai, Env::fromMap({})));
  EXPECT_TRUE(
      checkEmbedderSetup(openai, Env::fromMap({{"MCPDB_EMBED_URL", "http://127.0.0.1:1"}})));
}

TEST(EmbedSetupCheck, TheInstalledModelPasses) {
  ASSERT_TRUE(std::filesystem::exists(testing::modelDir() / "model.json"))
      << testing::missingModelMessage();
  EXPECT_TRUE(checkEmbedderSetup(
      EmbedConfig{}, Env::fromMap({{"MCPDB_EMBED_MODEL_DIR", testing::modelDir().string()}})));
}

TEST(EmbedFactory, ModelDirFromEnv) {
  ASSERT_TRUE(std::filesystem::exists(testing::modelDir() / "model.json"))
      << testing::missingModelMessage();
  auto e = makeEmbedder(EmbedConfig{},
                        Env::fromMap({{"MCPDB_EMBED_MODEL_DIR", testing::modelDir().string()}}));
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ((*e)->dimension(), 512u);
  EXPECT_EQ((*e)->modelId(), kUseLiteModelId);
}

TEST(EmbedFactory, ConfigDirWinsOverEnv) {
  ASSERT_TRUE(std::filesystem::exists(testing::modelDir() / "model.json"))
      << testing::missingModelMessage();
  EmbedConfig cfg;
  cfg.model_dir = testing::modelDir().string();
  auto e = makeEmbedder(cfg, Env::fromMap({{"MCPDB_EMBED_MODEL_DIR", "/nonexistent/model"}}));
  ASSERT_TRUE(e.ok()) << e.error().message;
  auto v = (*e)->embedOne("hello");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->size(), 512u);
}

TEST(EmbedFactory, UnknownProvider) {
  EmbedConfig cfg;
  cfg.provider = "word2vec";
  auto e = makeEmbedder(cfg, Env::fromMap({}));
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(mentions(e.error(), "embedding.provider")) << e.error().message;
}

TEST(EmbedFactory, OpenAiNeedsUrlModelAndDimension) {
  EmbedConfig cfg;
  cfg.provider = "openai";
  auto noUrl = makeEmbedder(cfg, Env::fromMap({}));
  ASSERT_FALSE(noUrl.ok());
  EXPECT_TRUE(mentions(noUrl.error(), "embedding.url") &&
              mentions(noUrl.error(), "MCPDB_EMBED_URL"));

  auto noModel = makeEmbedder(cfg, Env::fromMap({{"MCPDB_EMBED_URL", "http://127.0.0.1:1"}}));
  ASSERT_FALSE(noModel.ok());
  EXPECT_TRUE(mentions(noModel.error(), "MCPDB_EMBED_MODEL")) << noModel.error().message;

  auto noDim = makeEmbedder(
      cfg, Env::fromMap({{"MCPDB_EMBED_URL", "http://127.0.0.1:1"}, {"MCPDB_EMBED_MODEL", "m"}}));
  ASSERT_FALSE(noDim.ok());
  EXPECT_TRUE(mentions(noDim.error(), "embedding.dimension")) << noDim.error().message;

  auto ok = makeEmbedder(cfg, Env::fromMap({{"MCPDB_EMBED_URL", "http://127.0.0.1:1/v1"},
                                            {"MCPDB_EMBED_MODEL", "text-embedding-3-small"},
                                            {"MCPDB_EMBED_DIMENSION", "1536"},
                                            {"MCPDB_EMBED_API_KEY", "sk-secret-123"}}));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ((*ok)->dimension(), 1536u);
  EXPECT_EQ((*ok)->modelId().find("sk-secret"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::embed
