#include "config/section.hpp"

namespace mcpdb::config::section_detail {

Json withDoc(Json schema, const std::string& doc) {
  if (!doc.empty()) schema["description"] = doc;
  return schema;
}

std::string numberText(double v) {
  if (v == static_cast<double>(static_cast<std::int64_t>(v)))
    return std::to_string(static_cast<std::int64_t>(v));
  return Json(v).dump();
}

namespace {

// A bound or value as the operator writes it: 1048576 rather than 1.048576e+06, 0.5 as 0.5.
std::string bound(const Json& v) {
  return v.is_number_float() ? numberText(v.get<double>()) : v.dump();
}

// A value as it is written in YAML, for "default `8`" and "Example: `[a, b]`".
std::string yamlText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out = "[";
    for (const auto& e : v) out += (out.size() > 1 ? ", " : "") + yamlText(e);
    return out + "]";
  }
  if (v.is_object()) {
    std::string out = "{";
    for (const auto& [k, e] : v.items())
      out += (out.size() > 1 ? ", " : "") + k + ": " + yamlText(e);
    return out + "}";
  }
  if (v.is_number()) return bound(v);
  return v.dump();
}

}  // namespace

std::string typeName(const Json& schema) {
  const std::string type = schema.value("type", std::string("any"));
  if (type == "string" && schema.contains("enum")) {
    std::string names;
    for (const auto& e : schema["enum"])
      names += (names.empty() ? "" : " | ") + e.get<std::string>();
    return names;
  }
  if ((type == "integer" || type == "number") && schema.contains("minimum") &&
      schema.contains("maximum")) {
    return type + " " + bound(schema["minimum"]) + ".." + bound(schema["maximum"]);
  }
  if (schema.contains("anyOf")) {
    std::string names;
    for (const auto& e : schema["anyOf"]) names += (names.empty() ? "" : " or ") + typeName(e);
    return names;
  }
  if (type == "array") return "list of " + typeName(schema.value("items", Json::object()));
  if (type == "object" && schema.contains("additionalProperties") &&
      schema["additionalProperties"].is_object()) {
    return "map of name to " + typeName(schema["additionalProperties"]);
  }
  if (type == "object") return "mapping";
  return type;
}

std::string referenceLine(const std::string& key, const Json& schema, bool required,
                          const std::string& default_text) {
  std::string line = "- `" + key + "` (" + typeName(schema);
  if (required) line += ", required";
  if (!default_text.empty()) {
    line += ", default: " + default_text;
  } else if (schema.contains("default")) {
    line += ", default `" + yamlText(schema["default"]) + "`";
  }
  const std::string doc = schema.value("description", std::string());
  line += "): " + doc;
  if (schema.contains("examples") && !schema["examples"].empty()) {
    line += std::string(!doc.empty() && doc.back() == '.' ? "" : ".") + " Example: `" + key + ": " +
            yamlText(schema["examples"][0]) + "`.";
  }
  return line;
}

void missing(const Node& parent, std::string_view key, const std::string& hint) {
  // An absent node has no position: report at the parent's line with the key's path.
  parent.diag().error(parent.line(), parent.child(key).path(), "is required" + hint);
}

}  // namespace mcpdb::config::section_detail
