#pragma once
// The shape of a YAML text, measured from the parser's events before any node tree is built, so
// that hostile text is refused in milliseconds: an alias bomb (a ~1 KB file whose nested aliases
// expand to billions of nodes; every walk of the tree revisits shared nodes), deep nesting, and
// text above the size bound.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mcpdb::config {

struct YamlShapeLimits {
  std::size_t max_bytes = std::size_t{4} << 20;  // a config is written by hand: 4 MiB is ample
  std::uint64_t max_expanded_nodes = 200000;     // nodes with every alias expanded
  std::size_t max_depth = 128;                   // nested mappings and lists
};

// Why `text` is refused, with the 1-based line where that was decided (0 when unknown); an empty
// `problem` when the shape is fine. YAML syntax errors are left to the loader, which reports them.
struct YamlShape {
  std::string problem;
  int line = 0;
};

YamlShape checkYamlShape(std::string_view text, const YamlShapeLimits& limits = {});

}  // namespace mcpdb::config
