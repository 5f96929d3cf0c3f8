#pragma once
// Typed, located access to the YAML allowlist. Every problem is collected (not thrown) with the
// file, line and key path, so one run of check-config reports all of them.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace mcpdb::config {

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  // `line` is 1-based; 0 when unknown.
  void error(int line, const std::string& key_path, const std::string& message);
  void warning(int line, const std::string& key_path, const std::string& message);
  // An error at a position in the file's text (file:line:column:), for problems found before
  // there are keys, such as YAML syntax. Both 1-based.
  void errorAtColumn(int line, int column, const std::string& message);
  bool ok() const { return errors_.empty(); }
  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::string& file() const { return file_; }

 private:
  std::string format(int line, const std::string& key_path, const std::string& message) const;
  std::string file_;
  std::vector<std::string> errors_;
  std::vector<std::string> warnings_;
};

// A YAML node with its key path (e.g. "postgres.tools.find_user.parameters[0].type").
class Node {
 public:
  Node(const YAML::Node& node, std::string path, Diagnostics& diag)
      : node_(node), path_(std::move(path)), diag_(&diag) {}

  bool present() const { return node_.IsDefined() && !node_.IsNull(); }
  bool isMap() const { return node_.IsMap(); }
  bool isSequence() const { return node_.IsSequence(); }
  bool isScalar() const { return node_.IsScalar(); }
  // 0 when unknown, also for a key that is absent (yaml-cpp throws when asked for its mark).
  int line() const {
    if (!node_.IsDefined()) return 0;
    return node_.Mark().line >= 0 ? node_.Mark().line + 1 : 0;
  }
  const std::string& path() const { return path_; }
  Diagnostics& diag() const { return *diag_; }
  const YAML::Node& yaml() const { return node_; }

  // Reports keys of this map that are not in `allowed` (with the closest allowed key, if any).
  // Returns false if this is not a map.
  bool expectMap(std::initializer_list<std::string_view> allowed) const;
  // Keys in `reported` were already reported with a message of their own: not again.
  bool expectMap(const std::vector<std::string>& allowed,
                 const std::vector<std::string>& reported = {}) const;
  bool has(std::string_view key) const {
    return node_.IsMap() && node_[std::string(key)].IsDefined();
  }
  Node child(std::string_view key) const;

  // Typed getters: report a located error and return nullopt when the key is required and missing
  // or has the wrong type. Integers are range-checked.
  std::optional<std::string> string(std::string_view key, bool required = false) const;
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max,
                                      bool required = false) const;
  std::optional<double> number(std::string_view key, bool required = false) const;
  std::optional<bool> boolean(std::string_view key, bool required = false) const;
  std::optional<std::vector<std::string>> stringList(std::string_view key,
                                                     bool required = false) const;
  // One of `choices` (an error names the closest choice, if any).
  std::optional<std::string> choice(std::string_view key,
                                    std::initializer_list<std::string_view> choices,
                                    bool required = false) const;
  std::optional<std::string> choice(std::string_view key, const std::vector<std::string>& choices,
                                    bool required = false) const;

  // This node's own scalar value.
  std::optional<std::string> asString() const;
  // This node as a list of strings; every element is checked, so one run reports each bad one.
  std::optional<std::vector<std::string>> asStringList() const;
  std::optional<std::int64_t> asInteger(std::int64_t min, std::int64_t max) const;

  // Elements of a sequence, or entries of a map in file order.
  std::vector<Node> elements() const;
  std::vector<std::pair<std::string, Node>> entries() const;

  void error(const std::string& message) const { diag_->error(line(), path_, message); }
  // Reports at this map's `key`: at the key's line when present, else at this node's line (an
  // absent key has no position of its own), under the key's path either way.
  void errorAt(std::string_view key, const std::string& message) const;
  void warning(const std::string& message) const { diag_->warning(line(), path_, message); }

 private:
  YAML::Node node_;
  std::string path_;
  Diagnostics* diag_;
};

}  // namespace mcpdb::config
