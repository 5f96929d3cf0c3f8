// One file, over 600 lines: the five MongoDB tools share one request shape (target lookup, typed
// _id, field projection, the row/byte budget, the signed cursor) and one answer shape; each tool
// is a function here, the commands they send are commands.cpp, the BSON conversion bson_json.cpp.
#include "engines/mongodb/tools.hpp"

#include <algorithm>
#include <cmath>

#include "common/json_integer.hpp"
#include "common/row_budget.hpp"
#include "embed/embedder.hpp"
#include "engines/mongodb/bson_json.hpp"
#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/ids.hpp"
#include "engines/mongodb/search.hpp"

namespace mcpdb::mongodb {

namespace {

// A document's JSON is at least its BSON length over this: the most compact case is an array of
// zero int64 values, up to 17 BSON bytes per element in a 16 MiB document (type, a seven-digit
// index key and its NUL, the value) against "0," in JSON. A document that cannot fit the byte cap
// even so is not converted (its BSON, at most 16 MiB, is all the memory it takes).
constexpr std::uint64_t kBsonPerJsonByte = 9;

bool admits(RowBudget& budget, const bson_t& doc) {
  return budget.admits(doc.len / kBsonPerJsonByte);
}

constexpr std::size_t kMaxQueryChars = 2000;
constexpr std::size_t kMaxCursorChars = 4096;

Json targetEnum(const Settings& s) {
  Json e = Json::array();
  for (const auto& t : s.targets) e.push_back(t.name);
  return e;
}

Result<ReadOptions> readOptions(const Settings& s, const protocol::CallContext& ctx) {
  if (std::chrono::steady_clock::now() >= ctx.deadline)
    return makeError(Code::TimedOut, "the call ran out of time");
  if (ctx.stop.stop_requested()) return makeError(Code::Cancelled, "the request was cancelled");
  return ReadOptions{remainingMillis(ctx.deadline), s.read_concern};
}

CallBounds boundsOf(const protocol::CallContext& ctx) {
  return CallBounds{ctx.stop, ctx.deadline, ctx.span};
}

Result<const Target*> targetOf(const Settings& s, const Json& args) {
  const std::string name = args.value("target", std::string());
  const Target* t = s.find(name);
  if (t == nullptr)
    return makeError(Code::NotFound,
                     "arguments.target: unknown target (call list_mongodb_targets)");
  return t;
}

// The target a call names and the client of its source; the audit line names the source from
// here on (before: the only source, or none when there are several).
struct TargetClient {
  const Target* target = nullptr;
  SourceClient* source = nullptr;
};

Result<TargetClient> targetClientOf(EngineState& state, const Json& args,
                                    protocol::CallContext& ctx) {
  ctx.audit.source = state.soleSource();
  auto target = targetOf(state.settings(), args);
  if (!target) return target.error();
  SourceClient* source = state.sourceOf(**target);
  if (source == nullptr) return makeError(Code::Internal, "the target has no source");
  ctx.audit.source = source->source().name;
  return TargetClient{*target, source};
}

std::string sortText(const Target& t) {
  return t.sort_descending ? "_id descending" : "_id ascending";
}

// ---- list_mongodb_targets ------------------------------------------------------------------

protocol::Tool listTargetsTool(const std::shared_ptr<EngineState>& state) {
  protocol::Tool tool;
  tool.name = kListTargetsTool;
  tool.title = "List MongoDB targets";
  tool.engine = "mongodb";
  tool.description =
      "Lists the MongoDB collections this server exposes (logical target names), with their "
      "description, id type, "
      "the fields returned, and which semantic-search tool covers them. Call this first; every "
      "other MongoDB tool "
      "takes one of these target names. Reads no data.";
  tool.input_schema = {
      {"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}};
  tool.output_schema = {{"type", "object"},
                        {"properties", {{"targets", {{"type", "array"}}}}},
                        {"required", {"targets"}}};
  tool.limits = state->settings().limits;
  tool.handler = [state](const Json&, protocol::CallContext& ctx) -> Result<protocol::ToolOutput> {
    ctx.audit.source = state->soleSource();  // reads the registry only, no source's data
    Json targets = Json::array();
    for (const auto& t : state->settings().targets) {
      Json item = {{"name", t.name},
                   {"collection", t.collection},
                   {"description", t.description},
                   {"id_type", idTypeName(t.id_type)},
                   {"fields", t.projection},
                   {"sort", sortText(t)},
                   {"count_exact_max", t.count_exact_max}};
      if (t.vector_search) {
        Json filters = Json::array();
        for (const auto& f : t.vector_search->filter_fields) {
          filters.push_back({{"field", f.path}, {"type", filterTypeName(f.type)}});
        }
        item["semantic_search"] = {{"tool", t.vector_search->tool},
                                   {"max_k", t.vector_search->max_k},
                                   {"filters", filters}};
      } else {
        item["semantic_search"] = nullptr;
      }
      targets.push_back(std::move(item));
    }
    protocol::ToolOutput out;
    out.free_text = false;  // the operator's registry, no database text
    out.rows = targets.size();
    out.structured = {{"targets", std::move(targets)}};
    return out;
  };
  return tool;
}

// ---- get_mongodb_document --------------------------------------------------------------------

protocol::Tool getDocumentTool(const std::shared_ptr<EngineState>& state) {
  protocol::Tool tool;
  tool.name = kGetDocumentTool;
  tool.title = "Get a MongoDB document by _id";
  tool.engine = "mongodb";
  tool.description =
      "Fetches one document by its _id from a registered target. `id` is converted by the target's "
      "id type "
      "(objectId: the 24 hex digits, e.g. from {\"$oid\": ...} in other results; string; int). "
      "Only the target's "
      "allowed fields are returned. Values are JSON; typed BSON values appear as {\"$oid\"}, "
      "{\"$date\"}, "
      "{\"$numberDecimal\"}, {\"$numberLong\"}, {\"$binary\"}. Returns found=false when no "
      "document has that _id.";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {{"target",
         {{"type", "string"},
          {"enum", targetEnum(state->settings())},
          {"description", "Logical target name."}}},
        {"id",
         {{"type", {"string", "integer"}},
          {"description", "The document's _id (converted by the target's id type)."}}}}},
      {"required", {"target", "id"}},
      {"additionalProperties", false}};
  tool.output_schema = {{"type", "object"},
                        {"properties",
                         {{"target", {{"type", "string"}}},
                          {"found", {{"type", "boolean"}}},
                          {"document", {{"type", {"object", "null"}}}},
                          {"truncated", {{"type", "boolean"}}}}},
                        {"required", {"target", "found", "document", "truncated"}}};
  tool.limits = state->settings().limits;
  tool.handler = [state](const Json& args,
                         protocol::CallContext& ctx) -> Result<protocol::ToolOutput> {
    auto target = targetClientOf(*state, args, ctx);
    if (!target) return target.error();
    const Target& t = *target->target;
    auto id = convertId(args.contains("id") ? args["id"] : Json(), t.id_type);
    if (!id) return id.error();
    auto ro = readOptions(state->settings(), ctx);
    if (!ro) return ro.error();
    auto client = target->source->client();
    if (!client) return client.error();
    BsonPtr filter = getFilter(*id);
    BsonPtr opts = getOptions(t, *ro);
    Limits one = ctx.limits;
    one.max_rows = 1;
    RowBudget budget(one);
    bool found = false;
    auto st = (*client)->find(t.collection, *filter, *opts, boundsOf(ctx), [&](const bson_t& doc) {
      found = true;
      if (admits(budget, doc)) budget.add(bsonToJson(doc));
      return false;
    });
    if (!st) return st.error();
    Json rows = budget.takeRows();
    ctx.audit.truncated = found && rows.empty();
    Json result = {{"target", t.name},
                   {"found", found},
                   {"document", rows.empty() ? Json(nullptr) : rows[0]},
                   {"truncated", found && rows.empty()}};
    if (found && rows.empty()) {
      result["note"] = "The document exists but is larger than the " +
                       std::to_string(ctx.limits.max_bytes) +
                       "-byte response cap (max_bytes), so it was not returned.";
    }
    protocol::ToolOutput out;
    out.fence = t.fence;
    out.rows = rows.size();
    out.structured = std::move(result);
    return out;
  };
  return tool;
}

// ---- list_mongodb_documents --------------------------------------------------------------------

std::string listContext(const Target& t) {
  return "mongodb:list_mongodb_documents:" + t.name;
}

// The cursor payload: the last returned _id as a one-field BSON document {"v": <_id>}, so any _id
// type round-trips exactly. It is signed; it is never built from agent input.
std::string encodeAfter(const CursorCodec& codec, const Target& t, std::string_view client,
                        const bson_value_t& last_id) {
  BsonPtr doc = newDoc();
  bson_append_value(doc.get(), "v", 1, &last_id);
  const std::string bytes(reinterpret_cast<const char*>(bson_get_data(doc.get())), doc->len);
  return codec.encode(clientCursorContext(listContext(t), client),
                      Json{{"after", base64UrlEncode(bytes)}, {"desc", t.sort_descending}});
}

Result<BsonPtr> decodeAfter(const CursorCodec& codec, const Target& t, std::string_view client,
                            const std::string& cursor) {
  auto pos = codec.decode(clientCursorContext(listContext(t), client), cursor);
  if (!pos) return pos.error();
  const Json& p = *pos;
  if (!p.is_object() || !p.contains("after") || !p["after"].is_string() ||
      p.value("desc", false) != t.sort_descending) {
    return makeError(
        Code::InvalidArgument,
        "arguments.cursor: not a cursor for this listing (start again without a cursor)");
  }
  auto bytes = base64UrlDecode(p["after"].get<std::string>());
  if (!bytes) return makeError(Code::InvalidArgument, "arguments.cursor: malformed cursor");
  BsonPtr doc(
      bson_new_from_data(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()));
  bson_iter_t it;
  if (!doc || !bson_validate(doc.get(), BSON_VALIDATE_NONE, nullptr) ||
      !bson_iter_init_find(&it, doc.get(), "v")) {
    return makeError(Code::InvalidArgument, "arguments.cursor: malformed cursor");
  }
  return doc;
}

protocol::Tool listDocumentsTool(const std::shared_ptr<EngineState>& state) {
  const std::uint32_t max_rows = state->settings().limits.max_rows;
  protocol::Tool tool;
  tool.name = kListDocumentsTool;
  tool.title = "List MongoDB documents (paged)";
  tool.engine = "mongodb";
  tool.description =
      "Lists documents of a registered target in _id order, at most `limit` per call (bounded by "
      "the server's row "
      "and byte caps), returning only the target's allowed fields. When more documents exist the "
      "result has "
      "truncated=true and a `next_cursor`: pass it back unchanged as `cursor` to get the next page "
      "(cursors are "
      "signed, expire after an hour and only work for the same target). Use get_mongodb_document "
      "for one _id and "
      "the semantic-search tool to find documents by meaning.";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {{"target",
         {{"type", "string"},
          {"enum", targetEnum(state->settings())},
          {"description", "Logical target name."}}},
        {"limit",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", max_rows},
          {"description", "Documents per page (default " +
                              std::to_string(std::min<std::uint32_t>(20, max_rows)) + ")."}}},
        {"cursor",
         {{"type", "string"},
          {"minLength", 1},
          {"maxLength", kMaxCursorChars},
          {"description", "next_cursor from the previous page."}}}}},
      {"required", {"target"}},
      {"additionalProperties", false}};
  tool.output_schema = {{"type", "object"},
                        {"properties",
                         {{"target", {{"type", "string"}}},
                          {"documents", {{"type", "array"}}},
                          {"count", {{"type", "integer"}}},
                          {"truncated", {{"type", "boolean"}}},
                          {"next_cursor", {{"type", "string"}}}}},
                        {"required", {"target", "documents", "count", "truncated"}}};
  tool.limits = state->settings().limits;
  tool.handler = [state](const Json& args,
                         protocol::CallContext& ctx) -> Result<protocol::ToolOutput> {
    auto target = targetClientOf(*state, args, ctx);
    if (!target) return target.error();
    const Target& t = *target->target;
    const std::uint32_t cap = std::max<std::uint32_t>(1, ctx.limits.max_rows);
    std::uint32_t limit = std::min<std::uint32_t>(20, cap);
    if (args.contains("limit") && !args["limit"].is_null()) {
      const std::optional<std::int64_t> l = integerValue(args["limit"]);
      if (!l) return makeError(Code::InvalidArgument, "arguments.limit: must be an integer");
      if (*l < 1) return makeError(Code::InvalidArgument, "arguments.limit: must be at least 1");
      limit = static_cast<std::uint32_t>(std::min<std::int64_t>(*l, cap));
    }
    BsonPtr after_doc;
    bson_iter_t after_it;
    const bson_iter_t* after = nullptr;
    if (args.contains("cursor") && args["cursor"].is_string()) {
      auto decoded = decodeAfter(state->cursors(), t, ctx.principal.client_id,
                                 args["cursor"].get<std::string>());
      if (!decoded) return decoded.error();
      after_doc = std::move(*decoded);
      bson_iter_init_find(&after_it, after_doc.get(), "v");
      after = &after_it;
    }
    auto ro = readOptions(state->settings(), ctx);
    if (!ro) return ro.error();
    auto client = target->source->client();
    if (!client) return client.error();

    BsonPtr filter = listFilter(after, t.sort_descending);
    BsonPtr opts = listOptions(t, limit + 1, *ro);  // one more tells whether another page exists
    Limits page = ctx.limits;
    page.max_rows = limit;
    RowBudget budget(page);
    BsonPtr last_id;       // {"v": _id} of the last returned document
    BsonPtr oversized_id;  // a first document too large for the byte cap
    bool more = false;
    auto st = (*client)->find(t.collection, *filter, *opts, boundsOf(ctx), [&](const bson_t& doc) {
      if (admits(budget, doc) && budget.add(bsonToJson(doc))) {
        bson_iter_t it;
        if (bson_iter_init_find(&it, &doc, "_id")) {
          last_id = newDoc();
          bson_append_iter(last_id.get(), "v", 1, &it);
        }
        return true;
      }
      more = true;
      if (budget.rows() == 0) {
        bson_iter_t it;
        if (bson_iter_init_find(&it, &doc, "_id")) {
          oversized_id = newDoc();
          bson_append_iter(oversized_id.get(), "v", 1, &it);
        }
      }
      return false;
    });
    if (!st) return st.error();

    Json result = {{"target", t.name}, {"sort", sortText(t)}};
    std::string note = budget.note();
    const std::uint64_t count = budget.rows();
    result["documents"] = budget.takeRows();
    result["count"] = count;
    result["truncated"] = more;
    ctx.audit.truncated = more;
    const bson_t* cursor_from = last_id ? last_id.get() : oversized_id.get();
    if (more && cursor_from != nullptr) {
      bson_iter_t it;
      if (bson_iter_init_find(&it, cursor_from, "v")) {
        result["next_cursor"] =
            encodeAfter(state->cursors(), t, ctx.principal.client_id, *bson_iter_value(&it));
      }
      if (!last_id) {
        note = "The next document is larger than the " + std::to_string(ctx.limits.max_bytes) +
               "-byte response cap (max_bytes) and was skipped; next_cursor continues after it.";
      }
    }
    if (!note.empty()) result["note"] = note;
    protocol::ToolOutput out;
    out.fence = t.fence;
    out.rows = count;
    out.structured = std::move(result);
    return out;
  };
  return tool;
}

// ---- count_mongodb_documents --------------------------------------------------------------------

protocol::Tool countDocumentsTool(const std::shared_ptr<EngineState>& state) {
  protocol::Tool tool;
  tool.name = kCountDocumentsTool;
  tool.title = "Count MongoDB documents";
  tool.engine = "mongodb";
  tool.description =
      "Counts the documents of a registered target. method=exact (default) runs countDocuments, "
      "stopping at the "
      "target's count cap (then capped=true and the count is a lower bound); method=estimate "
      "returns the "
      "collection's metadata count (fast, may be stale), labelled exact=false.";
  tool.input_schema = {{"type", "object"},
                       {"properties",
                        {{"target",
                          {{"type", "string"},
                           {"enum", targetEnum(state->settings())},
                           {"description", "Logical target name."}}},
                         {"method",
                          {{"type", "string"},
                           {"enum", {"exact", "estimate"}},
                           {"description", "exact (default) or estimate."}}}}},
                       {"required", {"target"}},
                       {"additionalProperties", false}};
  tool.output_schema = {{"type", "object"},
                        {"properties",
                         {{"target", {{"type", "string"}}},
                          {"count", {{"type", "integer"}}},
                          {"method", {{"type", "string"}}},
                          {"exact", {{"type", "boolean"}}},
                          {"capped", {{"type", "boolean"}}}}},
                        {"required", {"target", "count", "method", "exact", "capped"}}};
  tool.limits = state->settings().limits;
  tool.handler = [state](const Json& args,
                         protocol::CallContext& ctx) -> Result<protocol::ToolOutput> {
    auto target = targetClientOf(*state, args, ctx);
    if (!target) return target.error();
    const Target& t = *target->target;
    const bool estimate = args.value("method", std::string("exact")) == "estimate";
    auto ro = readOptions(state->settings(), ctx);
    if (!ro) return ro.error();
    auto client = target->source->client();
    if (!client) return client.error();
    Json result = {{"target", t.name}};
    if (estimate) {
      BsonPtr opts = estimatedCountOptions(*ro);
      auto n = (*client)->estimatedDocumentCount(t.collection, *opts);
      if (!n) return n.error();
      result["count"] = *n;
      result["method"] = "estimatedDocumentCount";
      result["exact"] = false;
      result["capped"] = false;
      result["note"] = "Estimate from collection metadata; it may differ from the exact count.";
    } else {
      BsonPtr filter = countFilter();
      BsonPtr opts = countOptions(static_cast<std::int64_t>(t.count_exact_max) + 1, *ro);
      auto n = (*client)->countDocuments(t.collection, *filter, *opts);
      if (!n) return n.error();
      const bool capped = static_cast<std::uint64_t>(*n) > t.count_exact_max;
      ctx.audit.truncated = capped;
      result["count"] = capped ? static_cast<std::int64_t>(t.count_exact_max) : *n;
      result["method"] = "countDocuments";
      result["exact"] = !capped;
      result["capped"] = capped;
      if (capped) {
        result["note"] = "The collection has more than " + std::to_string(t.count_exact_max) +
                         " documents (the exact-count cap); count is a lower bound. Use "
                         "method=estimate for the total.";
      }
    }
    protocol::ToolOutput out;
    out.free_text = false;  // counts
    out.rows = 1;
    out.structured = std::move(result);
    return out;
  };
  return tool;
}

// ---- semantic search
// -------------------------------------------------------------------------------

Result<std::vector<FilterValue>> parseFilters(const VectorSearch& vs, const Json& args) {
  std::vector<FilterValue> out;
  if (!args.contains("filter")) return out;
  const Json& f = args["filter"];
  if (!f.is_object())
    return makeError(Code::InvalidArgument, "arguments.filter: must be an object");
  for (const auto& field : vs.filter_fields) {
    if (!f.contains(field.path)) continue;
    const Json& v = f[field.path];
    const std::string where = "arguments.filter." + field.path;
    FilterValue fv{field.path, std::string()};
    switch (field.type) {
      case FilterType::String:
        if (!v.is_string()) return makeError(Code::InvalidArgument, where + ": must be a string");
        fv.value = v.get<std::string>();
        break;
      case FilterType::Integer:
        if (auto n = integerValue(v)) {
          fv.value = *n;
        } else {
          return makeError(Code::InvalidArgument, where + ": must be an integer");
        }
        break;
      case FilterType::Number:
        if (!v.is_number() || !std::isfinite(v.get<double>()))
          return makeError(Code::InvalidArgument, where + ": must be a number");
        fv.value = v.get<double>();
        break;
      case FilterType::Boolean:
        if (!v.is_boolean())
          return makeError(Code::InvalidArgument, where + ": must be true or false");
        fv.value = v.get<bool>();
        break;
    }
    out.push_back(std::move(fv));
  }
  for (const auto& item : f.items()) {
    const std::string& key = item.key();
    const bool known = std::any_of(vs.filter_fields.begin(), vs.filter_fields.end(),
                                   [&](const FilterField& ff) { return ff.path == key; });
    if (!known)
      return makeError(Code::InvalidArgument,
                       "arguments.filter: unknown filter field (see the input schema)");
  }
  return out;
}

protocol::Tool semanticSearchTool(const std::shared_ptr<EngineState>& state, const Target& target) {
  const VectorSearch& vs = *target.vector_search;
  protocol::Tool tool;
  tool.name = vs.tool;
  tool.title = "Semantic search in MongoDB target " + target.name;
  tool.engine = "mongodb";
  std::string desc = vs.description.empty()
                         ? "Semantic search over MongoDB target '" + target.name + "'."
                         : vs.description;
  desc +=
      " Embeds `query` with the server's local embedding model and returns the `k` most similar "
      "documents as "
      "{id, title, text, metadata, score, _id}, best first; score is the cosine similarity "
      "(-1..1). `method` in the "
      "result says how it ran: atlas_vector_search (Atlas $vectorSearch, approximate) or "
      "exact_scan (exact cosine over "
      "at most " +
      std::to_string(vs.exact_scan_max_docs) +
      " documents; cap_hit=true means documents beyond the cap "
      "were not considered).";
  if (!vs.filter_fields.empty())
    desc += " Optional `filter` keeps only documents whose field equals the given value.";
  tool.description = desc;

  Json filter_props = Json::object();
  for (const auto& f : vs.filter_fields) {
    Json p = {{"type", std::string(filterTypeName(f.type))}};
    if (f.type == FilterType::String) p["maxLength"] = 1024;
    if (!f.description.empty()) p["description"] = f.description;
    filter_props[f.path] = std::move(p);
  }
  Json props = {
      {"query",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", kMaxQueryChars},
        {"description", "What to look for, in natural language."}}},
      {"k",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", vs.max_k},
        {"description", "Number of results (default " + std::to_string(vs.default_k) + ")."}}}};
  if (!vs.filter_fields.empty()) {
    props["filter"] = {{"type", "object"},
                       {"properties", filter_props},
                       {"additionalProperties", false},
                       {"description", "Equality filters on the listed fields (all must match)."}};
  }
  tool.input_schema = {{"type", "object"},
                       {"properties", props},
                       {"required", {"query"}},
                       {"additionalProperties", false}};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"target", {{"type", "string"}}},
        {"method", {{"type", "string"}, {"enum", {"atlas_vector_search", "exact_scan"}}}},
        {"model", {{"type", "string"}}},
        {"results", {{"type", "array"}}},
        {"count", {{"type", "integer"}}},
        {"truncated", {{"type", "boolean"}}}}},
      {"required", {"target", "method", "results", "count", "truncated"}}};
  tool.limits = state->settings().limits;
  const std::string target_name = target.name;
  // Resolved here, once: a call only takes the source's pool.
  SourceClient* source = state->runtime().find(vs.source);
  tool.handler = [state, target_name, source](
                     const Json& args, protocol::CallContext& ctx) -> Result<protocol::ToolOutput> {
    if (source == nullptr) return makeError(Code::Internal, "the search has no source");
    ctx.audit.source = source->source().name;
    const Target* tp = state->settings().find(target_name);
    if (tp == nullptr || !tp->vector_search)
      return makeError(Code::Internal, "target is not configured");
    const Target& t = *tp;
    const VectorSearch& v = *t.vector_search;
    if (!args.contains("query") || !args["query"].is_string()) {
      return makeError(Code::InvalidArgument, "arguments.query: must be a string");
    }
    std::uint32_t k = v.default_k;
    if (args.contains("k") && !args["k"].is_null()) {
      const std::optional<std::int64_t> kk = integerValue(args["k"]);
      if (!kk || *kk < 1 || *kk > v.max_k)
        return makeError(Code::InvalidArgument,
                         "arguments.k: must be between 1 and " + std::to_string(v.max_k));
      k = static_cast<std::uint32_t>(*kk);
    }
    auto filters = parseFilters(v, args);
    if (!filters) return filters.error();

    auto embedder = state->embedder();
    if (!embedder) {
      return makeError(Code::FailedPrecondition,
                       "semantic search is unavailable: the embedding model could not be loaded (" +
                           embedder.error().message + ")");
    }
    auto vec = (*embedder)->embedOne(args["query"].get<std::string>());
    if (!vec)
      return makeError(vec.error().code, "embedding the query failed: " + vec.error().message);
    if (v.dimensions != 0 && vec->size() != v.dimensions) {
      return makeError(Code::FailedPrecondition,
                       "the embedding model produces " + std::to_string(vec->size()) +
                           "-dimensional vectors but target '" + t.name + "' is configured for " +
                           std::to_string(v.dimensions));
    }
    auto ro = readOptions(state->settings(), ctx);
    if (!ro) return ro.error();
    auto client = source->client();
    if (!client) return client.error();

    std::string fallback_reason;
    Result<SearchOutcome> outcome = makeError(Code::Internal, "no search method ran");
    const bool try_atlas =
        v.method == SearchMethod::Atlas ||
        (v.method == SearchMethod::Auto && state->atlas() != EngineState::Atlas::Unavailable);
    if (try_atlas) {
      bool unsupported = false;
      outcome = atlasSearch(**client, t, *vec, k, *filters, *ro, boundsOf(ctx), unsupported);
      if (outcome.ok()) {
        state->setAtlas(EngineState::Atlas::Available);
      } else if (unsupported) {
        state->setAtlas(EngineState::Atlas::Unavailable);
        if (v.method == SearchMethod::Atlas) {
          return makeError(Code::FailedPrecondition,
                           "this MongoDB server has no Atlas Vector Search ($vectorSearch); set "
                           "vector_search.method to "
                           "auto or exact for target '" +
                               t.name + "'");
        }
        fallback_reason =
            "this MongoDB server has no Atlas Vector Search ($vectorSearch is not supported)";
      } else {
        return outcome.error();
      }
    }
    if (!try_atlas || !fallback_reason.empty()) {
      if (fallback_reason.empty()) {
        fallback_reason = v.method == SearchMethod::Exact
                              ? "vector_search.method is exact"
                              : "this MongoDB server has no Atlas Vector Search (detected earlier)";
      }
      auto ro2 = readOptions(state->settings(), ctx);
      if (!ro2) return ro2.error();
      outcome = exactScan(**client, t, *vec, k, *filters, *ro2, boundsOf(ctx));
      if (!outcome) return outcome.error();
    }

    Limits lim = ctx.limits;
    lim.max_rows = std::min<std::uint32_t>(lim.max_rows, k);
    RowBudget budget(lim);
    for (const auto& h : outcome->hits) {
      Json row = {{"id", h.id},       {"title", h.title},
                  {"text", h.text},   {"metadata", h.metadata},
                  {"score", h.score}, {"_id", h.mongo_id}};
      if (!budget.add(std::move(row))) break;
    }
    Json result = {{"target", t.name},
                   {"method", outcome->method},
                   {"model", (*embedder)->modelId()},
                   {"score_kind", "cosine_similarity"}};
    if (outcome->method == "exact_scan") {
      result["exact_scan"] = {{"scanned", outcome->scanned},
                              {"cap", v.exact_scan_max_docs},
                              {"cap_hit", outcome->cap_hit},
                              {"skipped_vectors", outcome->skipped_vectors},
                              {"reason", fallback_reason}};
    }
    const bool truncated = budget.truncated();
    ctx.audit.truncated = truncated || outcome->cap_hit;
    std::string note = budget.note();
    if (outcome->cap_hit) {
      note += std::string(note.empty() ? "" : " ") + "The exact scan stopped at its cap of " +
              std::to_string(v.exact_scan_max_docs) +
              " documents; documents beyond it were not ranked.";
    }
    const std::uint64_t count = budget.rows();
    result["results"] = budget.takeRows();
    result["count"] = count;
    result["truncated"] = truncated;
    if (!note.empty()) result["note"] = note;
    protocol::ToolOutput out;
    out.fence = t.fence;
    out.rows = count;
    out.structured = std::move(result);
    return out;
  };
  return tool;
}

}  // namespace

EngineState::EngineState(Settings settings, const engines::EngineServices& services)
    : settings_(std::move(settings)),
      // Socket reads may wait a little longer than the longest call, never forever.
      runtime_(settings_, services.env != nullptr ? *services.env : Env::fromMap({}),
               settings_.limits.timeout + std::chrono::seconds(2)),
      embedder_(services.embedder),
      codec_(services.cursor_key) {
  for (const auto& t : settings_.targets) target_sources_.push_back(runtime_.find(t.source));
  if (runtime_.sources().size() == 1) sole_source_ = runtime_.sources().front()->source().name;
}

SourceClient* EngineState::sourceOf(const Target& target) const {
  const auto& targets = settings_.targets;
  const std::less<const Target*> before;
  if (targets.empty() || before(&target, targets.data()) ||
      !before(&target, targets.data() + targets.size())) {
    return nullptr;
  }
  return target_sources_[static_cast<std::size_t>(&target - targets.data())];
}

Result<std::shared_ptr<embed::Embedder>> EngineState::embedder() const {
  if (!embedder_) return makeError(Code::FailedPrecondition, "no embedding provider is configured");
  return embedder_();
}

std::vector<protocol::Tool> buildTools(const std::shared_ptr<EngineState>& state) {
  std::vector<protocol::Tool> tools;
  if (state->settings().targets.empty()) return tools;
  tools.push_back(listTargetsTool(state));
  tools.push_back(getDocumentTool(state));
  tools.push_back(listDocumentsTool(state));
  tools.push_back(countDocumentsTool(state));
  for (const auto& t : state->settings().targets) {
    if (t.vector_search) tools.push_back(semanticSearchTool(state, t));
  }
  return tools;
}

}  // namespace mcpdb::mongodb
