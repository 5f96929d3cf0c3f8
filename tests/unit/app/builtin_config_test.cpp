// The built-in allowlist is loaded at start-up without parsing its text (each part is prebuilt at
// build time, src/config/prebuilt.hpp): the document must be the one its text describes, and the
// server assembled from it the one assembled from the same text in a file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/app.hpp"
#include "support/yaml_compare.hpp"

namespace mcpdb::app {
namespace {

TEST(BuiltInConfig, DocumentIsTheParsedText) {
  const auto modules = engines::allEngineModules();
  ASSERT_FALSE(modules.empty());
  EXPECT_EQ(testsupport::yamlDifference(YAML::Load(builtInConfigText(modules)),
                                        builtInConfigDocument(modules)),
            "");
  EXPECT_EQ(testsupport::yamlDifference(YAML::Load(std::string(builtInHeaderText())),
                                        builtInHeaderDocument()),
            "");
}

TEST(BuiltInConfig, EachEngineSectionIsItsParsedText) {
  for (const auto& m : engines::allEngineModules()) {
    SCOPED_TRACE(std::string(m->name()));
    const YAML::Node built = m->defaultSectionDocument();
    EXPECT_EQ(testsupport::yamlDifference(YAML::Load(std::string(m->defaultSection())), built), "");
    EXPECT_TRUE(built[std::string(m->name())].IsMap());
  }
}

Json surface(const Assembly& a) {
  Json tools = Json::array();
  for (const auto& t : a.registry->tools()) {
    Json d = protocol::ToolRegistry::describe(*t);
    d["engine"] = t->engine;
    d["limits"] = {t->limits.max_rows, t->limits.max_bytes, t->limits.timeout.count()};
    tools.push_back(std::move(d));
  }
  const auto& s = a.config.server;
  const auto& l = a.config.limits;
  return {{"tools", tools},
          {"server",
           {static_cast<int>(s.self_check), s.workers, s.max_queue, s.max_message_bytes,
            s.page_size, s.drain_ms}},
          {"limits", {l.max_rows, l.max_bytes, l.timeout.count()}},
          {"warnings", a.warnings},
          {"preload", a.preload_embedder},
          {"http", {a.http.allowed_hosts, a.http.allowed_origins, a.http.max_body_bytes}},
          {"audit", a.audit.enabled}};
}

TEST(BuiltInConfig, AssemblesLikeTheSameTextFromAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("mcpdb-builtin-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << builtInConfigText(engines::allEngineModules());
  // Every engine enabled (nothing connects while assembling): a config file that declares an
  // engine without its environment gets a warning the built-in allowlist does not.
  const Env env = Env::fromMap({{"POSTGRES_DSN", "postgresql://127.0.0.1:1/x"},
                                {"AWS_REGION", "us-east-1"},
                                {"MONGODB_URI", "mongodb://127.0.0.1:1"},
                                {"MYSQL_DSN", "mysql://u@127.0.0.1:1/x"},
                                {"MONGODB_DATABASE", "x"}});
  std::ostringstream built_err;
  std::ostringstream file_err;
  AppOptions from_file;
  from_file.config_path = path.string();
  auto built = assemble(AppOptions{}, env, /*all_engines=*/true, built_err);
  auto file = assemble(from_file, env, /*all_engines=*/true, file_err);
  std::filesystem::remove(path);
  ASSERT_TRUE(built) << built_err.str();
  ASSERT_TRUE(file) << file_err.str();
  EXPECT_EQ(built->config.source, "<built-in default>");
  EXPECT_GT(built->registry->size(), 0U);
  EXPECT_EQ(surface(*built).dump(2), surface(*file).dump(2));
  EXPECT_EQ(testsupport::yamlDifference(file->config.root, built->config.root), "");
}

}  // namespace
}  // namespace mcpdb::app
