#pragma once
// The operator's allowlist file: generic sections (server, limits, toolsets) are parsed here;
// engine and embedding sections are handed to their own parsers by the application.
// The file holds no secrets: anything that looks like one is refused.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/json.hpp"
#include "common/limits.hpp"
#include "common/fence.hpp"
#include "common/result.hpp"
#include "config/node.hpp"

namespace mcpdb::config {

enum class SelfCheckMode { Off, Warn, Refuse };

struct ServerSettings {
  SelfCheckMode self_check = SelfCheckMode::Warn;
  std::size_t workers = 8;
  std::size_t max_queue = 64;
  // Calls one source may have running at once, more waiting for a slot
  // (protocol::ServerOptions::calls_per_source; 0: three quarters of `workers` when the tools
  // read several sources), and per source by "<engine>/<source>" (`max_calls_by_source:`).
  std::size_t max_calls_per_source = 0;
  std::map<std::string, std::size_t, std::less<>> max_calls_by_source;
  std::size_t max_message_bytes = std::size_t{4} * 1024 * 1024;
  std::size_t page_size = 50;
  std::uint32_t drain_ms = 10000;
  // Memory for results in flight over all clients (protocol::ServerOptions::max_result_memory).
  std::uint64_t max_result_memory = std::uint64_t{512} << 20;
  // Untrusted-data fencing of tool results whose tool has no setting of its own.
  Fence fence = Fence::Auto;
  // An engine the config declares tools for while its environment is unset: a warning (false) or
  // a startup error (true).
  bool require_environment = false;
  // The operator's log on stderr: "text" (one line per event) or "json" (one object per line);
  // the command line's --log-format wins. Empty: not set here.
  std::string log_format;
};

struct Config {
  std::string source;  // the file path, or "<built-in default>"
  YAML::Node root;     // the whole document (a map), for section parsers
  ServerSettings server;
  Limits limits;
  std::map<std::string, std::vector<std::string>> toolsets;
  // The line of each name in `toolsets` (same shape), so a later check (a toolset naming a tool
  // no engine offers) can say where: file:line: toolsets.NAME[i].
  std::map<std::string, std::vector<int>> toolset_lines;
};

// Top-level keys besides the engine/embedding/http sections.
inline const std::vector<std::string>& genericSections() {
  static const std::vector<std::string> kKeys = {"version", "server", "limits", "toolsets"};
  return kKeys;
}

// Parses YAML text; `extra_sections` are the other top-level keys allowed (engine names,
// "embedding", "http"). Problems go to `diag`; the result is usable only when diag.ok().
Config parseConfig(const std::string& text, const std::string& source,
                   const std::vector<std::string>& extra_sections, Diagnostics& diag);

// The same checks and reading for a document already built (parseConfig after parsing; the
// built-in default is built without parsing, see src/config/prebuilt.hpp).
Config readConfig(const YAML::Node& document, const std::string& source,
                  const std::vector<std::string>& extra_sections, Diagnostics& diag);

// Reads a file then parseConfig. An unreadable file is one error saying why, from errno:
// "PATH: cannot read the config file: No such file or directory" (or "Is a directory", ...).
Config loadConfigFile(const std::string& path, const std::vector<std::string>& extra_sections,
                      Diagnostics& diag);

// Parses a `limits:` mapping, each value bounded, on top of `base` (tools may only lower limits
// below the server-wide ones; `ceiling` enforces that).
Limits parseLimits(const Node& node, const Limits& base, const Limits* ceiling);
// The JSON Schema of a `limits:` mapping (the bounds without a ceiling), for config::Section.
Json limitsSchema();

// Walks the whole document and reports every key or value that looks like a secret.
void scanForSecrets(const Node& root);

}  // namespace mcpdb::config
