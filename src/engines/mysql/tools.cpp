#include "engines/mysql/tools.hpp"

#include "engines/kit/module.hpp"
#include "engines/sql/param_spec.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::mysql {
namespace {

Json queryOutputSchema() {
  return {{"type", "object"},
          {"properties",
           {{"columns",
             {{"type", "array"},
              {"description", "Result columns in order, with their types."},
              {"items",
               {{"type", "object"},
                {"properties", {{"name", {{"type", "string"}}}, {"type", {{"type", "string"}}}}},
                {"required", {"name", "type"}}}}}},
            {"rows",
             {{"type", "array"},
              {"description",
               "One object per row, keyed by column name. DECIMAL values are strings (lossless); "
               "dates and times are ISO 8601; binary values are base64; JSON columns are text."},
              {"items", {{"type", "object"}}}}},
            {"row_count", {{"type", "integer"}, {"description", "Number of rows returned."}}},
            {"truncated",
             {{"type", "boolean"},
              {"description", "True when a row or byte cap cut the result; see note."}}},
            {"note",
             {{"type", "string"}, {"description", "Present when truncated: which cap applied."}}},
            // As PostgreSQL's: the values the byte cap left in the database (source_cap.hpp).
            {"cut",
             {{"type", "array"},
              {"description",
               "Present when values longer than the byte cap were left in the database: each is "
               "null in its row (rows[row][column]); truncated is true."},
              {"items",
               {{"type", "object"},
                {"properties", {{"row", {{"type", "integer"}}}, {"column", {{"type", "string"}}}}},
                {"required", {"row", "column"}}}}}}}},
          {"required", {"columns", "rows", "row_count", "truncated"}}};
}

}  // namespace

Status registerTools(protocol::ToolRegistry& registry, const Settings& settings,
                     const RuntimeOf& runtimeOf) {
  for (const auto& t : settings.tools) {
    // The tool's source's runtime, resolved here, once: a call only uses it.
    auto rt = runtimeOf(t);
    if (!rt) return makeError(Code::Internal, "tool " + t.name + ": no source");
    auto tool = std::make_shared<const QueryTool>(t);
    protocol::Tool out;
    out.name = t.name;
    out.title = t.title;
    out.description = t.description + engines::kit::describeLimits(t.limits);
    out.engine = "mysql";
    out.source = rt->source().name;  // its bulkhead
    out.input_schema = sql::paramsInputSchema(t.parameters);
    out.output_schema = queryOutputSchema();
    out.limits = t.limits;
    out.fence = t.fence;
    out.handler = [rt, tool](const Json& args, protocol::CallContext& ctx) {
      return rt->callQuery(*tool, args, ctx);
    };
    if (auto st = protocol::validateSchemaSubset(out.input_schema, t.name + ".inputSchema"); !st)
      return st;
    if (auto st = registry.add(std::move(out)); !st) return st;
  }
  return {};
}

}  // namespace mcpdb::mysql
