#pragma once
// Structural comparison of two YAML documents (header only): node types, scalar texts, sequence
// lengths, and mapping keys in document order. For the prebuilt documents
// (src/config/prebuilt.hpp), which must be what yaml-cpp's parser makes of the same text.
#include <yaml-cpp/yaml.h>

#include <string>

namespace mcpdb::testsupport {

// "" when `a` and `b` are the same document, else where they first differ and how.
inline std::string yamlDifference(const YAML::Node& a, const YAML::Node& b,
                                  const std::string& path = "<root>") {
  if (a.Type() != b.Type()) {
    return path + ": node types differ (" + std::to_string(static_cast<int>(a.Type())) + " vs " +
           std::to_string(static_cast<int>(b.Type())) + ")";
  }
  if (a.IsScalar()) {
    return a.Scalar() == b.Scalar() ? "" : path + ": '" + a.Scalar() + "' vs '" + b.Scalar() + "'";
  }
  if ((a.IsSequence() || a.IsMap()) && a.size() != b.size()) {
    return path + ": sizes differ (" + std::to_string(a.size()) + " vs " +
           std::to_string(b.size()) + ")";
  }
  if (a.IsSequence()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::string d = yamlDifference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
  } else if (a.IsMap()) {
    auto j = b.begin();
    for (auto i = a.begin(); i != a.end(); ++i, ++j) {
      std::string d = yamlDifference(i->first, j->first, path + " key");
      if (!d.empty()) return d;
      const std::string key = i->first.IsScalar() ? i->first.Scalar() : "?";
      d = yamlDifference(i->second, j->second, path + "." + key);
      if (!d.empty()) return d;
    }
  }
  return "";
}

}  // namespace mcpdb::testsupport
