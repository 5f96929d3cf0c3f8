#include "config/config.hpp"

#include <fstream>
#include <sstream>
#include <utility>

#include "config/secret_patterns.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::config {

Limits parseLimits(const Node& node, const Limits& base, const Limits* ceiling) {
  Limits out = base;
  if (!node.present()) return out;
  if (!node.expectMap({"max_rows", "max_bytes", "timeout_ms"})) return out;
  const std::int64_t max_rows_cap = ceiling != nullptr ? ceiling->max_rows : 100000;
  const std::int64_t max_bytes_cap =
      ceiling != nullptr ? static_cast<std::int64_t>(ceiling->max_bytes) : 64LL << 20;
  const std::int64_t timeout_cap = ceiling != nullptr ? ceiling->timeout.count() : 600000;
  if (auto v = node.integer("max_rows", 1, max_rows_cap))
    out.max_rows = static_cast<std::uint32_t>(*v);
  if (auto v = node.integer("max_bytes", 1024, max_bytes_cap))
    out.max_bytes = static_cast<std::uint64_t>(*v);
  if (auto v = node.integer("timeout_ms", 10, timeout_cap))
    out.timeout = std::chrono::milliseconds(*v);
  return out;
}

namespace {

void scan(const Node& node) {
  if (node.isMap()) {
    for (auto& [key, child] : node.entries()) {
      if (keyLooksSecret(key)) {
        child.error(
            "looks like a secret; secrets come only from the environment (see .env.example), never "
            "the config file");
        continue;
      }
      scan(child);
    }
  } else if (node.isSequence()) {
    for (const auto& e : node.elements()) scan(e);
  } else if (node.isScalar()) {
    if (const char* what = valueLooksSecret(node.yaml().Scalar())) {
      node.error(std::string("value looks like ") + what +
                 "; secrets come only from the environment, never the config file");
    }
  }
}

// Every mapping key must be a plain scalar: a config names things, and a key that is itself a
// mapping or a list (YAML's `? ...` complex keys) has no meaning here. Reported once per key,
// with its line, before any section parser walks the document.
bool keysArePlain(const YAML::Node& node, const std::string& path, Diagnostics& diag) {
  bool ok = true;
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        const int l = kv.first.Mark().line >= 0 ? kv.first.Mark().line + 1 : 0;
        diag.error(l, path, "mapping keys must be plain names, not mappings or lists");
        ok = false;
        continue;
      }
      ok = keysArePlain(kv.second,
                        path.empty() ? kv.first.Scalar() : path + "." + kv.first.Scalar(), diag) &&
           ok;
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      ok = keysArePlain(node[i], path + "[" + std::to_string(i) + "]", diag) && ok;
    }
  }
  return ok;
}

}  // namespace

void scanForSecrets(const Node& root) {
  scan(root);
}

Config parseConfig(const std::string& text, const std::string& source,
                   const std::vector<std::string>& extra_sections, Diagnostics& diag) {
  YAML::Node document;
  try {
    document = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diag.error(e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "YAML syntax error: " + e.msg);
    Config cfg;
    cfg.source = source;
    return cfg;
  }
  return readConfig(std::move(document), source, extra_sections, diag);
}

Config readConfig(YAML::Node document, const std::string& source,
                  const std::vector<std::string>& extra_sections, Diagnostics& diag) {
  Config cfg;
  cfg.source = source;
  cfg.root = std::move(document);
  if (cfg.root.IsNull() || !cfg.root.IsDefined()) cfg.root = YAML::Node(YAML::NodeType::Map);
  if (!keysArePlain(cfg.root, "", diag)) return cfg;
  Node root(cfg.root, "", diag);
  std::vector<std::string> allowed = genericSections();
  allowed.insert(allowed.end(), extra_sections.begin(), extra_sections.end());
  if (!root.expectMap(allowed)) return cfg;
  scanForSecrets(root);

  if (auto v = root.integer("version", 1, 1)) (void)v;

  Node server = root.child("server");
  if (server.present() && server.expectMap({"self_check", "workers", "max_queue",
                                            "max_message_bytes", "page_size", "drain_ms"})) {
    if (auto v = server.choice("self_check", {"off", "warn", "refuse"})) {
      cfg.server.self_check = *v == "off"      ? SelfCheckMode::Off
                              : *v == "refuse" ? SelfCheckMode::Refuse
                                               : SelfCheckMode::Warn;
    }
    if (auto v = server.integer("workers", 1, 256))
      cfg.server.workers = static_cast<std::size_t>(*v);
    if (auto v = server.integer("max_queue", 0, 100000))
      cfg.server.max_queue = static_cast<std::size_t>(*v);
    if (auto v = server.integer("max_message_bytes", 1024, 64LL << 20))
      cfg.server.max_message_bytes = static_cast<std::size_t>(*v);
    if (auto v = server.integer("page_size", 1, 1000))
      cfg.server.page_size = static_cast<std::size_t>(*v);
    if (auto v = server.integer("drain_ms", 0, 600000))
      cfg.server.drain_ms = static_cast<std::uint32_t>(*v);
  }
  cfg.limits = parseLimits(root.child("limits"), Limits{}, nullptr);

  Node toolsets = root.child("toolsets");
  if (toolsets.present()) {
    if (!toolsets.isMap()) {
      toolsets.error("must map a toolset name to a list of tool names");
    } else {
      for (auto& [name, list] : toolsets.entries()) {
        if (!protocol::isValidToolName(name)) list.error("invalid toolset name");
        auto tools = toolsets.stringList(name, true);
        if (tools) cfg.toolsets[name] = *tools;
      }
    }
  }
  return cfg;
}

Config loadConfigFile(const std::string& path, const std::vector<std::string>& extra_sections,
                      Diagnostics& diag) {
  std::ifstream in(path);
  if (!in) {
    diag.error(0, "", "cannot read the config file");
    return Config{};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parseConfig(text.str(), path, extra_sections, diag);
}

}  // namespace mcpdb::config
