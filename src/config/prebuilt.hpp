#pragma once
// YAML documents flattened at build time, so that the built-in allowlist is loaded at start-up
// without running yaml-cpp's parser (~1 300 instructions per byte of text, the largest part of
// start-up after the dynamic loader; docs/BENCHMARKS.md "Startup profile"). The build-time tool
// (prebuild_yaml.cpp, through mcpdb_prebuilt_yaml() in cmake/Helpers.cmake) parses a .yaml file
// with yaml-cpp and writes its nodes as data; buildDocument() turns them back into the same
// YAML::Node tree: same node types, scalars and key order. Source marks (line numbers) are not
// kept: only error messages use them, and a built-in section is tested to have none.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace mcpdb::config {

// One node of a flattened document; a parent comes before its children, children in document
// order. The root is index 0.
struct PrebuiltNode {
  enum class Kind : std::uint8_t { Null, Scalar, Sequence, Map };
  std::uint32_t parent;  // index of the enclosing map or sequence (0 for the root itself)
  Kind kind;
  std::string_view key;    // the key, when the parent is a map
  std::string_view value;  // the text, for a scalar
};

// The document `nodes` describe (an empty span: a null document, as YAML::Load("") gives).
YAML::Node buildDocument(std::span<const PrebuiltNode> nodes);

// Names for the generated source: in namespace `ns`, `std::string_view <text_function>()` returns
// the text and `YAML::Node <node_function>()` the document; `header` declares both.
struct PrebuiltNames {
  std::string ns;
  std::string text_function;
  std::string node_function;
  std::string header;
};

// The C++ source defining both functions for `text` (build time). Throws YAML::Exception when the
// text is not YAML, std::invalid_argument when buildDocument could not reproduce its document
// (a key that is not a scalar, a key repeated in one mapping).
std::string prebuiltSource(std::string_view text, const PrebuiltNames& names);

}  // namespace mcpdb::config
