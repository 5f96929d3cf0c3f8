#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/result.hpp"
#include "protocol/resource.hpp"
#include "protocol/tool.hpp"

namespace mcpdb::protocol {

// True when `name` follows the MCP tool-name rules: 1-128 characters of A-Z a-z 0-9 _ - .
bool isValidToolName(std::string_view name);

// `name` in ASCII lower case: tool names are unique regardless of case, since clients and models
// may not tell `Find_User` from `find_user` apart (some match names case-insensitively).
std::string foldToolName(std::string_view name);

// The fixed tool surface. Filled once at startup (one registration call per engine), then read
// concurrently without locks.
class ToolRegistry {
 public:
  // Adds a tool; refuses an invalid name, one already taken (in any case) and a schema that is not
  // an object schema.
  Status add(Tool tool);

  const Tool* find(std::string_view name) const;
  // The registered tool, shared: a call holds it so it outlives the call (null when unknown).
  std::shared_ptr<const Tool> findShared(std::string_view name) const;
  const std::vector<std::shared_ptr<const Tool>>& tools() const { return tools_; }
  std::size_t size() const { return tools_.size(); }

  // The MCP `Tool` object for tools/list.
  static Json describe(const Tool& tool);

  // Adds a resource; refuses a URI outside the mcpdb:// scheme or already taken, one describing
  // no tool, and one without a reader.
  Status addResource(Resource resource);
  // Adds a resource template; refuses one whose URI template is already listed.
  Status addTemplate(ResourceTemplate tmpl);
  const Resource* findResource(std::string_view uri) const;
  std::shared_ptr<const Resource> findSharedResource(std::string_view uri) const;
  const std::vector<std::shared_ptr<const Resource>>& resources() const { return resources_; }
  const std::vector<ResourceTemplate>& templates() const { return templates_; }

  // The MCP `Resource` and `ResourceTemplate` objects for resources/list and
  // resources/templates/list.
  static Json describe(const Resource& resource);
  static Json describe(const ResourceTemplate& tmpl);

 private:
  std::vector<std::shared_ptr<const Tool>> tools_;
  std::map<std::string, std::shared_ptr<const Tool>, std::less<>> by_name_;
  std::map<std::string, std::string, std::less<>> by_folded_name_;  // folded -> registered name
  std::vector<std::shared_ptr<const Resource>> resources_;
  std::map<std::string, std::shared_ptr<const Resource>, std::less<>> by_uri_;
  std::vector<ResourceTemplate> templates_;
};

}  // namespace mcpdb::protocol
