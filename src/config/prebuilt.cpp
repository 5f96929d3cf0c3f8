#include "config/prebuilt.hpp"

#include <cstdio>
#include <set>
#include <stdexcept>
#include <vector>

namespace mcpdb::config {

YAML::Node buildDocument(std::span<const PrebuiltNode> nodes) {
  // Handles on the nodes built so far, by index: each child is made on its own, then attached to
  // its parent (force_insert/push_back move it into the parent's memory, as the parser does).
  std::vector<YAML::Node> built;
  built.reserve(nodes.size());
  for (const PrebuiltNode& n : nodes) {
    YAML::Node node;
    switch (n.kind) {
      case PrebuiltNode::Kind::Null: node = YAML::Node(YAML::NodeType::Null); break;
      case PrebuiltNode::Kind::Scalar: node = YAML::Node(std::string(n.value)); break;
      case PrebuiltNode::Kind::Sequence: node = YAML::Node(YAML::NodeType::Sequence); break;
      case PrebuiltNode::Kind::Map: node = YAML::Node(YAML::NodeType::Map); break;
    }
    if (!built.empty()) {
      YAML::Node& parent = built[n.parent];
      if (parent.IsMap()) {
        parent.force_insert(std::string(n.key), node);
      } else {
        parent.push_back(node);
      }
    }
    built.push_back(std::move(node));
  }
  return built.empty() ? YAML::Node() : built.front();
}

namespace {

PrebuiltNode::Kind kindOf(const YAML::Node& y) {
  switch (y.Type()) {
    case YAML::NodeType::Scalar: return PrebuiltNode::Kind::Scalar;
    case YAML::NodeType::Sequence: return PrebuiltNode::Kind::Sequence;
    case YAML::NodeType::Map: return PrebuiltNode::Kind::Map;
    default: return PrebuiltNode::Kind::Null;
  }
}

// A C++ string literal for `s` (ASCII printable kept, everything else escaped in octal).
std::string literal(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f || c == '?') {  // '?': no trigraphs
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

struct FlatNode {
  std::uint32_t parent;
  PrebuiltNode::Kind kind;
  std::string key;
  std::string value;
};

void flatten(const YAML::Node& y, std::uint32_t parent, std::string key,
             std::vector<FlatNode>& out) {
  const auto self = static_cast<std::uint32_t>(out.size());
  out.push_back({parent, kindOf(y), std::move(key), y.IsScalar() ? y.Scalar() : std::string()});
  if (y.IsSequence()) {
    for (const auto& e : y) flatten(e, self, "", out);
  } else if (y.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : y) {
      if (!kv.first.IsScalar()) {
        throw std::invalid_argument("a mapping key is not a scalar (line " +
                                    std::to_string(kv.first.Mark().line + 1) + ")");
      }
      if (!seen.insert(kv.first.Scalar()).second) {
        throw std::invalid_argument("the key '" + kv.first.Scalar() + "' is repeated (line " +
                                    std::to_string(kv.first.Mark().line + 1) + ")");
      }
      flatten(kv.second, self, kv.first.Scalar(), out);
    }
  }
}

const char* kindName(PrebuiltNode::Kind k) {
  switch (k) {
    case PrebuiltNode::Kind::Null: return "Null";
    case PrebuiltNode::Kind::Scalar: return "Scalar";
    case PrebuiltNode::Kind::Sequence: return "Sequence";
    case PrebuiltNode::Kind::Map: return "Map";
  }
  return "Null";
}

}  // namespace

std::string prebuiltSource(std::string_view text, const PrebuiltNames& names) {
  const YAML::Node doc = YAML::Load(std::string(text));
  std::vector<FlatNode> flat;
  if (doc.IsDefined() && !doc.IsNull()) flatten(doc, 0, "", flat);

  std::string out =
      "// Generated at build time by mcpdb-prebuild-yaml (src/config/prebuilt.hpp).\n";
  out += "#include \"" + names.header + "\"\n\n#include \"config/prebuilt.hpp\"\n\n";
  out += "namespace " + names.ns + " {\nnamespace {\n\n";
  out += "constexpr std::string_view kText =";
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    out += "\n    " + literal(text.substr(start, end - start));
    start = end;
  }
  if (text.empty()) out += " \"\"";
  out += ";\n\n";
  if (!flat.empty()) {
    out += "using Kind = mcpdb::config::PrebuiltNode::Kind;\n";
    out += "constexpr mcpdb::config::PrebuiltNode kNodes[] = {\n";
    for (const FlatNode& n : flat) {
      out += "    {" + std::to_string(n.parent) + ", Kind::" + kindName(n.kind) + ", " +
             literal(n.key) + ", " + literal(n.value) + "},\n";
    }
    out += "};\n";
  }
  out += "\n}  // namespace\n\n";
  out += "std::string_view " + names.text_function + "() { return kText; }\n\n";
  out += "YAML::Node " + names.node_function + "() { return mcpdb::config::buildDocument(" +
         (flat.empty() ? std::string("{}") : std::string("kNodes")) + "); }\n\n";
  out += "}  // namespace " + names.ns + "\n";
  return out;
}

}  // namespace mcpdb::config
