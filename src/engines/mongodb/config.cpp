#include "engines/mongodb/config.hpp"

#include <algorithm>
#include <set>

#include "config/config.hpp"
#include "config/section.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::mongodb {

std::string_view idTypeName(IdType type) {
  switch (type) {
    case IdType::ObjectId: return "objectId";
    case IdType::String: return "string";
    case IdType::Int: return "int";
  }
  return "objectId";
}

std::string_view filterTypeName(FilterType type) {
  switch (type) {
    case FilterType::String: return "string";
    case FilterType::Integer: return "integer";
    case FilterType::Number: return "number";
    case FilterType::Boolean: return "boolean";
  }
  return "string";
}

const Target* Settings::find(std::string_view name) const {
  for (const auto& t : targets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string fieldPathProblem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.size() > 200) return "is longer than 200 characters";
  if (path.front() == '$') return "must not start with '$' (operators are never field names)";
  if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string_view::npos) {
    return "has an empty segment (a leading, trailing or doubled '.')";
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    const std::string_view seg = path.substr(start, dot - start);
    if (seg.front() == '$')
      return "has a segment starting with '$' (operators are never field names)";
    for (char c : seg) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-';
      if (!ok) return "may contain only letters, digits, '_', '-' and '.' between segments";
    }
    start = dot + 1;
  }
  return {};
}

std::string collectionNameProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > 120) return "is longer than 120 characters";
  if (name.find('$') != std::string_view::npos) return "must not contain '$'";
  if (name.find('\0') != std::string_view::npos) return "must not contain a NUL character";
  if (name.rfind("system.", 0) == 0) return "must not be a system collection";
  if (name.front() == '.' || name.back() == '.' || name.find("..") != std::string_view::npos) {
    return "must not start or end with '.' or contain '..'";
  }
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == ' ')
      return "must not contain spaces or control characters";
  }
  return {};
}

std::string databaseNameProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > 63) return "is longer than 63 characters";
  for (char c : name) {
    if (c == '/' || c == '\\' || c == '.' || c == ' ' || c == '"' || c == '$' || c == '\0') {
      return "contains a character MongoDB does not allow in database names";
    }
  }
  return {};
}

std::vector<std::string> sourceVariables(const Source& source) {
  std::vector<std::string> out = {source.uri_env};
  if (source.database.empty()) out.push_back(source.database_env);
  return out;
}

namespace {

using config::Node;

bool isSimpleName(std::string_view s, std::size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// The messages of the value checks, each naming the value (the operator's own text).
std::string fieldPathMessage(std::string_view path) {
  auto p = fieldPathProblem(path);
  return p.empty() ? "" : "field path '" + std::string(path) + "' " + p;
}

std::string collectionMessage(std::string_view name) {
  auto p = collectionNameProblem(name);
  return p.empty() ? "" : "collection name '" + std::string(name) + "' " + p;
}

std::string targetNameMessage(std::string_view name) {
  return isSimpleName(name, 64)
             ? ""
             : "invalid target name '" + std::string(name) + "' (1-64 of A-Z a-z 0-9 _ -)";
}

std::string toolNameMessage(std::string_view name) {
  return protocol::isValidToolName(name)
             ? ""
             : "invalid tool name '" + std::string(name) + "' (1-128 of A-Z a-z 0-9 _ - .)";
}

std::string indexNameMessage(std::string_view name) {
  return isSimpleName(name, 128) ? ""
                                 : "index name '" + std::string(name) +
                                       "' may contain only letters, digits, '_' and '-' (1-128)";
}

bool readLimits(Limits& limits, const Node& node) {
  const std::size_t before = node.diag().errors().size();
  limits = config::parseLimits(node, limits, &limits);
  return node.diag().errors().size() == before;
}

Json fieldPathsSchema() {
  return {{"type", "array"}, {"items", {{"type", "string"}}}};
}

// A list of distinct field paths, none a prefix path of another (MongoDB refuses "a" with "a.b").
bool readFieldPathList(std::vector<std::string>& out, const Node& list) {
  if (!list.isSequence()) {
    list.error("must be a list of strings");
    return false;
  }
  bool ok = true;
  std::vector<std::string> values;
  const auto elems = list.elements();
  for (const auto& e : elems) {
    auto v = e.asString();  // every element is checked, so one run reports each bad one
    if (!v) ok = false;
    values.push_back(v.value_or(""));
  }
  if (!ok) return false;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string& p = values[i];
    if (auto message = fieldPathMessage(p); !message.empty()) {
      elems[i].error(message);
      ok = false;
    } else if (!seen.insert(p).second) {
      elems[i].error("duplicate field '" + p + "'");
      ok = false;
    }
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t j = 0; j < values.size(); ++j) {
      const std::string& a = values[i];
      const std::string& b = values[j];
      if (!fieldPathProblem(a).empty() || !fieldPathProblem(b).empty()) continue;
      if (i != j && b.size() > a.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '.') {
        elems[j].error(
            ("field '" + b + "' overlaps field '").append(a).append("' (list only one of them)"));
        ok = false;
      }
    }
  }
  out = std::move(values);
  return ok;
}

// True when `key` is absent or the struct holds the file's value (it was not refused), so a rule
// relating it to another key judges what the operator wrote, never a default left by a refusal.
bool holdsFileValue(const Node& node, std::string_view key, std::uint64_t value) {
  const Node c = node.child(key);
  if (!c.present()) return true;
  long long v = 0;
  return YAML::convert<long long>::decode(c.yaml(), v) && v >= 0 &&
         static_cast<std::uint64_t>(v) == value;
}

// ---- sources ----------------------------------------------------------------------------------

// The URI holds credentials: the file only ever names the variable that holds it.
std::string uriEnvMessage(std::string_view name) {
  if (name.find("://") != std::string_view::npos || name.rfind("mongodb", 0) == 0) {
    return "must name the environment variable holding the URI, not the URI itself (the file "
           "holds no secrets)";
  }
  return config::envNameProblem(name);
}

std::string databaseMessage(std::string_view name) {
  auto p = databaseNameProblem(name);
  return p.empty() ? "" : "database name '" + std::string(name) + "' " + p;
}

const config::Section<Source>& sourceSection() {
  static const auto s =
      config::Section<Source>("a MongoDB deployment and database the targets read")
          .entryNoun("source")
          .string("uri_env", &Source::uri_env,
                  "the environment variable holding its connection string (mongodb:// or "
                  "mongodb+srv://, with credentials and TLS options)",
                  config::kRequired, uriEnvMessage)
          .string("database_env", &Source::database_env,
                  "the environment variable holding the database name", config::kOptional,
                  config::envNameProblem)
          .string("database", &Source::database, "the database name (instead of database_env)",
                  config::kOptional, databaseMessage)
          .check([](Source& src, const Node& node) {
            if (node.child("database").present() && node.child("database_env").present()) {
              node.child("database").error("give database or database_env, not both");
              return false;
            }
            if (!node.child("database").present() && !node.child("database_env").present()) {
              node.errorAt("database_env", "is required (or database: the database name)");
              return false;
            }
            (void)src;
            return true;
          });
  return s;
}

// Each target and search reads a declared source (`source:` may be left out when there is only
// one); after this, every `source` member holds a declared source's name.
bool resolveSources(Settings& s, const Node& node) {
  if (s.sources.empty()) {
    s.sources.push_back({std::string(config::kDefaultSourceName), std::string(kDefaultUriEnv),
                         std::string(kDefaultDatabaseEnv), ""});
  }
  bool ok = true;
  for (auto& t : s.targets) {
    const Node at = node.child("targets").child(t.name);
    const Source* src = config::resolveSource(s.sources, t.source, at);
    if (src == nullptr) {
      ok = false;
      continue;
    }
    t.source = src->name;
    if (!t.vector_search) continue;
    VectorSearch& vs = *t.vector_search;
    if (vs.source.empty()) {
      vs.source = t.source;
    } else if (const Source* vsrc =
                   config::resolveSource(s.sources, vs.source, at.child("vector_search"))) {
      vs.source = vsrc->name;
    } else {
      ok = false;
    }
  }
  return ok;
}

// ---- vector_search ----------------------------------------------------------------------------

const config::Section<FilterField>& filterFieldSection() {
  static const auto s =
      config::Section<FilterField>("an equality filter agents may give")
          .string("path", &FilterField::path, "the document field compared", config::kRequired,
                  fieldPathMessage)
          .choice("type", &FilterField::type,
                  {{"string", FilterType::String},
                   {"integer", FilterType::Integer},
                   {"number", FilterType::Number},
                   {"boolean", FilterType::Boolean}},
                  "the JSON type an agent gives, converted to one BSON type", config::kRequired)
          .string("description", &FilterField::description, "shown to agents in the tool schema");
  return s;
}

// Each filter field once, never the vector field.
bool readFilterFields(VectorSearch& vs, const Node& list) {
  if (!list.isSequence()) {
    list.error("must be a list of {path, type, description}");
    return false;
  }
  bool ok = true;
  std::set<std::string> seen;
  for (const auto& e : list.elements()) {
    FilterField f;
    if (!filterFieldSection().parse(e, f)) {
      ok = false;
    } else if (!seen.insert(f.path).second) {
      e.child("path").error("duplicate filter field '" + f.path + "'");
      ok = false;
    } else if (f.path == vs.path) {
      e.child("path").error("the vector field cannot be a filter field");
      ok = false;
    } else {
      vs.filter_fields.push_back(std::move(f));
    }
  }
  return ok;
}

const config::Section<VectorSearch>& numCandidatesSection() {
  static const auto s = config::Section<VectorSearch>(
                            "$vectorSearch numCandidates = min(max(k * multiplier, k), max)")
                            .integer("multiplier", &VectorSearch::num_candidates_multiplier, 1, 100,
                                     "candidates per result (default 10; Atlas recommends 10-20)")
                            .integer("max", &VectorSearch::num_candidates_max, 1, 10000,
                                     "the most candidates (default 1000)");
  return s;
}

const config::Section<VectorSearch>& fallbackSection() {
  static const auto s =
      config::Section<VectorSearch>("the exact scan used where the server has no Atlas Search")
          .integer("exact_scan_max_docs", &VectorSearch::exact_scan_max_docs, 1, 1000000,
                   "documents the scan reads at most (default 10000)");
  return s;
}

// A key whose value is a mapping read into the same struct by `sub` (the struct keeps it flat).
template <class T>
config::Section<T>& flatObject(config::Section<T>& s, std::string key,
                               const config::Section<T>& sub, std::string doc) {
  return s.custom(
      std::move(key), std::move(doc), [&sub] { return sub.jsonSchema(); }, config::kOptional,
      [&sub](T& out, const Node& n) { return sub.parse(n, out); });
}

// numCandidates must reach the limit k, and the default k must be allowed.
bool checkK(VectorSearch& vs, const Node& node) {
  const bool k_read =
      holdsFileValue(node, "max_k", vs.max_k) && holdsFileValue(node, "default_k", vs.default_k) &&
      (!node.child("num_candidates").present() || !node.child("num_candidates").isMap() ||
       holdsFileValue(node.child("num_candidates"), "max", vs.num_candidates_max));
  if (!k_read) return true;  // a refused value was reported; its default proves nothing
  if (vs.default_k > vs.max_k) {
    node.errorAt("default_k", "must not exceed max_k (" + std::to_string(vs.max_k) + ")");
    return false;
  }
  if (vs.max_k > vs.num_candidates_max) {
    node.errorAt("max_k", "must not exceed num_candidates.max (" +
                              std::to_string(vs.num_candidates_max) +
                              "): $vectorSearch needs numCandidates >= limit");
    return false;
  }
  return true;
}

// The search result has fixed keys (id, title, text, metadata, score); the vector itself is never
// returned and "score" is the name of the computed score in the $project stage.
bool checkReservedFields(VectorSearch& vs, const Node& node) {
  const std::string vector = fieldPathProblem(vs.path).empty() ? vs.path : "";
  bool ok = true;
  const std::vector<std::pair<std::string, std::string>> named = {
      {"id_field", vs.id_field}, {"title_field", vs.title_field}, {"text_field", vs.text_field}};
  for (const auto& [key, value] : named) {
    if (!fieldPathProblem(value).empty()) continue;  // refused already
    if (!vector.empty() && value == vector) {
      node.errorAt(key, "must not be the vector field '" + vector + "'");
      ok = false;
    } else if (value == "score") {
      node.errorAt(key, "'score' is reserved for the search score");
      ok = false;
    }
  }
  for (const auto& m : vs.metadata_fields) {
    if ((!vector.empty() && m == vector) || m == "score") {
      node.child("metadata_fields")
          .error("must not list '" + m + "' (the vector field and 'score' are reserved)");
      ok = false;
    }
  }
  return ok;
}

config::Section<VectorSearch> makeVectorSearchSection() {
  config::Section<VectorSearch> s("a semantic-search tool over the target's documents");
  s.string("tool", &VectorSearch::tool, "its tool name (default semantic_search_mongodb)",
           config::kOptional, toolNameMessage)
      .string("description", &VectorSearch::description, "the tool's description for agents")
      .string("index", &VectorSearch::index, "the Atlas Vector Search index name",
              config::kRequired, indexNameMessage)
      .string("path", &VectorSearch::path, "the field holding the vector", config::kRequired,
              fieldPathMessage)
      .string("id_field", &VectorSearch::id_field, "the result's `id` (default _id)",
              config::kOptional, fieldPathMessage)
      .string("title_field", &VectorSearch::title_field, "the result's `title`", config::kRequired,
              fieldPathMessage)
      .string("text_field", &VectorSearch::text_field, "the result's `text`", config::kRequired,
              fieldPathMessage)
      .custom("metadata_fields", "fields returned as the result's `metadata`", &fieldPathsSchema,
              config::kOptional, [](VectorSearch& vs, const Node& n) {
                return readFieldPathList(vs.metadata_fields, n);
              });
  flatObject(s, "num_candidates", numCandidatesSection(),
             "$vectorSearch candidates: {`multiplier`: 1..100 (default 10), `max`: 1..10000 "
             "(default 1000)}");
  s.integer("max_k", &VectorSearch::max_k, 1, 100,
            "the most results a call may ask for (default 20)")
      .integer("default_k", &VectorSearch::default_k, 1, 100,
               "results when a call gives no k (default 5)")
      .custom(
          "filter_fields",
          "equality filters agents may give: a list of {`path`, `type`, `description`}",
          [] {
            return Json{{"type", "array"}, {"items", filterFieldSection().jsonSchema()}};
          },
          config::kOptional, readFilterFields)
      .choice("method", &VectorSearch::method,
              {{"auto", SearchMethod::Auto},
               {"atlas", SearchMethod::Atlas},
               {"exact", SearchMethod::Exact}},
              "atlas ($vectorSearch), exact (the exact scan) or auto (atlas, then exact where the "
              "server has no Atlas Search; the default)")
      .integer("dimensions", &VectorSearch::dimensions, 1, 8192,
               "the vectors' dimension (default: the embedding model's)");
  flatObject(s, "fallback", fallbackSection(),
             "the exact scan: {`exact_scan_max_docs`: 1..1000000 (default 10000)}");
  s.string("source", &VectorSearch::source, "the source it searches (default: the target's)");
  s.check(checkK).check(checkReservedFields);
  return s;
}

const config::Section<VectorSearch>& vectorSearchSection() {
  static const auto s = makeVectorSearchSection();
  return s;
}

// ---- targets ----------------------------------------------------------------------------------

const config::Section<Target>& defaultSortSection() {
  static const auto s =
      config::Section<Target>("the order of list_mongodb_documents")
          .custom(
              "field", "_id, the only sort field (list cursors are _id positions)",
              [] {
                return Json{{"type", "string"}, {"enum", {"_id"}}};
              },
              config::kRequired,
              [](Target&, const Node& n) {
                auto f = n.asString();
                if (f && *f != "_id") {
                  n.error(
                      "only _id is supported (list cursors are _id positions, so paging stays "
                      "exact)");
                }
                return f && *f == "_id";
              })
          .choice("order", &Target::sort_descending, {{"asc", false}, {"desc", true}},
                  "asc (the default) or desc");
  return s;
}

const config::Section<Target>& countSection() {
  static const auto s = config::Section<Target>("count_mongodb_documents")
                            .integer("exact_max", &Target::count_exact_max, 1, 100000000,
                                     "documents an exact count reads at most (default 100000)");
  return s;
}

config::Section<Target> makeTargetSection() {
  config::Section<Target> s("a collection agents may read, under the name agents see");
  s.entryNoun("target")
      .string("collection", &Target::collection, "the collection name", config::kRequired,
              collectionMessage)
      .string("description", &Target::description, "what the collection holds, shown to agents")
      .choice("id_type", &Target::id_type,
              {{"objectId", IdType::ObjectId}, {"string", IdType::String}, {"int", IdType::Int}},
              "how an agent's _id is converted: objectId (the default), string or int")
      .custom("projection", "the only fields ever returned (plus _id)", &fieldPathsSchema,
              config::kRequired, [](Target& t, const Node& n) {
                const bool ok = readFieldPathList(t.projection, n);
                if (ok && t.projection.empty()) {
                  n.error("must list at least one field");
                  return false;
                }
                return ok;
              });
  flatObject(s, "default_sort", defaultSortSection(),
             "{`field`: _id, `order`: asc | desc}: the listing order");
  flatObject(s, "count", countSection(), "{`exact_max`: 1..100000000 (default 100000)}");
  s.object("vector_search", &Target::vector_search, vectorSearchSection(),
           "a semantic-search tool over this collection")
      .choice("fence", &Target::fence,
              {{"auto", Fence::Auto}, {"always", Fence::Always}, {"never", Fence::Never}},
              "untrusted-data fencing of its documents (default: the server's)")
      .string("source", &Target::source, "the source it reads (default: the only one)");
  return s;
}

const config::Section<Target>& targetSection() {
  static const auto s = makeTargetSection();
  return s;
}

// A semantic-search tool name belongs to one target.
bool checkSearchToolNames(Settings& s, const Node& node) {
  bool ok = true;
  std::set<std::string> tool_names;
  for (const auto& t : s.targets) {
    if (!t.vector_search || tool_names.insert(t.vector_search->tool).second) continue;
    node.child("targets")
        .child(t.name)
        .child("vector_search")
        .errorAt("tool", "tool name '" + t.vector_search->tool +
                             "' is already used by another target (set vector_search.tool)");
    ok = false;
  }
  return ok;
}

}  // namespace

const config::Section<Settings>& settingsSection() {
  static const auto s =
      config::Section<Settings>("the MongoDB collections agents may read")
          .boolean("optional", &Settings::optional,
                   "true: when this engine's environment is unset, the server starts without it "
                   "(its tools are not served; check-config and doctor still report it). Default "
                   "false: a config that declares tools for an engine whose environment is unset "
                   "refuses to start (exit 3)")
          .named("sources", &Settings::sources, &Source::name, sourceSection(),
                 "the deployments and databases, by name (default: `default` from MONGODB_URI "
                 "and MONGODB_DATABASE)",
                 config::kOptional, config::sourceNameProblem,
                 "must map a source name to its settings")
          .choice("read_preference", &Settings::read_preference,
                  std::vector<std::pair<std::string, std::string>>{
                      {"primary", "primary"},
                      {"primaryPreferred", "primaryPreferred"},
                      {"secondary", "secondary"},
                      {"secondaryPreferred", "secondaryPreferred"},
                      {"nearest", "nearest"}},
                  "which members serve reads (default primary)")
          .choice("read_concern", &Settings::read_concern,
                  std::vector<std::pair<std::string, std::string>>{
                      {"local", "local"}, {"available", "available"}, {"majority", "majority"}},
                  "the readConcern of every read (default: the server's)")
          .custom("limits", "rows, bytes and time for every tool (at most the server's)",
                  &config::limitsSchema, config::kOptional,
                  [](Settings& st, const Node& n) { return readLimits(st.limits, n); })
          .named("targets", &Settings::targets, &Target::name, targetSection(),
                 "the collections, by the name agents see (1-64 of A-Z a-z 0-9 _ -)",
                 config::kRequired, targetNameMessage,
                 "must be a map of logical target name to collection settings")
          .missingHint("(a map of logical target name to collection settings)")
          .check([](Settings& st, const Node& node) {
            const Node targets = node.child("targets");
            if (targets.present() && targets.isMap() && targets.entries().empty()) {
              targets.error("must declare at least one target");
              return false;
            }
            const bool names_ok = checkSearchToolNames(st, node);
            return resolveSources(st, node) && names_ok;
          });
  return s;
}

Settings parseSettings(const config::Node& section, const Limits& defaults) {
  Settings s;
  s.limits = defaults;
  if (section.present()) settingsSection().parse(section, s);
  if (s.sources.empty()) {
    s.sources.push_back({std::string(config::kDefaultSourceName), std::string(kDefaultUriEnv),
                         std::string(kDefaultDatabaseEnv), ""});
  }
  return s;
}

}  // namespace mcpdb::mongodb
