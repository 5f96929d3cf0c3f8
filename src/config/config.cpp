#include "config/config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <memory>
#include <system_error>

#include "common/utf8.hpp"
#include "config/secret_patterns.hpp"
#include "config/sources.hpp"
#include "config/yaml_shape.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::config {

Limits parseLimits(const Node& node, const Limits& base, const Limits* ceiling) {
  Limits out = base;
  if (!node.present()) return out;
  if (ceiling == nullptr) {
    (void)limitsSection().parse(node, out);
    return out;
  }
  // Below the limits around them: the section's keys and lower bounds, the ceiling's upper ones.
  std::vector<std::string> keys;
  for (const auto& f : limitsSection().fields()) keys.push_back(f.key);
  if (!node.expectMap(keys)) return out;
  const Json bounds = limitsSection().jsonSchema()["properties"];
  const auto lo = [&bounds](const char* key) { return bounds[key]["minimum"].get<std::int64_t>(); };
  if (auto v = node.integer("max_rows", lo("max_rows"), ceiling->max_rows))
    out.max_rows = static_cast<std::uint32_t>(*v);
  if (auto v =
          node.integer("max_bytes", lo("max_bytes"), static_cast<std::int64_t>(ceiling->max_bytes)))
    out.max_bytes = static_cast<std::uint64_t>(*v);
  if (auto v = node.integer("timeout_ms", lo("timeout_ms"), ceiling->timeout.count()))
    out.timeout = std::chrono::milliseconds(*v);
  return out;
}

Json limitsSchema() {
  return limitsSection().jsonSchema();
}

const std::vector<TopLevelKey>& genericKeys() {
  static const std::vector<TopLevelKey> kKeys = {
      {"version", "the config format's version (optional; only 1 exists)",
       [] {
         return Json{{"description", "the config format's version (optional; only 1 exists)"},
                     {"const", 1}};
       },
       [] { return std::vector<std::string>{}; }, "version: 1\n"},
      topLevelKey("server", serverSection()),
      topLevelKey("limits", limitsSection()),
  };
  return kKeys;
}

const std::vector<std::string>& genericSections() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& k : genericKeys()) names.push_back(k.key);
    return names;
  }();
  return kNames;
}

namespace {

// The two walks below go over every node of the document, so they work on the YAML nodes and
// keep the key path in one string that each level appends to and cuts back: a path is copied
// only into a message. (Through config::Node, which builds every child's path, reading the
// built-in allowlist took 0.64 M instructions at every start; 0.33 M now.) The paths are the ones
// config::Node gives: `a.b`, `a[0]`, `a[0].b`.
int lineOf(const YAML::Node& node) {
  return node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
}

// Appends `.key` (or `key` at the top) to `path` for the scope of one child.
class KeyInPath {
 public:
  KeyInPath(std::string& path, const std::string& key) : path_(path), size_(path.size()) {
    if (size_ != 0) path_ += '.';
    path_ += key;
  }
  KeyInPath(std::string& path, std::size_t index) : path_(path), size_(path.size()) {
    path_ += '[';
    path_ += std::to_string(index);
    path_ += ']';
  }
  KeyInPath(const KeyInPath&) = delete;
  KeyInPath& operator=(const KeyInPath&) = delete;
  ~KeyInPath() { path_.resize(size_); }

 private:
  std::string& path_;
  std::size_t size_;
};

void scan(const YAML::Node& node, std::string& path, Diagnostics& diag) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) continue;  // refused before any walk (keysArePlain)
      const KeyInPath in(path, kv.first.Scalar());
      if (keyLooksSecret(kv.first.Scalar())) {
        diag.error(lineOf(kv.second), path,
                   "looks like a secret; secrets come only from the environment (see "
                   ".env.example), never the config file");
        continue;
      }
      scan(kv.second, path, diag);
    }
  } else if (node.IsSequence()) {
    std::size_t i = 0;
    for (const auto& e : node) {
      const KeyInPath in(path, i++);
      scan(e, path, diag);
    }
  } else if (node.IsScalar()) {
    if (const char* what = valueLooksSecret(node.Scalar())) {
      diag.error(lineOf(node), path,
                 std::string("value looks like ") + what +
                     "; secrets come only from the environment, never the config file");
    }
  }
}

constexpr const char* kNotUtf8 =
    "is not valid UTF-8; config text must be UTF-8 (the bytes are not shown)";

// Every mapping key must be a plain scalar: a config names things, and a key that is itself a
// mapping or a list (YAML's `? ...` complex keys) has no meaning here. Each is reported once, with
// its line; the walks after this one skip such keys. A key given twice in one mapping is reported
// too: YAML readers keep one of the two silently, so half of what the operator wrote would be lost.
// Every key and value must be UTF-8: the text reaches agents (descriptions, enums) and messages,
// and yaml-cpp passes any byte through.
void checkKeys(const YAML::Node& node, std::string& path, Diagnostics& diag) {
  if (node.IsScalar()) {
    if (!isValidUtf8(node.Scalar())) diag.error(lineOf(node), path, kNotUtf8);
    return;
  }
  if (node.IsMap()) {
    // The keys seen so far in this mapping (handles, not copies); a linear search, as mappings
    // here are short and this walk runs over the built-in allowlist at every start.
    std::vector<YAML::Node> keys;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        diag.error(lineOf(kv.first), path,
                   "mapping keys must be plain names, not mappings or lists");
        continue;
      }
      const std::string& key = kv.first.Scalar();
      const KeyInPath in(path, key);
      if (!isValidUtf8(key)) diag.error(lineOf(kv.first), path, std::string("key ") + kNotUtf8);
      for (const auto& k : keys) {
        if (k.Scalar() == key) {
          diag.error(lineOf(kv.first), path,
                     "duplicate key (first given at line " + std::to_string(lineOf(k)) +
                         "); keep one and merge the two");
          break;
        }
      }
      keys.push_back(kv.first);
      checkKeys(kv.second, path, diag);
    }
  } else if (node.IsSequence()) {
    std::size_t i = 0;
    for (const auto& e : node) {
      const KeyInPath in(path, i++);
      checkKeys(e, path, diag);
    }
  }
}

// `max_calls_by_source: {postgres/reports: 2, dynamodb/*: 4}`: a source's own bulkhead size. The
// engine and source names are checked here by their rules; whether such a source has tools is
// checked once the tools are registered (the app).
void readCallsBySource(const Node& node, ServerSettings& out) {
  if (!node.present()) return;
  if (!node.isMap()) {
    node.error("must map \"<engine>/<source>\" to a number of calls, e.g. `postgres/reports: 2`");
    return;
  }
  for (const auto& [key, value] : node.entries()) {
    const auto slash = key.find('/');
    const std::string source = slash == std::string::npos ? "" : key.substr(slash + 1);
    if (slash == std::string::npos || slash == 0 ||
        (source != "*" && !sourceNameProblem(source).empty())) {
      value.error(
          "is not \"<engine>/<source>\" (or \"<engine>/*\" for the tools whose "
          "arguments pick the source), e.g. postgres/reports");
      continue;
    }
    if (auto n = value.asInteger(1, 100000))
      out.max_calls_by_source[key] = static_cast<std::size_t>(*n);
  }
}

}  // namespace

const Section<ServerSettings>& serverSection() {
  using S = ServerSettings;
  static const auto s =
      Section<S>("how the server runs calls, whatever the transport")
          .choice("self_check", &S::self_check,
                  {{"off", SelfCheckMode::Off},
                   {"warn", SelfCheckMode::Warn},
                   {"refuse", SelfCheckMode::Refuse}},
                  "the start-up proof that the credentials cannot write and every tool can run: "
                  "`warn` logs what it finds in the background once the server answers, "
                  "`refuse` runs it before serving and refuses to start unless it proves "
                  "everything, `off` skips it (`doctor` runs it on demand)")
          .integer("workers", &S::workers, 1, 256,
                   "threads that run calls: the most calls running at once over all clients")
          .integer("max_queue", &S::max_queue, 0, 100000,
                   "calls that may wait for a worker; one more is refused at once (server busy)")
          .integer("max_calls_per_source", &S::max_calls_per_source, 1, 100000,
                   "calls one source may have running at once, over every session, key and "
                   "transport (its bulkhead), so a slow source holds only its share of the "
                   "workers")
          .byDefault(
              "three quarters of `workers` (at least 1) when the tools read several "
              "sources; no cap with one")
          .custom(
              "max_calls_by_source",
              "a source's own bulkhead size by \"<engine>/<source>\" (\"<engine>/*\" for the "
              "tools whose arguments pick the source), overriding max_calls_per_source",
              [] {
                return Json{{"type", "object"},
                            {"additionalProperties",
                             {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}}},
                            {"examples", Json::array({{{"postgres/reports", 2}}})}};
              },
              kOptional,
              [](S& out, const Node& node) {
                readCallsBySource(node, out);
                return true;
              })
          .integer("max_message_bytes", &S::max_message_bytes, 1024, 64LL << 20,
                   "the largest JSON-RPC message read from a client (a stdio line or an HTTP "
                   "body, whichever transport)")
          .integer("page_size", &S::page_size, 1, 1000,
                   "items per page of tools/list, resources/list and prompts/list")
          .integer("drain_ms", &S::drain_ms, 0, 600000,
                   "how long calls in flight may finish once the server is asked to stop")
          .boolean("require_environment", &S::require_environment,
                   "accepted for older configs, with no effect: a section that declares tools for "
                   "an engine whose environment is unset refuses the start unless it says "
                   "`optional: true`")
          .integer("max_result_memory", &S::max_result_memory, 1LL << 20, 64LL << 30,
                   "bytes of results in flight over all clients at once; a call that would go "
                   "over waits, then is refused")
          .choice("fence", &S::fence,
                  {{"auto", Fence::Auto}, {"always", Fence::Always}, {"never", Fence::Never}},
                  "untrusted-data markers around tool results, for tools without a setting of "
                  "their own: `auto` fences results that can carry free text")
          .choice("log_format", &S::log_format, {{"text", "text"}, {"json", "json"}},
                  "the operator's log on stderr: one line per event, or one JSON object per "
                  "line; the command line's --log-format wins")
          .byDefault("`text`")
          .boolean("watch_config", &S::watch_config,
                   "reload the config file when it changes (checked every second; applied once "
                   "it has stayed the same for a second), as SIGHUP does; needs a restart to "
                   "turn on or off")
          .exampleYaml("server:\n  workers: 8\n  max_calls_per_source: 4\n  self_check: warn\n");
  return s;
}

const Section<Limits>& limitsSection() {
  static const auto s =
      Section<Limits>("caps that may only lower the ones around them")
          .integer("max_rows", &Limits::max_rows, 1, 100000, "rows a call returns at most")
          .integer("max_bytes", &Limits::max_bytes, 1024, 64LL << 20,
                   "bytes of result a call returns at most")
          .millis("timeout_ms", &Limits::timeout, 10, 600000, "milliseconds a call may take")
          .exampleYaml("limits:\n  max_rows: 200\n  max_bytes: 1048576\n  timeout_ms: 5000\n");
  return s;
}

namespace {

// Keys a newcomer (or a Toolbox user) may put at the top level that belong elsewhere here: each
// is refused with where its content goes, not with the closest allowed name.
constexpr std::pair<std::string_view, std::string_view> kMisplacedKeys[] = {
    {"tools",
     "tools belong to their engine: declare them under postgres.tools, mysql.tools, "
     "mongodb.targets or dynamodb.targets (`mcp-dbserver import-toolbox` converts a Toolbox "
     "file)"},
    {"sources",
     "sources belong to their engine: declare them under postgres.sources, mysql.sources, "
     "mongodb.sources or dynamodb.sources"},
    {"toolsets",
     "is not read by this server: give each HTTP client the tools it may call in "
     "http.clients[].scope (`mcp-dbserver import-toolbox` turns Toolbox toolsets into scopes)"},
};

}  // namespace

void scanForSecrets(const Node& root) {
  std::string path = root.path();
  scan(root.yaml(), path, root.diag());
}

namespace {

// yaml-cpp's words for a syntax error, in ours: what to look for on the line shown. Written here
// (yaml-cpp has no other wording); its message stays the fallback for anything not listed.
std::string yamlSyntaxWords(const std::string& msg) {
  static const std::pair<std::string_view, std::string_view> kWords[] = {
      {"end of map not found",
       "a block of keys ends where YAML cannot read it: check the indentation of this line and "
       "of the lines above it (the keys of one map start in the same column)"},
      {"end of map flow not found", "a '{' map is not closed with '}'"},
      {"end of sequence not found",
       "a list item here does not line up with the list: check the indentation of its '- ' items"},
      {"end of sequence flow not found", "a '[' list is not closed with ']'"},
      {"illegal map value",
       "a ':' where no value can start (two keys on one line, or a tab in the indentation)"},
      {"illegal tab when looking for indentation",
       "a tab in the indentation: YAML indents with spaces only"},
      {"illegal EOF in scalar", "a quoted value is not closed before the end of the file"},
      {"illegal block entry", "a '- ' list item where a key was expected"},
      {"illegal map key", "a key where none can be"},
      {"the referenced anchor is not defined",
       "an alias (*name) to an anchor (&name) that is not defined before it"},
      {"unknown escape character",
       "an unknown escape in a double-quoted value (write \\\\ for a backslash, or use single "
       "quotes)"},
  };
  for (const auto& [theirs, ours] : kWords) {
    if (msg.rfind(theirs, 0) == 0) return std::string(ours);
  }
  return msg;
}

// Whether a config line shown in an error could carry a credential: then it is not shown.
bool lineLooksSecret(std::string_view line) {
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string_view key = line.substr(0, colon);
    while (!key.empty() && (key.front() == ' ' || key.front() == '-' || key.front() == '\t'))
      key.remove_prefix(1);
    if (keyLooksSecret(key)) return true;
    if (valueLooksSecret(line.substr(colon + 1)) != nullptr) return true;
  }
  return valueLooksSecret(line) != nullptr;
}

// A YAML syntax error at file:line:column, in our words, with the line and a caret under the
// column (as a compiler shows it); a line that looks like it holds a credential is not shown.
void reportYamlSyntax(const YAML::Exception& e, std::string_view text, Diagnostics& diag) {
  if (e.mark.line < 0) {
    diag.error(0, "", "YAML syntax error: " + yamlSyntaxWords(e.msg));
    return;
  }
  const int line_no = e.mark.line + 1;
  const int column = e.mark.column + 1;
  std::string_view line;
  std::size_t start = 0;
  for (int i = 0; i < e.mark.line && start != std::string_view::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start != std::string_view::npos && start <= text.size()) {
    line = text.substr(start, text.find('\n', start) - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  }
  const bool past_end = start == std::string_view::npos || start >= text.size();
  // A tab in the indentation is the likeliest cause whatever yaml-cpp noticed.
  const std::string_view indent = line.substr(0, line.find_first_not_of(" \t"));
  std::string message =
      "YAML syntax error: " + (indent.find('\t') != std::string_view::npos
                                   ? std::string("a tab in the indentation: YAML indents with "
                                                 "spaces only")
                                   : yamlSyntaxWords(e.msg));
  const std::string gutter = std::to_string(line_no);
  if (past_end) {
    message += "\n      " + gutter + " | (the end of the file)";
  } else if (lineLooksSecret(line)) {
    message += "\n      " + gutter + " | (line not shown: it looks like it holds a credential)";
  } else if (line.size() <= 200) {
    message += "\n      " + gutter + " | " + std::string(line);
    std::string pad(static_cast<std::size_t>(std::max(0, column - 1)), ' ');
    // Keep tabs under tabs so the caret lines up however the terminal expands them.
    for (std::size_t i = 0; i < pad.size() && i < line.size(); ++i) {
      if (line[i] == '\t') pad[i] = '\t';
    }
    message += "\n      " + std::string(gutter.size(), ' ') + " | " + pad + "^";
  }
  diag.errorAtColumn(line_no, column, message);
}

}  // namespace

Config parseConfig(const std::string& text, const std::string& source,
                   const std::vector<std::string>& extra_sections, Diagnostics& diag) {
  // Measured from the parser's events before a tree is built: an alias bomb, deep nesting or an
  // oversized text is refused in milliseconds, before any walk could revisit shared nodes.
  if (const YamlShape shape = checkYamlShape(text); !shape.problem.empty()) {
    diag.error(shape.line, "", shape.problem);
    Config cfg;
    cfg.source = source;
    return cfg;
  }
  YAML::Node document;
  try {
    document = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    reportYamlSyntax(e, text, diag);
    Config cfg;
    cfg.source = source;
    return cfg;
  }
  return readConfig(document, source, extra_sections, diag);
}

Config readConfig(const YAML::Node& document, const std::string& source,
                  const std::vector<std::string>& extra_sections, Diagnostics& diag) {
  Config cfg;
  cfg.source = source;
  // An empty document reads as an empty mapping (without changing the caller's node).
  cfg.root =
      document.IsNull() || !document.IsDefined() ? YAML::Node(YAML::NodeType::Map) : document;
  // Every check below runs whatever the ones before it found, so one run reports every problem.
  std::string path;
  checkKeys(cfg.root, path, diag);
  Node root(cfg.root, "", diag);
  std::vector<std::string> allowed = genericSections();
  allowed.insert(allowed.end(), extra_sections.begin(), extra_sections.end());
  std::vector<std::string> misplaced;
  // Only a mapping has keys (a list or a scalar is refused by expectMap below).
  for (const auto& kv : cfg.root.IsMap() ? cfg.root : YAML::Node(YAML::NodeType::Map)) {
    if (!kv.first.IsScalar()) continue;
    for (const auto& [key, where] : kMisplacedKeys) {
      if (kv.first.Scalar() != key) continue;
      diag.error(lineOf(kv.first), std::string(key), std::string(where));  // the key's line
      misplaced.emplace_back(key);
    }
  }
  if (!root.expectMap(allowed, misplaced)) return cfg;
  scanForSecrets(root);

  if (Node version = root.child("version"); version.present()) {
    if (auto v = version.asInteger(std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
        v && *v != 1) {
      version.error("unsupported version " + std::to_string(*v) +
                    "; this server reads `version: 1`");
    }
  }
  if (const Node server = root.child("server"); server.present())
    (void)serverSection().parse(server, cfg.server);
  cfg.limits = parseLimits(root.child("limits"), Limits{}, nullptr);
  return cfg;
}

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// The whole file, or the errno that stopped the reading. A directory opens like a file on Linux
// (and reads as empty through std::ifstream), so it is refused by its type.
int readWholeFile(const std::string& path, std::string& text) {
  const FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) return errno != 0 ? errno : EIO;
  struct stat st {};
  if (fstat(fileno(f.get()), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  // Bounded: a byte past the size limit is enough for parseConfig to refuse the file (a path such
  // as /dev/zero would otherwise be read forever).
  const std::size_t cap = YamlShapeLimits{}.max_bytes + 1;
  char buf[16384];
  std::size_t n = 0;
  while (text.size() < cap && (n = std::fread(buf, 1, sizeof buf, f.get())) > 0)
    text.append(buf, std::min(n, cap - text.size()));
  if (std::ferror(f.get()) != 0) return errno != 0 ? errno : EIO;
  return 0;
}

}  // namespace

Config loadConfigFile(const std::string& path, const std::vector<std::string>& extra_sections,
                      Diagnostics& diag) {
  std::string text;
  errno = 0;
  if (const int err = readWholeFile(path, text); err != 0) {
    // std::generic_category's message is strerror's text ("No such file or directory"),
    // without strerror's shared buffer.
    diag.error(0, "", "cannot read the config file: " + std::generic_category().message(err));
    Config cfg;
    cfg.source = path;
    return cfg;
  }
  return parseConfig(text, path, extra_sections, diag);
}

}  // namespace mcpdb::config
