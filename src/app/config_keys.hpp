#pragma once
// The config file's top-level keys, listed once: each with the declaration its owner keeps
// (config::Section), from which come the parsing, the JSON Schema (`check-config --schema`) and
// the reference (`check-config --reference`, docs/CONFIG.md).

#include <string>
#include <vector>

#include "common/json.hpp"
#include "config/config.hpp"
#include "embed/embedder.hpp"
#include "engines/engine.hpp"

namespace mcpdb::app {

// The `embedding:` section, read into the embedder's settings (environment variables fill what
// it leaves empty, see embed::EmbedConfig).
struct EmbeddingSettings {
  embed::EmbedConfig config;
  bool preload = true;
};
const config::Section<EmbeddingSettings>& embeddingSection();

// Every top-level key, in the order the reference shows them: the generic ones, then http, audit,
// telemetry, embedding, then each engine of this build.
std::vector<config::TopLevelKey> configKeys(const std::vector<engines::EngineModulePtr>& modules);

// The top-level keys besides config::genericSections(), for config::parseConfig.
std::vector<std::string> appSections(const std::vector<engines::EngineModulePtr>& modules);

// The JSON Schema (draft 2020-12) of a whole config file.
Json configSchema(const std::vector<engines::EngineModulePtr>& modules);

// The Markdown reference of every key (docs/CONFIG.md is this text).
std::string configReference(const std::vector<engines::EngineModulePtr>& modules);

}  // namespace mcpdb::app
