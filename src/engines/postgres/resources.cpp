#include "engines/postgres/resources.hpp"

#include <mutex>
#include <optional>

#include "common/uri.hpp"
#include "engines/postgres/schema_gen.hpp"

namespace mcpdb::postgres {
namespace {

constexpr const char* kEngine = "postgres";

// One resource's last description. A description is a function of the configured statement and
// the catalog it reads; the catalog is taken to be unchanged while the read-only proof that was
// current when it was made is current (the proof is made again every postgres.proof.interval_s,
// and after the pool opens a new connection: a restart or failover). A new proof invalidates it,
// so a changed table shows within one proof interval. Failures are never kept.
class DescriptionCache {
 public:
  std::optional<Json> get(const std::shared_ptr<const proof::Report>& proof) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto held = proof_.lock();
    if (held != nullptr && held == proof) return value_;
    return std::nullopt;
  }
  void put(const std::shared_ptr<const proof::Report>& proof, Json value) {
    std::lock_guard<std::mutex> lock(mu_);
    proof_ = proof;
    value_ = std::move(value);
  }

 private:
  std::mutex mu_;
  // Weak: an old proof is not kept alive for the cache's sake (and, once freed, never compares
  // equal to a new one made at the same address).
  std::weak_ptr<const proof::Report> proof_;
  Json value_;
};

// What one resource describes: the statement and how a call binds and returns it.
struct Described {
  std::string tool;
  std::string statement;
  std::vector<std::string> also_proved;  // statements the call also needs proved (model check)
  std::vector<Oid> param_types;          // as the call binds them
  Json parameters;                       // [{name, position, json_type, ...}] without pg_type
  std::string rows_key;                  // "rows" or "results"
  Limits limits;
  Json extra = Json::object();  // engine-specific additions (semantic search settings)
};

// A parameter from its JSON Schema (the one tools/list shows): its keywords are kept, `type`
// becomes `json_type`.
Json parameterEntry(const std::string& name, std::size_t position, bool required, Json schema) {
  Json p = std::move(schema);
  p["json_type"] = p.contains("type") ? p["type"] : Json("any");
  p.erase("type");
  p["name"] = name;
  p["position"] = position;
  p["required"] = required;
  return p;
}

Described describeQueryTool(const QueryTool& t) {
  Described d{t.name, t.statement, {}, {}, Json::array(), "rows", t.limits};
  for (std::size_t i = 0; i < t.parameters.size(); ++i) {
    const ParamSpec& p = t.parameters[i];
    d.param_types.push_back(p.is_array ? arrayOid(p.scalar.type) : scalarOid(p.scalar.type));
    d.parameters.push_back(parameterEntry(p.name, i + 1, p.required, paramSchema(p)));
  }
  return d;
}

Described describeSearchTool(const SemanticSearch& s) {
  Described d{s.tool, s.statement, {}, {}, Json::array(), "results", s.limits};
  if (!s.model_statement.empty()) d.also_proved.push_back(s.model_statement);
  const Json input = searchInputSchema(s);
  // $1 is the query's embedding ($1::vector in the statement), $2 is k, then the filters.
  d.param_types = {0, oid::kInt8};
  Json query = parameterEntry("query", 1, true, input["properties"]["query"]);
  query["embedded"] = true;  // the text is embedded; the statement receives the vector
  d.parameters.push_back(std::move(query));
  d.parameters.push_back(parameterEntry("k", 2, false, input["properties"]["k"]));
  for (std::size_t i = 0; i < s.filters.size(); ++i) {
    const SearchFilter& f = s.filters[i];
    d.param_types.push_back(scalarOid(f.scalar.type));
    Json entry = parameterEntry(f.name, i + 3, false, input["properties"][f.name]);
    entry["column"] = f.column;
    entry["match"] = f.op == SearchFilter::Op::Equals ? "equals" : "contains";
    d.parameters.push_back(std::move(entry));
  }
  d.extra["semantic_search"] = {{"distance", s.distance == Distance::Cosine ? "cosine"
                                             : s.distance == Distance::L2   ? "l2"
                                                                            : "inner_product"},
                                {"k_default", s.k_default},
                                {"k_max", s.k_max}};
  return d;
}

// The description JSON of `d` from the statement's shape.
Result<Json> build(const Described& d, const StatementShape& shape, Runtime& rt,
                   const std::stop_token& stop, Clock::time_point deadline) {
  if (shape.parameters.size() != d.param_types.size()) {
    return makeError(Code::Internal, "the statement's parameters do not match the tool's");
  }
  const TypeInfo types = rt.pool().types();
  std::vector<Oid> unknown;
  auto note = [&](Oid o) {
    if (typeName(o, types).rfind("oid:", 0) == 0) unknown.push_back(o);
  };
  for (Oid o : shape.parameters) note(o);
  for (const auto& c : shape.columns) note(c.second);
  std::map<Oid, std::string> names;
  if (!unknown.empty()) {
    auto looked_up = rt.typeNames(unknown, stop, deadline);
    if (!looked_up) return looked_up.error();
    names = std::move(*looked_up);
  }
  auto pgName = [&](Oid o) {
    const auto it = names.find(o);
    return it != names.end() ? it->second : typeName(o, types);
  };
  Json parameters = d.parameters;
  for (std::size_t i = 0; i < parameters.size(); ++i)
    parameters[i]["pg_type"] = pgName(shape.parameters[i]);
  Json columns = Json::array();
  for (const auto& [name, type] : shape.columns) {
    columns.push_back(
        {{"name", name}, {"pg_type", pgName(type)}, {"json_type", jsonTypeOf(type, types)}});
  }
  Json out = {{"engine", kEngine},
              {"tool", d.tool},
              {"parameters", std::move(parameters)},
              {"columns", std::move(columns)},
              {"result_key", d.rows_key},
              {"limits",
               {{"max_rows", d.limits.max_rows},
                {"max_bytes", d.limits.max_bytes},
                {"timeout_ms", d.limits.timeout.count()}}}};
  for (const auto& [key, value] : d.extra.items()) out[key] = value;
  return out;
}

Result<Json> read(const Described& d, Runtime& rt, DescriptionCache& cache,
                  protocol::CallContext& ctx) {
  if (ctx.stop.stop_requested()) return makeError(Code::Cancelled, "the request was cancelled");
  const Clock::time_point deadline = ctx.deadlineFor(d.limits);
  // The statement (and what its call also needs) must be proved read-only now, exactly as for a
  // call: a refused statement is not described, cached or not.
  for (const std::string& sql : d.also_proved) {
    if (auto proved = rt.requireProof(sql); !proved) return proved.error();
  }
  if (auto proved = rt.requireProof(d.statement); !proved) return proved.error();
  auto proof = rt.latestProof();
  if (!proof) return proof.error();
  if (auto cached = cache.get(*proof)) return std::move(*cached);
  auto shape = rt.describeStatement(d.statement, d.param_types, ctx.stop, deadline);
  if (!shape) return shape.error();
  auto out = build(d, *shape, rt, ctx.stop, deadline);
  if (!out) return out.error();
  cache.put(*proof, *out);
  return out;
}

Status addResource(protocol::ToolRegistry& registry, const std::shared_ptr<Runtime>& rt,
                   Described d, const std::string& title) {
  auto described = std::make_shared<const Described>(std::move(d));
  auto cache = std::make_shared<DescriptionCache>();
  protocol::Resource r;
  r.uri = toolResourceUri(described->tool);
  r.name = described->tool;
  r.title = "Schema of " + (title.empty() ? described->tool : title);
  r.description = "Parameters and result columns of the PostgreSQL tool " + described->tool +
                  ", with their PostgreSQL and JSON types, as the database describes the "
                  "statement (which is not run).";
  r.engine = kEngine;
  r.tools = {described->tool};
  r.read = [rt, described, cache](protocol::CallContext& ctx) -> Result<Json> {
    try {
      return read(*described, *rt, *cache, ctx);
    } catch (const std::exception&) {
      return makeError(Code::Internal, "unexpected error while describing a statement");
    }
  };
  return registry.addResource(std::move(r));
}

}  // namespace

std::string toolResourceUri(std::string_view tool) {
  return "mcpdb://postgres/tools/" + percentEncode(tool);
}

Status registerResources(protocol::ToolRegistry& registry, const std::shared_ptr<Runtime>& rt) {
  return registerResources(registry, std::vector<std::shared_ptr<Runtime>>{rt});
}

Status registerResources(protocol::ToolRegistry& registry,
                         const std::vector<std::shared_ptr<Runtime>>& runtimes) {
  bool any = false;
  for (const auto& rt : runtimes) {
    const Settings& section = rt->section();
    for (const QueryTool& t : section.tools) {
      if (auto st = addResource(registry, rt, describeQueryTool(t), t.title); !st) return st;
    }
    if (section.search.enabled) {
      if (auto st =
              addResource(registry, rt, describeSearchTool(section.search), section.search.title);
          !st)
        return st;
    }
    any = any || !section.tools.empty() || section.search.enabled;
  }
  if (!any) return {};
  return registry.addTemplate({
      .uri_template = "mcpdb://postgres/tools/{name}",
      .name = "postgres_tool_schema",
      .title = "Schema of a PostgreSQL tool",
      .description =
          "Parameters (name, JSON and PostgreSQL type, constraints) and result columns (name, "
          "PostgreSQL and JSON type) of one PostgreSQL tool; {name} is the tool name.",
      .engine = std::string(kEngine),
  });
}

}  // namespace mcpdb::postgres
