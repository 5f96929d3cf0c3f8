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

Json limitsSchema() {
  return {{"type", "object"},
          {"description", "caps that may only lower the ones around them"},
          {"properties",
           {{"max_rows",
             {{"type", "integer"},
              {"minimum", 1},
              {"maximum", 100000},
              {"description", "rows a call returns at most"}}},
            {"max_bytes",
             {{"type", "integer"},
              {"minimum", 1024},
              {"maximum", 64LL << 20},
              {"description", "bytes of result a call returns at most"}}},
            {"timeout_ms",
             {{"type", "integer"},
              {"minimum", 10},
              {"maximum", 600000},
              {"description", "milliseconds a call may take"}}}}},
          {"additionalProperties", false}};
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

void readServer(const Node& server, ServerSettings& out) {
  if (!server.present() ||
      !server.expectMap({"self_check", "workers", "max_queue", "max_calls_per_source",
                         "max_calls_by_source", "max_message_bytes", "page_size", "drain_ms",
                         "require_environment", "max_result_memory", "fence", "log_format"})) {
    return;
  }
  if (auto v = server.choice("self_check", {"off", "warn", "refuse"})) {
    out.self_check = *v == "off"      ? SelfCheckMode::Off
                     : *v == "refuse" ? SelfCheckMode::Refuse
                                      : SelfCheckMode::Warn;
  }
  if (auto v = server.integer("workers", 1, 256)) out.workers = static_cast<std::size_t>(*v);
  if (auto v = server.integer("max_queue", 0, 100000)) out.max_queue = static_cast<std::size_t>(*v);
  if (auto v = server.integer("max_calls_per_source", 1, 100000))
    out.max_calls_per_source = static_cast<std::size_t>(*v);
  readCallsBySource(server.child("max_calls_by_source"), out);
  if (auto v = server.integer("max_message_bytes", 1024, 64LL << 20))
    out.max_message_bytes = static_cast<std::size_t>(*v);
  if (auto v = server.integer("page_size", 1, 1000)) out.page_size = static_cast<std::size_t>(*v);
  if (auto v = server.integer("drain_ms", 0, 600000)) out.drain_ms = static_cast<std::uint32_t>(*v);
  if (auto v = server.boolean("require_environment")) out.require_environment = *v;
  if (auto v = server.integer("max_result_memory", 1LL << 20, 64LL << 30))
    out.max_result_memory = static_cast<std::uint64_t>(*v);
  if (auto v = server.choice("fence", {"auto", "always", "never"})) out.fence = *parseFence(*v);
  if (auto v = server.choice("log_format", {"text", "json"})) out.log_format = *v;
}

// Each toolset is checked on its own, so every bad name and every bad list is reported.
void readToolsets(const Node& toolsets, Config& cfg) {
  if (!toolsets.present()) return;
  if (!toolsets.isMap()) {
    toolsets.error(
        "must map a toolset name to a list of tool names, e.g. `docs: [tool_a, tool_b]`");
    return;
  }
  std::vector<std::string> done;
  for (const auto& kv : toolsets.yaml()) {
    if (!kv.first.IsScalar()) continue;  // reported by checkKeys
    const std::string& name = kv.first.Scalar();
    // A second entry of one name is reported by checkKeys (child(name) would read the first again).
    if (std::find(done.begin(), done.end(), name) != done.end()) continue;
    done.push_back(name);
    const Node list = toolsets.child(name);
    if (!protocol::isValidToolName(name)) {
      // The key's line: the value may be on the next lines, or absent.
      toolsets.diag().error(lineOf(kv.first), list.path(),
                            "invalid toolset name: use 1-128 characters of A-Z a-z 0-9 _ - .");
    }
    if (!list.present()) {
      toolsets.diag().error(lineOf(kv.first), list.path(),
                            "is empty: give a list of tool names, e.g. [tool_a, tool_b]");
      continue;
    }
    if (!list.isSequence()) {
      list.error("must be a list of tool names, e.g. [tool_a, tool_b]");
      continue;
    }
    if (auto tools = toolsets.stringList(name, true)) {
      cfg.toolsets[name] = *tools;
      std::vector<int>& lines = cfg.toolset_lines[name];
      for (const auto& e : list.elements()) lines.push_back(e.line());
    }
  }
}

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
  if (!root.expectMap(allowed)) return cfg;
  scanForSecrets(root);

  if (Node version = root.child("version"); version.present()) {
    if (auto v = version.asInteger(std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
        v && *v != 1) {
      version.error("unsupported version " + std::to_string(*v) +
                    "; this server reads `version: 1`");
    }
  }
  readServer(root.child("server"), cfg.server);
  cfg.limits = parseLimits(root.child("limits"), Limits{}, nullptr);
  readToolsets(root.child("toolsets"), cfg);
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
