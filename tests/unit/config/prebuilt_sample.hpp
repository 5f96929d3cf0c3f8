#pragma once
// The test document prebuilt at build time from prebuilt/sample.yaml (prebuilt_test.cpp).
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace mcpdb::config::sample {

std::string_view sampleText();
YAML::Node sampleDocument();

}  // namespace mcpdb::config::sample
