#include "engines/postgres/runtime.hpp"

#include <cstdio>

#include "embed/embedder.hpp"
#include "engines/postgres/guard/guard.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::postgres {
namespace {

// How long a verified embedding-model row is trusted before it is read again.
constexpr std::chrono::seconds kModelCheckTtl{60};
// How many allowed statements the guardrail verdict cache keeps.
constexpr std::size_t kMaxRememberedStatements = 1024;

Json envelope(ExecResult& r, const std::string& rows_key) {
  Json out{{rows_key, std::move(r.rows)}, {"row_count", r.row_count}, {"truncated", r.truncated}};
  if (r.truncated) out["note"] = r.note;
  return out;
}

}  // namespace

Runtime::Runtime(Section section, Env env, TokenSource token)
    : section_(std::move(section)), env_(std::move(env)) {
  if (!token && iamAuthEnabled(section_.pool, env_)) token = rdsTokenSource(env_);
  auto params = [pool = section_.pool, env = env_, token]() {
    return buildConnParams(pool, env, token);
  };
  pool_ = std::make_unique<Pool>(section_.pool, params);
}

Limits Runtime::effectiveLimits(const Limits& tool, const Limits& call) {
  Limits l = tool;
  l.max_rows = std::min(tool.max_rows, call.max_rows);
  l.max_bytes = std::min(tool.max_bytes, call.max_bytes);
  l.timeout = std::min(tool.timeout, call.timeout);
  return l;
}

Clock::time_point Runtime::effectiveDeadline(const protocol::CallContext& ctx,
                                             const Limits& limits) {
  const Clock::time_point by_timeout = Clock::now() + limits.timeout;
  if (ctx.deadline.time_since_epoch().count() == 0) return by_timeout;
  return std::min(ctx.deadline, by_timeout);
}

Result<std::size_t> Runtime::checkStatement(const std::string& sql) {
  {
    std::shared_lock<std::shared_mutex> lock(allowed_mu_);
    if (auto it = allowed_.find(sql); it != allowed_.end()) return it->second;
  }
  // The verdict is a pure function of the text: the same text gets the same verdict, so a lookup
  // by the whole text is the check (parsing costs about a hundred microseconds; the proof far
  // more).
  const guard::Verdict verdict = guard::checkTemplate(sql);
  if (!verdict.allowed) return guard::toStatus(verdict).error();
  std::unique_lock<std::shared_mutex> lock(allowed_mu_);
  // Bounded: the configured statements are a few dozen; anything beyond is checked every time.
  if (allowed_.size() < kMaxRememberedStatements)
    allowed_.emplace(sql, verdict.placeholders.size());
  return verdict.placeholders.size();
}

Result<ExecResult> Runtime::run(const std::string& sql, const BoundParams& params,
                                const Limits& limits, const std::stop_token& stop,
                                Clock::time_point deadline) {
  // Defence in depth: the template was checked at startup; it is checked again before every run.
  auto placeholders = checkStatement(sql);
  if (!placeholders) return placeholders.error();
  if (*placeholders != params.values.size()) {
    return makeError(Code::Internal,
                     "the statement's placeholders do not match its bound parameters");
  }
  for (int attempt = 0;; ++attempt) {
    auto lease = pool_->acquire(deadline, stop);
    if (!lease) return lease.error();
    ExecOutcome outcome;
    auto r = executeReadOnly(lease->conn(), lease->cancel(), sql, params, limits, stop, deadline,
                             pool_->types(), outcome,
                             section_.pool.prepared_statements ? lease->prepared() : nullptr);
    if (outcome.broken) lease->markBroken();
    if (!r && outcome.stale && !lease->fresh() && attempt == 0) {
      // The pooled connection was dead before the statement was sent, or its prepared statement
      // went stale; so did its idle siblings.
      pool_->dropIdle();
      continue;
    }
    return r;
  }
}

Result<ExecResult> Runtime::explain(const std::string& sql, const BoundParams& params,
                                    ExecOutcome& outcome) {
  auto placeholders = checkStatement(sql);
  if (!placeholders) return placeholders.error();
  if (*placeholders != params.values.size()) {
    return makeError(Code::Internal,
                     "the statement's placeholders do not match its bound parameters");
  }
  Limits limits;
  limits.max_rows = 1000;
  limits.max_bytes = 1 << 20;
  limits.timeout = std::chrono::milliseconds(10000);
  const Clock::time_point deadline = Clock::now() + limits.timeout;
  std::stop_source never;
  auto lease = pool_->acquire(deadline, never.get_token());
  if (!lease) return lease.error();
  auto r = executeReadOnly(lease->conn(), lease->cancel(), "EXPLAIN " + sql, params, limits,
                           never.get_token(), deadline, pool_->types(), outcome, nullptr);
  if (outcome.broken) lease->markBroken();
  return r;
}

Result<protocol::ToolOutput> Runtime::callQuery(const QueryTool& tool, const Json& arguments,
                                                protocol::CallContext& ctx) {
  auto params = bindArguments(tool.parameters, arguments);
  if (!params) return params.error();
  const Limits limits = effectiveLimits(tool.limits, ctx.limits);
  auto r = run(tool.statement, *params, limits, ctx.stop, effectiveDeadline(ctx, limits));
  if (!r) return r.error();
  protocol::ToolOutput out;
  out.rows = r->row_count;
  Json columns = std::move(r->columns);
  out.structured = envelope(*r, "rows");
  out.structured["columns"] = std::move(columns);
  return out;
}

Status Runtime::checkModel(const embed::Embedder& embedder, const Limits& limits,
                           const std::stop_token& stop, Clock::time_point deadline) {
  const SemanticSearch& s = section_.search;
  if (s.model_statement.empty()) return {};
  const std::string want = embedder.modelId() + "/" + std::to_string(embedder.dimension());
  {
    std::lock_guard<std::mutex> lock(model_mu_);
    if (model_checked_ == want && Clock::now() - model_checked_at_ < kModelCheckTtl) return {};
  }
  Limits l = limits;
  l.max_rows = 2;
  auto r = run(s.model_statement, BoundParams{}, l, stop, deadline);
  if (!r) return r.error();
  if (r->rows.empty()) {
    return makeError(
        Code::FailedPrecondition,
        "the embedding model table is empty: load the vectors first (mcp-dbserver-load)");
  }
  if (r->rows.size() > 1) {
    return makeError(Code::FailedPrecondition,
                     "the embedding model table records more than one model");
  }
  const Json& row = r->rows[0];
  const std::string stored_model =
      row.value("model_id", Json("")).is_string() ? row["model_id"].get<std::string>() : "";
  const std::int64_t stored_dim = row.value("dimension", Json(0)).is_number_integer()
                                      ? row["dimension"].get<std::int64_t>()
                                      : 0;
  if (stored_model != embedder.modelId() ||
      stored_dim != static_cast<std::int64_t>(embedder.dimension())) {
    return makeError(Code::FailedPrecondition,
                     "the stored vectors were made by model '" + stored_model + "' (dimension " +
                         std::to_string(stored_dim) + ") but this server embeds queries with '" +
                         embedder.modelId() + "' (dimension " +
                         std::to_string(embedder.dimension()) +
                         "): reload the data or configure the same model");
  }
  std::lock_guard<std::mutex> lock(model_mu_);
  model_checked_ = want;
  model_checked_at_ = Clock::now();
  return {};
}

Result<protocol::ToolOutput> Runtime::callSearch(const Json& arguments, protocol::CallContext& ctx,
                                                 const EmbedderFn& embedder_fn) {
  const SemanticSearch& s = section_.search;
  const Json empty = Json::object();
  const Json& args = arguments.is_null() ? empty : arguments;
  if (!args.is_object()) return makeError(Code::InvalidArgument, "arguments: must be an object");
  for (const auto& [key, v] : args.items()) {
    (void)v;
    bool known = key == "query" || key == "k";
    for (const auto& f : s.filters) known = known || f.name == key;
    if (!known)
      return makeError(Code::InvalidArgument, "arguments: unknown argument (see the input schema)");
  }
  // The query text: a bounded string (checked here too; the registry validated the schema first).
  ScalarSpec query_spec;
  query_spec.min_length = 1;
  query_spec.max_length = s.max_query_length;
  if (!args.contains("query"))
    return makeError(Code::InvalidArgument, "arguments.query: is required");
  auto query = encodeScalar(query_spec, args["query"], "arguments.query");
  if (!query) return query.error();
  ScalarSpec k_spec;
  k_spec.type = ScalarType::Integer;
  k_spec.min_int = 1;
  k_spec.max_int = s.k_max;
  std::string k = std::to_string(s.k_default);
  if (args.contains("k") && !args["k"].is_null()) {
    auto kv = encodeScalar(k_spec, args["k"], "arguments.k");
    if (!kv) return kv.error();
    k = *kv;
  }
  BoundParams params;
  params.add(std::string(), 0);  // $1: the query vector, filled below ($1::vector in the SQL)
  params.add(k, oid::kInt8);
  for (const auto& f : s.filters) {
    if (!args.contains(f.name) || args[f.name].is_null()) {
      params.add(std::nullopt, scalarOid(f.scalar.type));
      continue;
    }
    auto v = encodeScalar(f.scalar, args[f.name], "arguments." + f.name);
    if (!v) return v.error();
    params.add(std::move(*v), scalarOid(f.scalar.type));
  }

  if (!embedder_fn)
    return makeError(Code::FailedPrecondition, "semantic search is unavailable: no embedder");
  auto embedder = embedder_fn();
  if (!embedder) {
    return makeError(Code::FailedPrecondition,
                     "semantic search is unavailable: " + embedder.error().message);
  }
  const Limits limits = effectiveLimits(s.limits, ctx.limits);
  const Clock::time_point deadline = effectiveDeadline(ctx, limits);
  if (auto st = checkModel(**embedder, limits, ctx.stop, deadline); !st) return st.error();
  auto vec = (*embedder)->embedOne(*query);
  if (!vec) return vec.error();
  if (vec->size() != (*embedder)->dimension())
    return makeError(Code::Internal, "the embedder returned a vector of the wrong size");
  std::string text = "[";
  char buf[32];
  for (std::size_t i = 0; i < vec->size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>((*vec)[i]));
    if (i > 0) text += ',';
    text += buf;
  }
  text += ']';
  params.values[0] = std::move(text);

  auto r = run(s.statement, params, limits, ctx.stop, deadline);
  if (!r) return r.error();
  protocol::ToolOutput out;
  out.rows = r->row_count;
  out.structured = envelope(*r, "results");
  out.structured["model"] = (*embedder)->modelId();
  out.structured["distance"] = s.distance == Distance::Cosine ? "cosine"
                               : s.distance == Distance::L2   ? "l2"
                                                              : "inner_product";
  return out;
}

}  // namespace mcpdb::postgres
