#include "protocol/tool_registry.hpp"

#include <algorithm>

namespace mcpdb::protocol {

bool isValidToolName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string foldToolName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Status ToolRegistry::add(Tool tool) {
  if (!isValidToolName(tool.name)) {
    return makeError(Code::InvalidArgument, "invalid tool name '" + tool.name +
                                                "': use 1-128 characters of A-Z a-z 0-9 _ - .");
  }
  if (by_name_.count(tool.name) != 0) {
    return makeError(Code::InvalidArgument, "duplicate tool name '" + tool.name + "'");
  }
  if (auto it = by_folded_name_.find(foldToolName(tool.name)); it != by_folded_name_.end()) {
    return makeError(Code::InvalidArgument, "tool names '" + it->second + "' and '" + tool.name +
                                                "' differ only in case; tool names must be "
                                                "unique regardless of case");
  }
  if (!tool.input_schema.is_object() || tool.input_schema.value("type", "") != "object") {
    return makeError(Code::InvalidArgument,
                     "tool '" + tool.name + "': input schema must be an object schema");
  }
  if (!tool.handler) {
    return makeError(Code::Internal, "tool '" + tool.name + "' has no handler");
  }
  auto shared = std::make_shared<const Tool>(std::move(tool));
  by_name_.emplace(shared->name, shared);
  by_folded_name_.emplace(foldToolName(shared->name), shared->name);
  tools_.push_back(std::move(shared));
  return {};
}

const Tool* ToolRegistry::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const Tool> ToolRegistry::findShared(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Json ToolRegistry::describe(const Tool& tool) {
  Json t = {
      {"name", tool.name},
      {"description", tool.description},
      {"inputSchema", tool.input_schema},
      // Every tool of this server only reads, repeats safely and touches only its own databases.
      {"annotations",
       {{"readOnlyHint", true},
        {"destructiveHint", false},
        {"idempotentHint", true},
        {"openWorldHint", false}}},
  };
  if (!tool.title.empty()) {
    t["title"] = tool.title;
    t["annotations"]["title"] = tool.title;
  }
  if (tool.output_schema.is_object()) t["outputSchema"] = tool.output_schema;
  return t;
}

Status ToolRegistry::addResource(Resource resource) {
  const std::string_view uri = resource.uri;
  const bool printable = std::all_of(uri.begin(), uri.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (uri.substr(0, kResourceScheme.size()) != kResourceScheme ||
      uri.size() == kResourceScheme.size() || uri.size() > 1024 || !printable) {
    return makeError(Code::InvalidArgument,
                     "invalid resource URI '" + resource.uri +
                         "': use mcpdb://... with at most 1024 printable ASCII characters");
  }
  if (by_uri_.count(resource.uri) != 0) {
    return makeError(Code::InvalidArgument, "duplicate resource URI '" + resource.uri + "'");
  }
  if (resource.tools.empty()) {
    return makeError(Code::Internal, "resource '" + resource.uri + "' describes no tool");
  }
  if (!resource.read) {
    return makeError(Code::Internal, "resource '" + resource.uri + "' has no reader");
  }
  auto shared = std::make_shared<const Resource>(std::move(resource));
  by_uri_.emplace(shared->uri, shared);
  resources_.push_back(std::move(shared));
  return {};
}

Status ToolRegistry::addTemplate(ResourceTemplate tmpl) {
  for (const auto& t : templates_) {
    if (t.uri_template == tmpl.uri_template) {
      return makeError(Code::InvalidArgument,
                       "duplicate resource template '" + tmpl.uri_template + "'");
    }
  }
  templates_.push_back(std::move(tmpl));
  return {};
}

const Resource* ToolRegistry::findResource(std::string_view uri) const {
  auto it = by_uri_.find(uri);
  return it == by_uri_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const Resource> ToolRegistry::findSharedResource(std::string_view uri) const {
  auto it = by_uri_.find(uri);
  return it == by_uri_.end() ? nullptr : it->second;
}

Json ToolRegistry::describe(const Resource& resource) {
  Json r = {{"uri", resource.uri}, {"name", resource.name}, {"mimeType", resource.mime_type}};
  if (!resource.title.empty()) r["title"] = resource.title;
  if (!resource.description.empty()) r["description"] = resource.description;
  return r;
}

Json ToolRegistry::describe(const ResourceTemplate& tmpl) {
  Json t = {{"uriTemplate", tmpl.uri_template}, {"name", tmpl.name}, {"mimeType", tmpl.mime_type}};
  if (!tmpl.title.empty()) t["title"] = tmpl.title;
  if (!tmpl.description.empty()) t["description"] = tmpl.description;
  return t;
}

}  // namespace mcpdb::protocol
