#include "engines/mongodb/settings.hpp"

#include <algorithm>
#include <set>

#include "config/config.hpp"
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

namespace {

bool isSimpleName(std::string_view s, std::size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// Reports at `parent.key` when present, else at the parent's line with the key's path (an absent
// YAML node has no position).
void errorAt(const config::Node& parent, std::string_view key, const std::string& message) {
  const config::Node c = parent.child(key);
  if (c.present()) {
    c.error(message);
  } else {
    parent.diag().error(parent.line(), c.path(), message);
  }
}

// Reads a field path at `key`, reporting a located error when it is malformed.
std::optional<std::string> fieldPath(const config::Node& node, std::string_view key,
                                     bool required) {
  auto v = node.string(key, required);
  if (!v) return std::nullopt;
  if (auto p = fieldPathProblem(*v); !p.empty()) {
    node.child(key).error("field path '" + *v + "' " + p);
    return std::nullopt;
  }
  return v;
}

// A list of distinct field paths, none a prefix path of another (MongoDB refuses "a" with "a.b").
std::optional<std::vector<std::string>> fieldPathList(const config::Node& node,
                                                      std::string_view key, bool required) {
  const config::Node list = node.child(key);
  auto values = node.stringList(key, required);
  if (!values) return std::nullopt;
  bool ok = true;
  std::set<std::string> seen;
  const auto elems = list.elements();
  for (std::size_t i = 0; i < values->size(); ++i) {
    const std::string& p = (*values)[i];
    if (auto problem = fieldPathProblem(p); !problem.empty()) {
      elems[i].error(("field path '" + p + "' ").append(problem));
      ok = false;
      continue;
    }
    if (!seen.insert(p).second) {
      elems[i].error("duplicate field '" + p + "'");
      ok = false;
      continue;
    }
  }
  for (std::size_t i = 0; i < values->size(); ++i) {
    for (std::size_t j = 0; j < values->size(); ++j) {
      const std::string& a = (*values)[i];
      const std::string& b = (*values)[j];
      if (!fieldPathProblem(a).empty() || !fieldPathProblem(b).empty()) continue;
      if (i != j && b.size() > a.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '.') {
        elems[j].error(
            ("field '" + b + "' overlaps field '").append(a).append("' (list only one of them)"));
        ok = false;
      }
    }
  }
  if (!ok) return std::nullopt;
  return values;
}

std::optional<VectorSearch> parseVectorSearch(const config::Node& vs, const Target& target) {
  if (!vs.expectMap({"tool", "description", "index", "path", "id_field", "title_field",
                     "text_field", "metadata_fields", "num_candidates", "max_k", "default_k",
                     "filter_fields", "method", "dimensions", "fallback"})) {
    return std::nullopt;
  }
  VectorSearch out;
  bool ok = true;
  if (auto v = vs.string("tool")) {
    if (!protocol::isValidToolName(*v)) {
      vs.child("tool").error("invalid tool name '" + *v + "' (1-128 of A-Z a-z 0-9 _ - .)");
      ok = false;
    } else {
      out.tool = *v;
    }
  }
  if (auto v = vs.string("description")) out.description = *v;
  if (auto v = vs.string("index", true)) {
    if (!isSimpleName(*v, 128)) {
      vs.child("index").error("index name '" + *v +
                              "' may contain only letters, digits, '_' and '-' (1-128)");
      ok = false;
    } else {
      out.index = *v;
    }
  } else {
    ok = false;
  }
  if (auto v = fieldPath(vs, "path", true))
    out.path = *v;
  else
    ok = false;
  if (vs.has("id_field")) {
    if (auto v = fieldPath(vs, "id_field", false))
      out.id_field = *v;
    else
      ok = false;
  }
  if (auto v = fieldPath(vs, "title_field", true))
    out.title_field = *v;
  else
    ok = false;
  if (auto v = fieldPath(vs, "text_field", true))
    out.text_field = *v;
  else
    ok = false;
  if (vs.has("metadata_fields")) {
    if (auto v = fieldPathList(vs, "metadata_fields", false))
      out.metadata_fields = *v;
    else
      ok = false;
  }
  if (vs.has("num_candidates")) {
    const config::Node nc = vs.child("num_candidates");
    if (nc.expectMap({"multiplier", "max"})) {
      if (auto v = nc.integer("multiplier", 1, 100))
        out.num_candidates_multiplier = static_cast<std::uint32_t>(*v);
      else if (nc.has("multiplier"))
        ok = false;
      if (auto v = nc.integer("max", 1, 10000))
        out.num_candidates_max = static_cast<std::uint32_t>(*v);
      else if (nc.has("max"))
        ok = false;
    } else {
      ok = false;
    }
  }
  if (vs.has("max_k")) {
    if (auto v = vs.integer("max_k", 1, 100))
      out.max_k = static_cast<std::uint32_t>(*v);
    else
      ok = false;
  }
  if (vs.has("default_k")) {
    if (auto v = vs.integer("default_k", 1, 100))
      out.default_k = static_cast<std::uint32_t>(*v);
    else
      ok = false;
  }
  if (ok && out.default_k > out.max_k) {
    errorAt(vs, "default_k", "must not exceed max_k (" + std::to_string(out.max_k) + ")");
    ok = false;
  }
  if (ok && out.max_k > out.num_candidates_max) {
    errorAt(vs, "max_k",
            "must not exceed num_candidates.max (" + std::to_string(out.num_candidates_max) +
                "): $vectorSearch needs numCandidates >= limit");
    ok = false;
  }
  if (auto v = vs.choice("method", {"auto", "atlas", "exact"})) {
    out.method = *v == "atlas"   ? SearchMethod::Atlas
                 : *v == "exact" ? SearchMethod::Exact
                                 : SearchMethod::Auto;
  } else if (vs.has("method")) {
    ok = false;
  }
  if (vs.has("dimensions")) {
    if (auto v = vs.integer("dimensions", 1, 8192))
      out.dimensions = static_cast<std::uint32_t>(*v);
    else
      ok = false;
  }
  if (vs.has("fallback")) {
    const config::Node fb = vs.child("fallback");
    if (fb.expectMap({"exact_scan_max_docs"})) {
      if (auto v = fb.integer("exact_scan_max_docs", 1, 1000000))
        out.exact_scan_max_docs = static_cast<std::uint32_t>(*v);
      else if (fb.has("exact_scan_max_docs"))
        ok = false;
    } else {
      ok = false;
    }
  }
  if (vs.has("filter_fields")) {
    const config::Node ff = vs.child("filter_fields");
    if (!ff.isSequence()) {
      ff.error("must be a list of {path, type, description}");
      ok = false;
    } else {
      std::set<std::string> seen;
      for (const auto& e : ff.elements()) {
        if (!e.expectMap({"path", "type", "description"})) {
          ok = false;
          continue;
        }
        FilterField f;
        auto p = fieldPath(e, "path", true);
        auto t = e.choice("type", {"string", "integer", "number", "boolean"}, true);
        if (!p || !t) {
          ok = false;
          continue;
        }
        if (!seen.insert(*p).second) {
          e.child("path").error("duplicate filter field '" + *p + "'");
          ok = false;
          continue;
        }
        if (*p == out.path) {
          e.child("path").error("the vector field cannot be a filter field");
          ok = false;
          continue;
        }
        f.path = *p;
        f.type = *t == "integer"   ? FilterType::Integer
                 : *t == "number"  ? FilterType::Number
                 : *t == "boolean" ? FilterType::Boolean
                                   : FilterType::String;
        if (auto d = e.string("description")) f.description = *d;
        out.filter_fields.push_back(std::move(f));
      }
    }
  }
  {
    // The search result has fixed keys (id, title, text, metadata, score); the vector itself is
    // never returned and "score" is the name of the computed score in the $project stage.
    const std::vector<std::pair<std::string, std::string>> named = {
        {"id_field", out.id_field},
        {"title_field", out.title_field},
        {"text_field", out.text_field}};
    for (const auto& [key, value] : named) {
      if (!out.path.empty() && value == out.path) {
        errorAt(vs, key, "must not be the vector field '" + out.path + "'");
        ok = false;
      } else if (value == "score") {
        errorAt(vs, key, "'score' is reserved for the search score");
        ok = false;
      }
    }
    for (const auto& m : out.metadata_fields) {
      if ((!out.path.empty() && m == out.path) || m == "score") {
        vs.child("metadata_fields")
            .error("must not list '" + m + "' (the vector field and 'score' are reserved)");
        ok = false;
      }
    }
  }
  (void)target;
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace

Settings parseSettings(const config::Node& section, const Limits& defaults) {
  Settings s;
  s.limits = defaults;
  if (!section.present()) return s;
  if (!section.expectMap({"read_preference", "read_concern", "limits", "targets"})) return s;
  if (auto v = section.choice("read_preference", {"primary", "primaryPreferred", "secondary",
                                                  "secondaryPreferred", "nearest"})) {
    s.read_preference = *v;
  }
  if (auto v = section.choice("read_concern", {"local", "available", "majority"}))
    s.read_concern = *v;
  s.limits = config::parseLimits(section.child("limits"), defaults, &defaults);

  const config::Node targets = section.child("targets");
  if (!targets.present()) {
    errorAt(section, "targets",
            "is required (a map of logical target name to collection settings)");
    return s;
  }
  if (!targets.isMap()) {
    targets.error("must be a map of logical target name to collection settings");
    return s;
  }
  if (targets.entries().empty()) {
    targets.error("must declare at least one target");
    return s;
  }
  std::set<std::string> tool_names;
  for (auto& [name, t] : targets.entries()) {
    if (!isSimpleName(name, 64)) {
      t.error("invalid target name '" + name + "' (1-64 of A-Z a-z 0-9 _ -)");
      continue;
    }
    if (!t.expectMap({"collection", "description", "id_type", "projection", "default_sort", "count",
                      "vector_search", "fence"})) {
      continue;
    }
    Target target;
    target.name = name;
    if (auto f = t.choice("fence", {"auto", "always", "never"})) target.fence = *parseFence(*f);
    bool ok = true;
    if (auto c = t.string("collection", true)) {
      if (auto p = collectionNameProblem(*c); !p.empty()) {
        t.child("collection").error("collection name '" + *c + "' " + p);
        ok = false;
      } else {
        target.collection = *c;
      }
    } else {
      ok = false;
    }
    if (auto d = t.string("description")) target.description = *d;
    if (auto v = t.choice("id_type", {"objectId", "string", "int"})) {
      target.id_type = *v == "string" ? IdType::String
                       : *v == "int"  ? IdType::Int
                                      : IdType::ObjectId;
    } else if (t.has("id_type")) {
      ok = false;
    }
    if (auto p = fieldPathList(t, "projection", true)) {
      if (p->empty()) {
        t.child("projection").error("must list at least one field");
        ok = false;
      }
      target.projection = *p;
    } else {
      ok = false;
    }
    if (t.has("default_sort")) {
      const config::Node ds = t.child("default_sort");
      if (ds.expectMap({"field", "order"})) {
        if (auto f = ds.string("field", true)) {
          if (*f != "_id") {
            ds.child("field").error(
                "only _id is supported (list cursors are _id positions, so paging stays exact)");
            ok = false;
          }
        } else {
          ok = false;
        }
        if (auto o = ds.choice("order", {"asc", "desc"}))
          target.sort_descending = *o == "desc";
        else if (ds.has("order"))
          ok = false;
      } else {
        ok = false;
      }
    }
    if (t.has("count")) {
      const config::Node c = t.child("count");
      if (c.expectMap({"exact_max"})) {
        if (auto v = c.integer("exact_max", 1, 100000000))
          target.count_exact_max = static_cast<std::uint64_t>(*v);
        else if (c.has("exact_max"))
          ok = false;
      } else {
        ok = false;
      }
    }
    if (t.has("vector_search")) {
      auto vs = parseVectorSearch(t.child("vector_search"), target);
      if (!vs) {
        ok = false;
      } else if (!tool_names.insert(vs->tool).second) {
        errorAt(t.child("vector_search"), "tool",
                "tool name '" + vs->tool +
                    "' is already used by another target (set vector_search.tool)");
        ok = false;
      } else {
        target.vector_search = std::move(vs);
      }
    }
    if (ok) s.targets.push_back(std::move(target));
  }
  return s;
}

}  // namespace mcpdb::mongodb
