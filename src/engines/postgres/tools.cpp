#include "engines/postgres/tools.hpp"

#include "engines/kit/module.hpp"
#include "engines/postgres/schema_gen.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::postgres {
namespace {

Status checkSchemas(const protocol::Tool& t) {
  if (auto st = protocol::validateSchemaSubset(t.input_schema, t.name + ".inputSchema"); !st)
    return st;
  return protocol::validateSchemaSubset(t.output_schema, t.name + ".outputSchema");
}

}  // namespace

Result<protocol::Tool> queryTool(const QueryTool& t, const std::string& source,
                                 std::shared_ptr<Runtime> rt) {
  auto tool = std::make_shared<const QueryTool>(t);
  protocol::Tool out;
  out.name = t.name;
  out.title = t.title;
  out.description = t.description + engines::kit::describeLimits(t.limits);
  out.engine = "postgres";
  out.source = source;  // its bulkhead (protocol/bulkhead.hpp)
  out.input_schema = inputSchema(t);
  out.output_schema = queryOutputSchema();
  out.limits = t.limits;
  out.fence = t.fence;
  out.handler = [rt = std::move(rt), tool, source](const Json& args, protocol::CallContext& ctx) {
    ctx.audit.source = source;
    return rt->callQuery(*tool, args, ctx);
  };
  // Honours ctx.waits (Runtime::callQuery): its sleeps in poll() watch their descriptors, and
  // every other wait on its path (a pooled connection, the proof, the guard's parser) hands on
  // first.
  out.honours_waits = true;
  if (auto st = checkSchemas(out); !st) return st.error();
  return out;
}

Result<protocol::Tool> searchTool(const SemanticSearch& s, const std::string& source,
                                  std::shared_ptr<Runtime> rt, EmbedderFn embedder) {
  protocol::Tool out;
  out.name = s.tool;
  out.title = s.title;
  out.description = s.description + " k is 1.." + std::to_string(s.k_max) + " (default " +
                    std::to_string(s.k_default) + ")." + engines::kit::describeLimits(s.limits);
  out.engine = "postgres";
  out.source = source;  // its bulkhead (protocol/bulkhead.hpp)
  out.input_schema = searchInputSchema(s);
  out.output_schema = searchOutputSchema(s);
  out.limits = s.limits;
  out.handler = [rt = std::move(rt), embedder = std::move(embedder), source](
                    const Json& args, protocol::CallContext& ctx) {
    ctx.audit.source = source;
    return rt->callSearch(args, ctx, embedder);
  };
  if (auto st = checkSchemas(out); !st) return st.error();
  return out;
}

}  // namespace mcpdb::postgres
