#include "config/section.hpp"

namespace mcpdb::config::section_detail {

Json withDoc(Json schema, const std::string& doc) {
  if (!doc.empty()) schema["description"] = doc;
  return schema;
}

std::string typeName(const Json& schema) {
  const std::string type = schema.value("type", std::string("any"));
  if (type == "string" && schema.contains("enum")) {
    std::string names;
    for (const auto& e : schema["enum"])
      names += (names.empty() ? "" : " | ") + e.get<std::string>();
    return names;
  }
  if (type == "integer" && schema.contains("minimum") && schema.contains("maximum")) {
    return "integer " + schema["minimum"].dump() + ".." + schema["maximum"].dump();
  }
  if (type == "array") return "list of " + typeName(schema.value("items", Json::object()));
  if (type == "object" && schema.contains("additionalProperties") &&
      schema["additionalProperties"].is_object()) {
    return "map of name to mapping";
  }
  if (type == "object") return "mapping";
  return type;
}

void missing(const Node& parent, std::string_view key, const std::string& hint) {
  // An absent node has no position: report at the parent's line with the key's path.
  parent.diag().error(parent.line(), parent.child(key).path(), "is required" + hint);
}

}  // namespace mcpdb::config::section_detail
