#include "config/node.hpp"

#include "common/suggest.hpp"
#include "common/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace mcpdb::config {

std::string Diagnostics::format(int line, const std::string& key_path,
                                const std::string& message) const {
  std::string s = file_;
  if (line > 0) s += ":" + std::to_string(line);
  s += ": ";
  if (!key_path.empty()) s += key_path + ": ";
  // A message may quote config text (a key, a name): bytes that are not UTF-8 are replaced, so no
  // report can carry them and printing it as JSON (check-config --json) can never throw.
  return withInvalidUtf8Replaced(s + message);
}

void Diagnostics::error(int line, const std::string& key_path, const std::string& message) {
  errors_.push_back(format(line, key_path, message));
}

void Diagnostics::errorAtColumn(int line, int column, const std::string& message) {
  errors_.push_back(withInvalidUtf8Replaced(file_ + ":" + std::to_string(line) + ":" +
                                            std::to_string(column) + ": " + message));
}

void Diagnostics::warning(int line, const std::string& key_path, const std::string& message) {
  warnings_.push_back(format(line, key_path, message));
}

// Written here rather than taken from a library: no Debian package offers this small thing, and
// it runs only on an error path over a few dozen short names.
namespace {
std::string join(const std::string& a, std::string_view b) {
  return a.empty() ? std::string(b) : a + "." + std::string(b);
}

// parseConfig refuses documents with non-scalar mapping keys (`? {a: b}: x`) before any Node
// walks them, so this only guards against a caller that skipped that check: such a key is
// skipped rather than converted (yaml-cpp would throw).
const std::string* keyName(const YAML::Node& key) {
  return key.IsScalar() ? &key.Scalar() : nullptr;
}
}  // namespace

bool Node::expectMap(const std::vector<std::string>& allowed,
                     const std::vector<std::string>& reported) const {
  if (!node_.IsMap()) {
    error("must be a mapping");
    return false;
  }
  for (const auto& kv : node_) {
    const std::string* name = keyName(kv.first);
    if (name == nullptr) continue;
    const std::string& key = *name;
    if (std::find(reported.begin(), reported.end(), key) != reported.end()) continue;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      std::string message = "unknown key";
      if (auto meant = closestName(key, allowed)) message += "; did you mean '" + *meant + "'?";
      const int l = kv.first.Mark().line >= 0 ? kv.first.Mark().line + 1 : line();
      diag_->error(l, join(path_, key), message + " (allowed here: " + list + ")");
    }
  }
  return true;
}

bool Node::expectMap(std::initializer_list<std::string_view> allowed) const {
  return expectMap(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void Node::errorAt(std::string_view key, const std::string& message) const {
  const Node c = child(key);
  diag_->error(c.present() ? c.line() : line(), c.path(), message);
}

Node Node::child(std::string_view key) const {
  YAML::Node c = node_.IsMap() ? node_[std::string(key)] : YAML::Node(YAML::NodeType::Undefined);
  return Node(c, join(path_, key), *diag_);
}

std::optional<std::string> Node::asString() const {
  if (!node_.IsScalar()) {
    error("must be a string");
    return std::nullopt;
  }
  return node_.Scalar();
}

std::optional<std::int64_t> Node::asInteger(std::int64_t min, std::int64_t max) const {
  if (!node_.IsScalar()) {
    error("must be an integer");
    return std::nullopt;
  }
  const std::string& s = node_.Scalar();
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end == nullptr || *end != '\0' || errno == ERANGE) {
    error("must be an integer");
    return std::nullopt;
  }
  if (v < min || v > max) {
    error("must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> Node::string(std::string_view key, bool required) const {
  Node c = child(key);
  if (!c.present()) {
    if (required) diag_->error(line(), c.path(), "is required");
    return std::nullopt;
  }
  return c.asString();
}

std::optional<std::int64_t> Node::integer(std::string_view key, std::int64_t min, std::int64_t max,
                                          bool required) const {
  Node c = child(key);
  if (!c.present()) {
    if (required) diag_->error(line(), c.path(), "is required");
    return std::nullopt;
  }
  return c.asInteger(min, max);
}

std::optional<double> Node::number(std::string_view key, bool required) const {
  Node c = child(key);
  if (!c.present()) {
    if (required) diag_->error(line(), c.path(), "is required");
    return std::nullopt;
  }
  if (!c.isScalar()) {
    c.error("must be a number");
    return std::nullopt;
  }
  const std::string& s = c.yaml().Scalar();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !std::isfinite(v)) {
    c.error("must be a finite number");
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Node::boolean(std::string_view key, bool required) const {
  Node c = child(key);
  if (!c.present()) {
    if (required) diag_->error(line(), c.path(), "is required");
    return std::nullopt;
  }
  const std::string s = c.isScalar() ? c.yaml().Scalar() : "";
  if (s == "true") return true;
  if (s == "false") return false;
  c.error("must be true or false");
  return std::nullopt;
}

std::optional<std::vector<std::string>> Node::stringList(std::string_view key,
                                                         bool required) const {
  Node c = child(key);
  if (!c.present()) {
    if (required) diag_->error(line(), c.path(), "is required");
    return std::nullopt;
  }
  return c.asStringList();
}

std::optional<std::vector<std::string>> Node::asStringList() const {
  if (!isSequence()) {
    error("must be a list of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const auto& e : elements()) {
    if (auto s = e.asString()) {
      out.push_back(*s);
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> Node::choice(std::string_view key,
                                        std::initializer_list<std::string_view> choices,
                                        bool required) const {
  return choice(key, std::vector<std::string>(choices.begin(), choices.end()), required);
}

std::optional<std::string> Node::choice(std::string_view key,
                                        const std::vector<std::string>& choices,
                                        bool required) const {
  auto s = string(key, required);
  if (!s) return s;
  for (const auto& c : choices) {
    if (*s == c) return s;
  }
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  std::string message = "must be one of: " + list;
  if (auto meant = closestName(*s, choices)) message += "; did you mean '" + *meant + "'?";
  child(key).error(message);
  return std::nullopt;
}

std::vector<Node> Node::elements() const {
  std::vector<Node> out;
  if (!node_.IsSequence()) return out;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    out.emplace_back(node_[i], path_ + "[" + std::to_string(i) + "]", *diag_);
  }
  return out;
}

std::vector<std::pair<std::string, Node>> Node::entries() const {
  std::vector<std::pair<std::string, Node>> out;
  if (!node_.IsMap()) return out;
  for (const auto& kv : node_) {
    const std::string* name = keyName(kv.first);
    if (name == nullptr) continue;
    const std::string& key = *name;
    out.emplace_back(key, Node(kv.second, join(path_, key), *diag_));
  }
  return out;
}

}  // namespace mcpdb::config
