#include "engines/mysql/resources.hpp"

#include "common/uri.hpp"
#include "engines/mysql/runtime.hpp"

namespace mcpdb::mysql {
namespace {

constexpr const char* kEngine = "mysql";

Status addResource(protocol::ToolRegistry& registry, const std::shared_ptr<Runtime>& rt,
                   const QueryTool& t) {
  auto tool = std::make_shared<const QueryTool>(t);
  const std::string source_name = rt->source().name;
  protocol::Resource r;
  r.uri = toolResourceUri(t.name);
  r.name = t.name;
  r.title = "Schema of " + (t.title.empty() ? t.name : t.title);
  r.description = "Parameters and result columns of the MySQL tool " + t.name +
                  ", with their types, as the server describes the prepared statement (which is "
                  "not run).";
  r.engine = kEngine;
  r.tools = {t.name};
  r.read = [rt, tool, source_name](protocol::CallContext& ctx) -> Result<Json> {
    try {
      if (ctx.stop.stop_requested()) return makeError(Code::Cancelled, "the request was cancelled");
      auto shape = rt->describeTool(*tool, ctx);
      if (!shape) return shape.error();
      return describeTool(*tool, source_name, *shape);
    } catch (const std::exception&) {
      return makeError(Code::Internal, "unexpected error while describing a statement");
    }
  };
  return registry.addResource(std::move(r));
}

}  // namespace

std::string toolResourceUri(std::string_view tool) {
  return "mcpdb://mysql/tools/" + percentEncode(tool);
}

Json describeParameters(const QueryTool& tool) {
  Json out = Json::array();
  for (std::size_t i = 0; i < tool.parameters.size(); ++i) {
    const sql::ParamSpec& p = tool.parameters[i];
    // The schema tools/list shows, its keywords kept; `type` becomes `json_type`.
    Json entry = sql::paramSchema(p);
    entry["json_type"] = entry.contains("type") ? entry["type"] : Json("any");
    entry.erase("type");
    entry["name"] = p.name;
    entry["position"] = i + 1;
    entry["required"] = p.required;
    out.push_back(std::move(entry));
  }
  return out;
}

Result<Json> describeTool(const QueryTool& tool, const std::string& source,
                          const StatementShape& shape) {
  if (shape.param_count != tool.parameters.size()) {
    return makeError(Code::Internal, "the statement's parameters do not match the tool's");
  }
  Json columns = Json::array();
  for (std::size_t i = 0; i < shape.columns.size(); ++i) {
    Json c = {{"name", shape.columns[i].name}, {"type", shape.columns[i].type}};
    if (i < shape.nullable.size()) c["nullable"] = static_cast<bool>(shape.nullable[i]);
    columns.push_back(std::move(c));
  }
  return Json{{"engine", kEngine},
              {"tool", tool.name},
              {"source", source},
              {"parameters", describeParameters(tool)},
              {"columns", std::move(columns)},
              {"result_key", "rows"},
              {"limits",
               {{"max_rows", tool.limits.max_rows},
                {"max_bytes", tool.limits.max_bytes},
                {"timeout_ms", tool.limits.timeout.count()}}}};
}

Status registerResources(protocol::ToolRegistry& registry, const Settings& settings,
                         const RuntimeOf& runtimeOf) {
  for (const QueryTool& t : settings.tools) {
    auto rt = runtimeOf(t);
    if (!rt) return makeError(Code::Internal, "tool " + t.name + ": no source");
    if (auto st = addResource(registry, rt, t); !st) return st;
  }
  if (settings.tools.empty()) return {};
  return registry.addTemplate({
      .uri_template = "mcpdb://mysql/tools/{name}",
      .name = "mysql_tool_schema",
      .title = "Schema of a MySQL tool",
      .description =
          "Parameters (name, position, JSON type, constraints) and result columns (name, type, "
          "nullable) of one MySQL/MariaDB tool; {name} is the tool name.",
      .engine = std::string(kEngine),
  });
}

}  // namespace mcpdb::mysql
