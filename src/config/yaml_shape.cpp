#include "config/yaml_shape.hpp"

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

namespace mcpdb::config {
namespace {

// Thrown by the handler to stop the parser at the first event past a limit.
struct Refused {
  std::string problem;
  int line;
};

// Counts nodes as the tree would hold them expanded: each scalar, null, mapping and list is one
// node; an alias counts as every node of what its anchor names. Linear in the number of events:
// each anchored node's expanded size is recorded once, when it ends.
class ShapeCounter : public YAML::EventHandler {
 public:
  explicit ShapeCounter(const YamlShapeLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = sizes_.find(anchor);
    // An alias to an anchor still open (a recursive structure) or unknown: the loader reports it.
    add(mark, it == sizes_.end() ? 1 : it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::uint64_t size;  // this collection and everything in it, expanded
    YAML::Mark mark;
  };

  static int lineOf(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 0; }

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) sizes_[anchor] = 1;
    add(mark, 1);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (stack_.size() >= limits_.max_depth) {
      throw Refused{"nesting is deeper than " + std::to_string(limits_.max_depth) +
                        " levels of mappings and lists",
                    lineOf(mark)};
    }
    stack_.push_back(Open{anchor, 1, mark});
    count(mark, 1);
  }

  void close() {
    if (stack_.empty()) return;
    const Open done = stack_.back();
    stack_.pop_back();
    if (done.anchor != YAML::NullAnchor) sizes_[done.anchor] = done.size;
    if (!stack_.empty()) stack_.back().size += done.size;
  }

  // A node of `n` expanded nodes inside the current collection.
  void add(const YAML::Mark& mark, std::uint64_t n) {
    count(mark, n);
    if (!stack_.empty()) stack_.back().size += n;
  }

  void count(const YAML::Mark& mark, std::uint64_t n) {
    // Saturating: sizes are bounded by the limit before they could overflow.
    total_ += std::min(n, limits_.max_expanded_nodes + 1);
    if (total_ > limits_.max_expanded_nodes) {
      throw Refused{"expands to more than " + std::to_string(limits_.max_expanded_nodes) +
                        " nodes through its aliases (*name); an alias bomb is refused: write the "
                        "repeated parts out, or use fewer nested aliases",
                    lineOf(mark)};
    }
  }

  const YamlShapeLimits& limits_;
  std::vector<Open> stack_;
  std::unordered_map<YAML::anchor_t, std::uint64_t> sizes_;
  std::uint64_t total_ = 0;
};

}  // namespace

YamlShape checkYamlShape(std::string_view text, const YamlShapeLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return {"the config file is larger than " + std::to_string(limits.max_bytes >> 20) +
                " MiB; a config is written by hand, this is not one",
            0};
  }
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  ShapeCounter counter(limits);
  try {
    while (parser.HandleNextDocument(counter)) {
    }
  } catch (const Refused& r) {
    return {r.problem, r.line};
  } catch (const YAML::Exception&) {
    // A syntax error: YAML::Load meets it again and reports it with its own message.
  }
  return {};
}

}  // namespace mcpdb::config
