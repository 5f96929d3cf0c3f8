#pragma once
// The operator's allowlist file: the generic sections (version, server, limits) are declared and
// parsed here; the engine, http, audit and embedding sections are declared by their owners and
// handed to them by the application (src/app/config_keys.*, the one list of top-level keys).
// The file holds no secrets: anything that looks like one is refused.

#include <cstdint>
#include <functional>
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
#include "config/section.hpp"

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
  // Reload the config file when it changes (app/reload.hpp), as SIGHUP does.
  bool watch_config = false;
};

struct Config {
  std::string source;  // the file path, or "<built-in default>"
  YAML::Node root;     // the whole document (a map), for section parsers
  ServerSettings server;
  Limits limits;
};

// One top-level key of the config file, declared by its owner: what the schema and the reference
// say about it. The application lists them all once (src/app/config_keys.*).
struct TopLevelKey {
  std::string key;
  std::string doc;
  std::function<Json()> schema;
  std::function<std::vector<std::string>()> reference;  // "- `key` (...)" lines
  std::string example_yaml;                             // a whole example, under the key
};

// A TopLevelKey from its section's declaration.
template <class T>
TopLevelKey topLevelKey(std::string key, const Section<T>& section) {
  return {std::move(key), section.doc(), [&section] { return section.jsonSchema(); },
          [&section] { return section.reference(); }, section.exampleYaml()};
}

const Section<ServerSettings>& serverSection();
const Section<Limits>& limitsSection();

// The top-level keys declared here: version, server, limits.
const std::vector<TopLevelKey>& genericKeys();
// Their names.
const std::vector<std::string>& genericSections();

// Parses YAML text; `extra_sections` are the other top-level keys allowed (engine names,
// "embedding", "http", "audit"). Problems go to `diag`; the result is usable only when diag.ok().
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
