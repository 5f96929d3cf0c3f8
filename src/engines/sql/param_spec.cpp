#include "engines/sql/param_spec.hpp"

#include <cmath>
#include <limits>
#include <set>

#include "config/section.hpp"
#include "protocol/schema.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::sql {

using config::Node;

std::string_view scalarTypeName(ScalarType t) {
  switch (t) {
    case ScalarType::String: return "string";
    case ScalarType::Integer: return "integer";
    case ScalarType::Float: return "float";
    case ScalarType::Boolean: return "boolean";
    case ScalarType::Date: return "date";
    case ScalarType::Timestamp: return "timestamp";
    case ScalarType::Uuid: return "uuid";
  }
  return "string";
}

void finalizeScalar(ScalarSpec& spec) {
  Json schema = scalarSchema(spec);
  schema.erase("pattern");
  spec.check_schema = std::make_shared<const Json>(std::move(schema));
  spec.compiled_pattern.reset();
  if (spec.pattern) {
    // Reported by the parser when it does not compile; an invalid pattern never reaches a call.
    if (auto re = protocol::sharedPattern(*spec.pattern)) spec.compiled_pattern = *re;
  }
}

bool isParamName(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  const char first = s.front();
  if (!((first >= 'a' && first <= 'z') || first == '_')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

Json scalarSchema(const ScalarSpec& spec) {
  Json s = Json::object();
  switch (spec.type) {
    case ScalarType::String:
      s["type"] = "string";
      if (spec.min_length) s["minLength"] = *spec.min_length;
      s["maxLength"] = spec.max_length;
      if (spec.pattern) s["pattern"] = *spec.pattern;
      if (!spec.enum_values.empty()) s["enum"] = spec.enum_values;
      break;
    case ScalarType::Integer:
      s["type"] = "integer";
      if (spec.min_int) s["minimum"] = *spec.min_int;
      if (spec.max_int) s["maximum"] = *spec.max_int;
      break;
    case ScalarType::Float:
      s["type"] = "number";
      if (spec.min_num) s["minimum"] = *spec.min_num;
      if (spec.max_num) s["maximum"] = *spec.max_num;
      break;
    case ScalarType::Boolean: s["type"] = "boolean"; break;
    case ScalarType::Date:
      s["type"] = "string";
      s["format"] = "date";
      break;
    case ScalarType::Timestamp:
      s["type"] = "string";
      s["format"] = "date-time";
      break;
    case ScalarType::Uuid:
      s["type"] = "string";
      s["format"] = "uuid";
      break;
  }
  return s;
}

Json paramSchema(const ParamSpec& param) {
  Json s;
  if (param.is_array) {
    s = Json{{"type", "array"}, {"items", scalarSchema(param.scalar)}};
    if (param.min_items > 0) s["minItems"] = param.min_items;
    s["maxItems"] = param.max_items;
  } else {
    s = scalarSchema(param.scalar);
  }
  if (!param.description.empty()) s["description"] = param.description;
  if (param.default_value) s["default"] = *param.default_value;
  return s;
}

Json paramsInputSchema(const std::vector<ParamSpec>& params) {
  Json props = Json::object();
  Json required = Json::array();
  for (const auto& p : params) {
    props[p.name] = paramSchema(p);
    if (p.required) required.push_back(p.name);
  }
  Json s{{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
  if (!required.empty()) s["required"] = required;
  return s;
}

namespace {

constexpr std::uint32_t kMaxStringLength = 1 << 20;
constexpr std::uint32_t kMaxArrayItems = 10000;

// The keys of a parameter and of an array parameter's `items`, each with its JSON Schema: the one
// declaration that parseParam's key checks and the config's schema and reference read (the
// parsing itself is code: which keys apply depends on the type).
using KeyList = std::vector<std::pair<std::string, Json>>;

Json described(Json schema, const char* doc) {
  schema["description"] = doc;
  return schema;
}

const std::vector<std::string> kScalarTypes = {"string", "integer",   "float", "boolean",
                                               "date",   "timestamp", "uuid"};

// The keys that bound a value, shared by a parameter and an array's items.
KeyList boundKeys() {
  return {
      {"min", described({{"type", "number"}}, "the smallest value (integer and float)")},
      {"max", described({{"type", "number"}}, "the largest value (integer and float)")},
      {"min_length", described({{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxStringLength}},
                               "the fewest characters (string)")},
      {"max_length", described({{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxStringLength}},
                               "the most characters (string; default 1024)")},
      {"pattern", described({{"type", "string"}},
                            "an RE2 pattern the value must match somewhere (anchor it with "
                            "^...$; string)")},
      {"enum", described({{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}},
                         "the only values accepted (string)")},
  };
}

const KeyList& itemKeys() {
  static const KeyList k = [] {
    KeyList keys = {
        {"type", described({{"type", "string"}, {"enum", kScalarTypes}}, "each item's type")},
        {"description", described({{"type", "string"}}, "what an item means")},
    };
    for (auto& b : boundKeys()) keys.push_back(std::move(b));
    return keys;
  }();
  return k;
}

Json objectOf(const KeyList& keys, std::vector<std::string> required);

const KeyList& paramKeys() {
  static const KeyList k = [] {
    std::vector<std::string> types = kScalarTypes;
    types.emplace_back("array");
    KeyList keys = {
        {"name", described({{"type", "string"}, {"pattern", "^[a-z_][a-z0-9_]{0,62}$"}},
                           "the argument's name agents see: a lower-case identifier")},
        {"type", described({{"type", "string"}, {"enum", types}},
                           "its type; dates and timestamps are ISO 8601 strings")},
        {"description",
         described({{"type", "string"}, {"minLength", 1}}, "what it means, written for an agent")},
        {"required", described({{"type", "boolean"}},
                               "whether agents must give it (default true without a default)")},
        {"default", described(Json::object(), "the value bound when it is absent")},
    };
    for (auto& b : boundKeys()) keys.push_back(std::move(b));
    keys.emplace_back("items", described(objectOf(itemKeys(), {"type"}),
                                         "an array parameter's items (required for `array`)"));
    keys.emplace_back("min_items",
                      described({{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxArrayItems}},
                                "the fewest items (array)"));
    keys.emplace_back("max_items",
                      described({{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxArrayItems}},
                                "the most items (array)"));
    return keys;
  }();
  return k;
}

Json objectOf(const KeyList& keys, std::vector<std::string> required) {
  Json properties = Json::object();
  for (const auto& [key, schema] : keys) properties[key] = schema;
  return {{"type", "object"},
          {"properties", properties},
          {"required", required},
          {"additionalProperties", false}};
}

std::vector<std::string> keysOf(const KeyList& keys) {
  std::vector<std::string> names;
  for (const auto& [key, schema] : keys) names.push_back(key);
  return names;
}

}  // namespace

Json paramsConfigSchema(const std::string& doc) {
  return {{"type", "array"},
          {"description", doc},
          {"items", objectOf(paramKeys(), {"name", "type", "description"})}};
}

std::vector<std::string> paramsConfigReference() {
  std::vector<std::string> lines;
  for (const auto& [key, schema] : paramKeys()) {
    const bool required = key == "name" || key == "type" || key == "description";
    lines.push_back(config::section_detail::referenceLine(key, schema, required, ""));
    if (key == "items") {
      for (const auto& [k, s] : itemKeys())
        lines.push_back("  " + config::section_detail::referenceLine(k, s, k == "type", ""));
    }
  }
  return lines;
}

std::optional<ScalarType> scalarTypeFrom(const std::string& s) {
  if (s == "string") return ScalarType::String;
  if (s == "integer") return ScalarType::Integer;
  if (s == "float") return ScalarType::Float;
  if (s == "boolean") return ScalarType::Boolean;
  if (s == "date") return ScalarType::Date;
  if (s == "timestamp") return ScalarType::Timestamp;
  if (s == "uuid") return ScalarType::Uuid;
  return std::nullopt;
}

void errorAt(const Node& parent, std::string_view key, const std::string& message) {
  if (parent.has(key)) {
    parent.child(key).error(message);
  } else {
    parent.diag().error(parent.line(), parent.child(key).path(), message);
  }
}

std::string titleFromName(const std::string& name) {
  std::string t = name;
  for (char& c : t) {
    if (c == '_' || c == '-' || c == '.') c = ' ';
  }
  if (!t.empty() && t[0] >= 'a' && t[0] <= 'z') t[0] = static_cast<char>(t[0] - 'a' + 'A');
  return t;
}

namespace {

// Keys of a scalar spec that only make sense for some types.
void refuseInapplicable(const Node& node, ScalarType type) {
  const bool is_string = type == ScalarType::String;
  const bool is_number = type == ScalarType::Integer || type == ScalarType::Float;
  for (const char* key : {"min_length", "max_length", "pattern", "enum"}) {
    if (!is_string && node.has(key)) {
      node.child(key).error("applies only to string values, not " +
                            std::string(scalarTypeName(type)));
    }
  }
  for (const char* key : {"min", "max"}) {
    if (!is_number && node.has(key)) {
      node.child(key).error("applies only to integer and float values, not " +
                            std::string(scalarTypeName(type)));
    }
  }
}

}  // namespace

ScalarSpec parseScalar(const Node& node, ScalarType type, const std::string& owner) {
  ScalarSpec s;
  s.type = type;
  refuseInapplicable(node, type);
  if (type == ScalarType::String) {
    if (auto v = node.integer("min_length", 0, kMaxStringLength))
      s.min_length = static_cast<std::uint32_t>(*v);
    if (auto v = node.integer("max_length", 1, kMaxStringLength))
      s.max_length = static_cast<std::uint32_t>(*v);
    if (s.min_length && *s.min_length > s.max_length) {
      node.child("min_length").error("must not exceed max_length");
    }
    if (auto v = node.string("pattern")) {
      if (auto re = protocol::sharedPattern(*v)) {
        if (auto st = protocol::checkPatternCost(**re, s.max_length); !st) {
          node.child("pattern").error(owner + ": " + st.error().message);
        } else {
          s.pattern = *v;
        }
      } else {
        node.child("pattern").error(owner + ": " + re.error().message);
      }
    }
    if (node.has("enum")) {
      if (auto v = node.stringList("enum")) {
        if (v->empty()) node.child("enum").error("must list at least one value");
        std::set<std::string> seen;
        for (const auto& e : *v) {
          if (!seen.insert(e).second) node.child("enum").error("lists a value twice");
          if (e.size() > s.max_length)
            node.child("enum").error("has a value longer than max_length");
        }
        s.enum_values = *v;
      }
    }
  } else if (type == ScalarType::Integer) {
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    if (auto v = node.integer("min", lo, hi)) s.min_int = *v;
    if (auto v = node.integer("max", lo, hi)) s.max_int = *v;
    if (s.min_int && s.max_int && *s.min_int > *s.max_int)
      node.child("min").error("must not exceed max");
  } else if (type == ScalarType::Float) {
    s.min_num = node.number("min");
    s.max_num = node.number("max");
    if (s.min_num && s.max_num && *s.min_num > *s.max_num)
      node.child("min").error("must not exceed max");
  }
  finalizeScalar(s);
  return s;
}

namespace {

// A YAML default converted to the JSON the parameter's schema expects.
std::optional<Json> scalarDefault(const YAML::Node& y, ScalarType type) {
  if (!y.IsScalar()) return std::nullopt;
  const std::string& s = y.Scalar();
  switch (type) {
    case ScalarType::Integer: {
      try {
        std::size_t used = 0;
        const long long v = std::stoll(s, &used, 10);
        if (used != s.size()) return std::nullopt;
        return Json(static_cast<std::int64_t>(v));
      } catch (...) {
        return std::nullopt;
      }
    }
    case ScalarType::Float: {
      try {
        std::size_t used = 0;
        const double v = std::stod(s, &used);
        if (used != s.size() || !std::isfinite(v)) return std::nullopt;
        return Json(v);
      } catch (...) {
        return std::nullopt;
      }
    }
    case ScalarType::Boolean:
      if (s == "true") return Json(true);
      if (s == "false") return Json(false);
      return std::nullopt;
    default: return Json(s);
  }
}

std::optional<ParamSpec> parseParam(const Node& node, std::set<std::string>& names) {
  if (!node.expectMap(keysOf(paramKeys()))) return std::nullopt;
  ParamSpec p;
  auto name = node.string("name", true);
  auto type = node.choice(
      "type", {"string", "integer", "float", "boolean", "date", "timestamp", "uuid", "array"},
      true);
  auto description = node.string("description", true);
  if (name) {
    if (!isParamName(*name)) {
      node.child("name").error(
          "must be a lower-case identifier ([a-z_][a-z0-9_]*, at most 63 characters)");
    } else if (!names.insert(*name).second) {
      node.child("name").error("duplicate parameter name '" + *name + "'");
    }
    p.name = *name;
  }
  if (description) {
    if (description->empty()) node.child("description").error("must not be empty");
    p.description = *description;
  }
  if (!type) return std::nullopt;
  if (*type == "array") {
    p.is_array = true;
    for (const char* key : {"min", "max", "min_length", "max_length", "pattern", "enum"}) {
      if (node.has(key)) node.child(key).error("belongs under items: for an array parameter");
    }
    Node items = node.child("items");
    if (!items.present()) {
      errorAt(node, "items", "is required for an array parameter");
      return std::nullopt;
    }
    if (!items.expectMap(keysOf(itemKeys()))) return std::nullopt;
    auto itype = items.choice(
        "type", {"string", "integer", "float", "boolean", "date", "timestamp", "uuid"}, true);
    if (!itype) return std::nullopt;
    p.scalar =
        parseScalar(items, *scalarTypeFrom(*itype), "the items of parameter '" + p.name + "'");
    if (auto v = node.integer("min_items", 0, kMaxArrayItems))
      p.min_items = static_cast<std::uint32_t>(*v);
    if (auto v = node.integer("max_items", 1, kMaxArrayItems))
      p.max_items = static_cast<std::uint32_t>(*v);
    if (p.min_items > p.max_items) node.child("min_items").error("must not exceed max_items");
  } else {
    for (const char* key : {"items", "min_items", "max_items"}) {
      if (node.has(key)) node.child(key).error("applies only to array parameters");
    }
    p.scalar = parseScalar(node, *scalarTypeFrom(*type), "parameter '" + p.name + "'");
  }
  const auto required = node.boolean("required");
  Node def = node.child("default");
  if (def.present()) {
    std::optional<Json> value;
    if (p.is_array) {
      if (def.isSequence()) {
        value = Json::array();
        for (const auto& e : def.elements()) {
          auto v = scalarDefault(e.yaml(), p.scalar.type);
          if (!v) {
            value.reset();
            break;
          }
          value->push_back(*v);
        }
      }
    } else {
      value = scalarDefault(def.yaml(), p.scalar.type);
    }
    if (!value) {
      def.error("must be a " + std::string(p.is_array ? "list of " : "") +
                std::string(scalarTypeName(p.scalar.type)) + " value");
    } else if (auto st = protocol::validateJson(paramSchema(p), *value, "default"); !st) {
      def.error("does not satisfy the parameter's own constraints (" + st.error().message + ")");
    } else {
      p.default_value = *value;
    }
    if (required && *required)
      node.child("required").error("must not be true for a parameter with a default");
    p.required = false;
  } else {
    p.required = required.value_or(true);
  }
  return p;
}

}  // namespace

std::vector<ParamSpec> parseParams(const Node& node, bool& complete) {
  std::vector<ParamSpec> out;
  complete = true;
  if (!node.present()) return out;
  if (!node.isSequence()) {
    node.error("must be a list of parameters");
    complete = false;
    return out;
  }
  std::set<std::string> names;
  for (const auto& e : node.elements()) {
    if (auto p = parseParam(e, names)) {
      out.push_back(std::move(*p));
    } else {
      complete = false;
    }
  }
  return out;
}

Result<std::vector<const Json*>> selectArguments(const std::vector<ParamSpec>& params,
                                                 const Json& arguments) {
  const Json empty = Json::object();
  const Json& args = arguments.is_null() ? empty : arguments;
  if (!args.is_object()) return makeError(Code::InvalidArgument, "arguments: must be an object");
  for (const auto& [key, v] : args.items()) {
    (void)v;
    bool known = false;
    for (const auto& p : params) known = known || p.name == key;
    // The key is the agent's, but it is a property name, not a value; still, do not echo it.
    if (!known)
      return makeError(Code::InvalidArgument, "arguments: unknown argument (see the input schema)");
  }
  std::vector<const Json*> out;
  out.reserve(params.size());
  for (const auto& p : params) {
    const Json* value = nullptr;
    if (auto it = args.find(p.name); it != args.end() && !it->is_null()) {
      value = &*it;
    } else if (p.default_value) {
      value = &*p.default_value;
    } else if (p.required) {
      return makeError(Code::InvalidArgument, "arguments." + p.name + ": is required");
    }
    out.push_back(value);
  }
  return out;
}

Status checkScalar(const ScalarSpec& spec, const Json& value, const std::string& path) {
  if (!spec.check_schema) return protocol::validateJson(scalarSchema(spec), value, path);
  if (auto st = protocol::validateJson(*spec.check_schema, value, path); !st) return st;
  if (spec.pattern) {
    if (!spec.compiled_pattern || !value.is_string() ||
        !protocol::patternFinds(*spec.compiled_pattern, value.get_ref<const std::string&>())) {
      return makeError(Code::InvalidArgument, path + ": does not match the required pattern");
    }
  }
  return {};
}

bool claimToolName(ToolNames& names, const std::string& name, const Node& where) {
  auto [it, inserted] = names.emplace(protocol::foldToolName(name), name);
  if (inserted) return true;
  if (it->second == name) {
    where.error("duplicate tool name '" + name + "'");
  } else {
    where.error("tool names '" + it->second + "' and '" + name +
                "' differ only in case; tool names must be unique regardless of case");
  }
  return false;
}

}  // namespace mcpdb::sql
