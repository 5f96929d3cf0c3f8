#pragma once
// Whether a config section's declaration (config::Section::jsonSchema) covers a document: every
// key of the document is declared at that place (properties, the entry schema of a name map, or
// the item schema of a list), and every key the schema requires is present. For the engines'
// tests that their built-in section is described by its declaration. Header only (gtest).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "common/json.hpp"

namespace mcpdb::testsupport {

inline void expectSchemaCovers(const YAML::Node& yaml, const Json& schema,
                               const std::string& path) {
  if (yaml.IsSequence()) {
    ASSERT_TRUE(schema.contains("items")) << path << " is not declared as a list";
    for (std::size_t i = 0; i < yaml.size(); ++i) {
      expectSchemaCovers(yaml[i], schema["items"], path + "[" + std::to_string(i) + "]");
    }
    return;
  }
  if (!yaml.IsMap()) return;
  ASSERT_EQ(schema.value("type", ""), "object") << path;
  // An object read by hand (`custom`, e.g. limits) declares no keys of its own.
  if (!schema.contains("properties") && !schema.contains("additionalProperties")) return;
  for (const auto& kv : yaml) {
    const std::string key = kv.first.as<std::string>();
    const Json* sub = nullptr;
    if (schema.contains("properties") && schema["properties"].contains(key)) {
      sub = &schema["properties"][key];
    } else if (schema.contains("additionalProperties") &&
               schema["additionalProperties"].is_object()) {
      sub = &schema["additionalProperties"];
    }
    ASSERT_NE(sub, nullptr) << path << "." << key << " is not declared";
    expectSchemaCovers(kv.second, *sub, path + "." + key);
  }
  for (const auto& r : schema.value("required", Json::array())) {
    EXPECT_TRUE(yaml[r.get<std::string>()].IsDefined()) << path << "." << r;
  }
}

}  // namespace mcpdb::testsupport
