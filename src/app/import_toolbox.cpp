#include "app/import_toolbox.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>

#include "config/sources.hpp"
#include "common/uri.hpp"
#include "config/yaml_shape.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::app {
namespace {

// One entry of the Toolbox file, whichever form it came in.
struct Entry {
  std::string name;
  std::string type;  // "postgres", "postgres-sql", ...
  YAML::Node node;
};

struct ToolboxFile {
  std::vector<Entry> sources;
  std::vector<Entry> tools;
  std::vector<std::pair<std::string, std::vector<std::string>>> toolsets;
};

std::string scalar(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

Status readMapsForm(const YAML::Node& root, ToolboxFile& out) {
  for (const char* section : {"sources", "tools"}) {
    const YAML::Node s = root[section];
    if (!s) continue;
    if (!s.IsMap()) return makeError(Code::InvalidArgument, std::string(section) + ": not a map");
    for (const auto& kv : s) {
      Entry e{kv.first.as<std::string>(), scalar(kv.second, "kind"), kv.second};
      (std::string(section) == "sources" ? out.sources : out.tools).push_back(std::move(e));
    }
  }
  if (const YAML::Node ts = root["toolsets"]; ts && ts.IsMap()) {
    for (const auto& kv : ts) {
      std::vector<std::string> names;
      if (kv.second.IsSequence()) {
        for (const auto& t : kv.second) names.push_back(t.IsScalar() ? t.Scalar() : "");
      }
      out.toolsets.emplace_back(kv.first.as<std::string>(), std::move(names));
    }
  }
  return {};
}

// Toolbox 1.x: one document per entry, `kind: source | tool | toolset` (plural accepted too).
Status readDocumentsForm(const std::vector<YAML::Node>& docs, ToolboxFile& out) {
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const YAML::Node& d = docs[i];
    if (!d || d.IsNull()) continue;
    const std::string where = "document " + std::to_string(i + 1);
    if (!d.IsMap()) return makeError(Code::InvalidArgument, where + ": not a map");
    std::string kind = scalar(d, "kind");
    if (!kind.empty() && kind.back() == 's') kind.pop_back();
    if (kind != "source" && kind != "tool" && kind != "toolset") {
      return makeError(Code::InvalidArgument,
                       where + ": kind '" + scalar(d, "kind") +
                           "' is not one of source, tool, toolset: not a Toolbox tools file "
                           "(expected `sources:` and `tools:` maps, or documents of `kind: "
                           "source` and `kind: tool`)");
    }
    const std::string name = scalar(d, "name");
    if (name.empty()) return makeError(Code::InvalidArgument, where + ": has no name");
    if (kind == "source") {
      out.sources.push_back({name, scalar(d, "type"), d});
    } else if (kind == "tool") {
      out.tools.push_back({name, scalar(d, "type"), d});
    } else {
      std::vector<std::string> names;
      if (const YAML::Node t = d["tools"]; t && t.IsSequence()) {
        for (const auto& n : t) names.push_back(n.IsScalar() ? n.Scalar() : "");
      }
      out.toolsets.emplace_back(name, std::move(names));
    }
  }
  return {};
}

Result<ToolboxFile> readToolbox(std::string_view text) {
  if (const config::YamlShape shape = config::checkYamlShape(text); !shape.problem.empty()) {
    return makeError(Code::InvalidArgument,
                     "line " + std::to_string(shape.line) + ": " + shape.problem);
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return makeError(Code::InvalidArgument,
                     "line " + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
  ToolboxFile f;
  const bool maps_form = docs.size() == 1 && docs[0].IsMap() && !docs[0]["kind"] &&
                         (docs[0]["sources"] || docs[0]["tools"] || docs[0]["toolsets"]);
  Status st = maps_form ? readMapsForm(docs[0], f) : readDocumentsForm(docs, f);
  if (!st) return st.error();
  if (f.sources.empty() && f.tools.empty()) {
    return makeError(Code::InvalidArgument,
                     "no sources and no tools: not a Toolbox tools file (expected `sources:` and "
                     "`tools:` maps, or documents of `kind: source` and `kind: tool`)");
  }
  return f;
}

// "bench-pg" -> "bench_pg": our names are lower-case identifiers.
std::string identifierOf(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c >= 'A' && c <= 'Z') {
      if (i > 0 && !out.empty() && out.back() != '_' && name[i - 1] >= 'a' && name[i - 1] <= 'z')
        out += '_';  // camelCase -> camel_case
      out += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "s_" + out;
  return out.substr(0, 63);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

// ${NAME}: a variable reference, kept as written (a name, not a value).
bool isEnvReference(std::string_view v) {
  if (v.size() <= 3 || v.substr(0, 2) != "${" || v.back() != '}') return false;
  return std::all_of(v.begin() + 2, v.end() - 1, [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Text of the Toolbox file written outside the YAML emitter (a comment of the config, a comment of
// the .env template, a line of the report): printable ASCII as is, every other byte as \xNN. A
// line break in a toolset or source name would otherwise end the comment and add a config key or
// an environment variable of the file's choosing, and an escape sequence would reach the terminal.
std::string shown(std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

// One part of a DSN: a ${VAR} reference as written, anything else percent-encoded (an '@', ':' or
// '/' in a user or database name would change what the DSN means; a line break would add a
// variable to the .env template). Both engines' DSN readers percent-decode every part.
std::string dsnPart(const std::string& v) {
  return isEnvReference(v) ? v : percentEncode(v);
}

// A host name or IP address (IPv6 in brackets) as written; anything else percent-encoded.
std::string dsnHost(const std::string& v) {
  const bool plain = std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_' || c == ':' || c == '[' || c == ']';
  });
  return plain || isEnvReference(v) ? v : percentEncode(v);
}

struct ConvertedSource {
  std::string engine;  // "postgres" or "mysql"
  std::string name;    // ours
  std::string env;     // the variable holding its DSN
};

// The DSN of a Toolbox postgres/mysql source, for the .env template. A password written in the
// file is replaced by a placeholder (never copied); a ${VAR} reference is kept.
std::string dsnTemplate(const Entry& s, const std::string& engine, ToolboxImport& report) {
  auto part = [&](const char* key, const char* fallback) {
    const std::string v = scalar(s.node, key);
    return v.empty() ? std::string(fallback) : dsnPart(v);
  };
  std::string password = scalar(s.node, "password");
  if (!password.empty() && !isEnvReference(password)) {
    report.notes.push_back("source " + shown(s.name) +
                           ": its password is written in the Toolbox file; it was not copied: "
                           "put it in the .env template's placeholder");
    password = "CHANGE_ME";
  }
  std::string dsn = (engine == "postgres" ? "postgresql://" : "mysql://") + part("user", "USER");
  if (!password.empty()) dsn += ":" + password;
  const std::string host = scalar(s.node, "host");
  dsn += "@" + (host.empty() ? std::string("localhost") : dsnHost(host)) + ":" +
         part("port", engine == "postgres" ? "5432" : "3306") + "/" + part("database", "DATABASE");
  if (const YAML::Node q = s.node["queryParams"]; q && q.IsMap()) {
    char sep = '?';
    for (const auto& kv : q) {
      if (!kv.second.IsScalar()) continue;
      dsn += sep + percentEncode(kv.first.as<std::string>()) + "=" + dsnPart(kv.second.Scalar());
      sep = '&';
    }
  }
  return dsn;
}

// Toolbox source types with an equivalent here, and the engine they map to.
std::string engineOfSource(const std::string& type) {
  if (type == "postgres") return "postgres";
  if (type == "mysql") return "mysql";
  return "";
}

std::string engineOfTool(const std::string& type) {
  if (type == "postgres-sql") return "postgres";
  if (type == "mysql-sql") return "mysql";
  return "";
}

// Why a Toolbox tool type is not converted.
std::string refusalOfType(const std::string& type) {
  if (type.find("execute-sql") != std::string::npos) {
    return "type " + type +
           " runs any SQL the agent writes; this server runs only fixed, reviewed statements";
  }
  if (type.empty()) return "has no type (kind)";
  return "type " + type + " has no equivalent here (PostgreSQL and MySQL SQL tools convert)";
}

const std::set<std::string>& knownToolKeys() {
  static const std::set<std::string> k = {"kind",        "type",      "name",      "source",
                                          "description", "statement", "parameters"};
  return k;
}

// A Toolbox parameter as ours; empty reason when converted.
std::string convertParam(const YAML::Node& p, YAML::Node& out, const std::string& tool,
                         ToolboxImport& report) {
  const std::string name = scalar(p, "name");
  const std::string type = scalar(p, "type");
  if (name.empty()) return "a parameter has no name";
  if (type == "map") return "parameter " + name + " is a map, which has no equivalent here";
  const std::string ours = identifierOf(name);
  if (ours != name) {
    report.notes.push_back("tool " + tool + ": parameter " + name + " is named " + ours +
                           " (parameter names are lower-case identifiers here)");
  }
  out["name"] = ours;
  out["type"] = type == "float" ? "float" : type;
  out["description"] = scalar(p, "description").empty() ? name : scalar(p, "description");
  if (const YAML::Node r = p["required"]) out["required"] = r;
  if (const YAML::Node d = p["default"]) out["default"] = d;
  if (const YAML::Node v = p["allowedValues"]; v && v.IsSequence()) {
    YAML::Node values(YAML::NodeType::Sequence);  // block style whatever the file's was
    for (const auto& x : v) values.push_back(x.IsScalar() ? x.Scalar() : std::string());
    out["enum"] = values;
  }
  if (type == "array") {
    const YAML::Node items = p["items"];
    if (!items || !items.IsMap()) return "array parameter " + name + " has no items";
    YAML::Node it;
    it["type"] = scalar(items, "type");
    out["items"] = it;
  }
  for (const auto& kv : p) {
    const std::string k = kv.first.as<std::string>();
    static const std::set<std::string> known = {"name",    "type",  "description",  "required",
                                                "default", "items", "allowedValues"};
    if (known.count(k) == 0) {
      report.notes.push_back("tool " + tool + ": parameter " + name + ": `" + k +
                             "` is not converted");
    }
  }
  return "";
}

struct Converter {
  const ToolboxFile& file;
  const std::map<std::string, std::string>& excluded;  // tool -> why (from validation)
  ToolboxImport report;
  std::map<std::string, ConvertedSource> sources;  // Toolbox name -> ours
  YAML::Node config{YAML::NodeType::Map};
  std::map<std::string, std::vector<std::string>> tools_by_engine;

  void convertSources() {
    std::set<std::string> taken;
    for (const auto& s : file.sources) {
      const std::string engine = engineOfSource(s.type);
      if (engine.empty()) {
        report.refused.push_back("source " + s.name + ": type " + s.type +
                                 " has no equivalent here (postgres and mysql convert); its tools "
                                 "are refused too");
        continue;
      }
      std::string name = identifierOf(s.name);
      for (int n = 2; taken.count(engine + "/" + name) != 0; ++n) {
        name = identifierOf(s.name) + "_" + std::to_string(n);
      }
      taken.insert(engine + "/" + name);
      const std::string env = upper(engine) + "_DSN_" + upper(name);
      sources[s.name] = {engine, name, env};
      config[engine]["sources"][name]["dsn_env"] = env;
      report.env_template += "# Toolbox source " + shown(s.name) + " (" + shown(s.type) + ")\n" +
                             env + "=" + dsnTemplate(s, engine, report) + "\n";
    }
  }

  void convertTool(const Entry& t) {
    if (auto it = excluded.find(t.name); it != excluded.end()) {
      report.refused.push_back("tool " + t.name + ": " + it->second);
      return;
    }
    const std::string engine = engineOfTool(t.type);
    if (engine.empty()) {
      report.refused.push_back("tool " + t.name + ": " + refusalOfType(t.type));
      return;
    }
    if (!protocol::isValidToolName(t.name)) {
      report.refused.push_back("tool " + t.name +
                               ": the name is not a valid MCP tool name ([A-Za-z0-9_.-])");
      return;
    }
    const auto src = sources.find(scalar(t.node, "source"));
    if (src == sources.end()) {
      report.refused.push_back("tool " + t.name + ": its source '" + scalar(t.node, "source") +
                               "' was not converted");
      return;
    }
    if (src->second.engine != engine) {
      report.refused.push_back("tool " + t.name + ": a " + t.type + " tool on a " +
                               src->second.engine + " source");
      return;
    }
    if (const YAML::Node tp = t.node["templateParameters"]; tp && tp.size() > 0) {
      report.refused.push_back(
          "tool " + t.name +
          ": templateParameters splice agent text into the statement; this server binds every "
          "value as a parameter (write one tool per table or column instead)");
      return;
    }
    YAML::Node out;
    out["kind"] = engine + "-sql";
    out["source"] = src->second.name;
    out["description"] =
        scalar(t.node, "description").empty() ? t.name : scalar(t.node, "description");
    out["statement"] = scalar(t.node, "statement");
    if (const YAML::Node params = t.node["parameters"]; params && params.IsSequence()) {
      YAML::Node list(YAML::NodeType::Sequence);
      for (const auto& p : params) {
        YAML::Node ours;
        if (auto why = convertParam(p, ours, t.name, report); !why.empty()) {
          report.refused.push_back("tool " + t.name + ": " + why);
          return;
        }
        list.push_back(ours);
      }
      if (list.size() > 0) out["parameters"] = list;
    }
    for (const auto& kv : t.node) {
      const std::string k = kv.first.as<std::string>();
      if (knownToolKeys().count(k) != 0 || k == "templateParameters") continue;
      report.notes.push_back("tool " + t.name + ": `" + k + "` is not converted" +
                             (k == "authRequired"
                                  ? " (clients are API keys with scopes here: keys new --scope)"
                                  : ""));
    }
    config[engine]["tools"][t.name] = out;
    tools_by_engine[engine].push_back(t.name);
    report.converted.push_back("tool " + t.name + " (" + engine + ", source " + src->second.name +
                               ")");
  }

  // A toolset is what one client may see: the scope of a key made for it.
  std::string toolsetComments() const {
    std::string text;
    for (const auto& [set, names] : file.toolsets) {
      std::map<std::string, std::vector<std::string>> by_engine;
      for (const auto& n : names) {
        for (const auto& [engine, tools] : tools_by_engine) {
          if (std::find(tools.begin(), tools.end(), n) != tools.end())
            by_engine[engine].push_back(n);
        }
      }
      std::string scope;
      for (const auto& [engine, tools] : by_engine) {
        scope += (scope.empty() ? "" : ",") + engine;
        for (const auto& t : tools) scope += ":" + t;
      }
      text += scope.empty() ? "# toolset " + shown(set) + ": none of its tools was converted\n"
                            : "# toolset " + shown(set) + ": mcp-dbserver keys new --name " +
                                  identifierOf(set) + " --scope " + scope + "\n";
    }
    return text;
  }
};

Result<ToolboxImport> convert(std::string_view text, std::string_view file_name,
                              const std::map<std::string, std::string>& excluded) {
  auto file = readToolbox(text);
  if (!file) return file.error();
  Converter c{*file, excluded, {}, {}, YAML::Node(YAML::NodeType::Map), {}};
  c.convertSources();
  for (const auto& t : file->tools) c.convertTool(t);
  YAML::Emitter e;
  e << c.config;
  c.report.config = "# Converted from the Toolbox file " + shown(file_name) +
                    " by mcp-dbserver import-toolbox.\n# No credential is in this file: each "
                    "source's DSN is read from the variable its dsn_env names\n# (see the .env "
                    "template). Check it with: mcp-dbserver check-config, then doctor.\n" +
                    c.toolsetComments() + std::string(e.c_str()) + "\n";
  return std::move(c.report);
}

// A node of an unexpected shape (a key that is a list, a name that is a map) ends the
// conversion with yaml-cpp's exception: reported, never fatal.
Result<ToolboxImport> convertChecked(std::string_view text, std::string_view file_name,
                                     const std::map<std::string, std::string>& excluded) {
  try {
    return convert(text, file_name, excluded);
  } catch (const YAML::Exception& e) {
    return makeError(Code::InvalidArgument,
                     "line " + std::to_string(e.mark.line + 1) +
                         ": an entry of an unexpected shape (not a Toolbox tools file?): " + e.msg);
  }
}

}  // namespace

Result<ToolboxImport> convertToolbox(std::string_view text, std::string_view file_name) {
  return convertChecked(text, file_name, {});
}

namespace {

// Runs our config checks on `config` (as check-config does, without connecting); the tools they
// refuse, each with the first reason given, in `refused`; false when a problem names no tool.
bool validate(const std::string& config, std::map<std::string, std::string>& refused,
              std::string& problems) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto path = dir / ("mcpdb-import-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << config;
  AppOptions options;
  options.config_path = path.string();
  std::ostringstream err;
  const auto a = assemble(options, Env::fromMap({}), /*all_engines=*/true, err);
  std::filesystem::remove(path);
  if (a) return true;
  problems = err.str();
  static const std::regex tool_line(R"(:\d+: (?:postgres|mysql)\.tools\.([^.:\s]+)[^:]*: (.*))");
  std::istringstream lines(problems);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, tool_line)) refused.emplace(m[1].str(), m[2].str());
  }
  return false;
}

}  // namespace

int runImportToolbox(const std::string& file, const std::string& out_path, std::ostream& out,
                     std::ostream& err) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    err << "import-toolbox: cannot read " << file << "\n";
    return kExitUsage;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::map<std::string, std::string> excluded;
  Result<ToolboxImport> made = convertChecked(text.str(), file, excluded);
  // Each round refuses the tools our checks refused and converts again; a round refuses at least
  // one more tool, so this ends.
  for (std::size_t round = 0; made; ++round) {
    std::map<std::string, std::string> refused;
    std::string problems;
    const std::size_t before = excluded.size();
    if (validate(made->config, refused, problems)) break;
    for (auto& [tool, why] : refused)
      excluded.emplace(tool, "refused by this server's checks: " + why);
    if (excluded.size() == before) {
      err << "import-toolbox: the converted config is not valid, and not because of one tool:\n";
      std::istringstream lines(problems);
      for (std::string line; std::getline(lines, line);) err << shown(line) << "\n";
      return kExitConfig;
    }
    made = convertChecked(text.str(), file, excluded);
  }
  if (!made) {
    err << "import-toolbox: " << shown(file) << ": " << shown(made.error().message) << "\n";
    return kExitConfig;
  }
  for (const auto& c : made->converted) err << "converted: " << shown(c) << "\n";
  for (const auto& r : made->refused) err << "refused: " << shown(r) << "\n";
  for (const auto& n : made->notes) err << "note: " << shown(n) << "\n";
  if (made->converted.empty()) {
    err << "import-toolbox: no tool could be converted; nothing written\n";
    return kExitConfig;
  }
  if (out_path.empty()) {
    out << made->config;
    err << "\n# .env template (the variables the config reads):\n" << made->env_template;
    return kExitOk;
  }
  std::ofstream(out_path) << made->config;
  std::ofstream(out_path + ".env") << made->env_template;
  err << "wrote " << out_path << " and its .env template " << out_path << ".env\n";
  return kExitOk;
}

}  // namespace mcpdb::app
