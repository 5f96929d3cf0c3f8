#include "engines/dynamodb/tools.hpp"

#include <algorithm>

#include "common/cursor.hpp"
#include "common/json_integer.hpp"
#include "common/row_budget.hpp"
#include "engines/dynamodb/attribute_value.hpp"
#include "engines/dynamodb/reply.hpp"
#include "engines/dynamodb/requests.hpp"

namespace mcpdb::dynamodb {
namespace {

using protocol::CallContext;
using protocol::Tool;
using protocol::ToolOutput;

constexpr const char* kEngine = "dynamodb";
constexpr std::uint32_t kDefaultScanLimit = 25;
constexpr int kMaxScanPages = 8;  // DynamoDB pages stop at 1 MB; a call reads at most this many
constexpr const char* kApproximateNote =
    "approximate_count is DynamoDB's DescribeTable ItemCount, which AWS refreshes only about every "
    "six "
    "hours: it can lag recent writes. Ask for exact=true (where the target allows it) for a "
    "counted value.";

CallOptions callOptions(const CallContext& ctx, const Limits& limits) {
  CallOptions o;
  o.stop = ctx.stop;
  o.deadline = ctx.deadlineFor(limits);
  o.span = ctx.span;
  return o;
}

// Handlers must never throw: a last line of defence that turns a surprise into an Internal error.
protocol::ToolHandler guarded(protocol::ToolHandler inner) {
  return [inner = std::move(inner)](const Json& args, CallContext& ctx) -> Result<ToolOutput> {
    try {
      return inner(args, ctx);
    } catch (const std::exception&) {
      return makeError(Code::Internal, "unexpected error while handling a DynamoDB reply");
    }
  };
}

Error forTarget(const Target& t, const Error& e) {
  return makeError(e.code, "target '" + t.name + "': " + e.message);
}

Json targetEnum(const Settings& reg) {
  Json names = Json::array();
  for (const auto& t : reg.targets) names.push_back(t.name);
  return names;
}

std::string keySummary(const Target& t) {
  std::string s = t.name + " (partition key " + t.partition_key.name + ":" +
                  std::string(keyTypeName(t.partition_key.type));
  if (t.sort_key)
    s += ", sort key " + t.sort_key->name + ":" + std::string(keyTypeName(t.sort_key->type));
  return s + ")";
}

std::string targetsSummary(const Settings& reg) {
  std::string s;
  for (const auto& t : reg.targets) s += (s.empty() ? "" : "; ") + keySummary(t);
  return s;
}

Json targetProperty(const Settings& reg) {
  return {{"type", "string"},
          {"enum", targetEnum(reg)},
          {"description",
           "Logical target name from list_dynamodb_targets (each maps to one fixed table)."}};
}

// The call's target and backend. The audit line names the source before anything can fail: the
// only one at once, else the target's when it is known.
const Route* findRoute(const Routes& routes, const Json& args, CallContext& ctx) {
  ctx.audit.source = routes.onlySource();
  auto it = args.find("target");
  if (it == args.end() || !it->is_string()) return nullptr;
  const Route* route = routes.find(it->get_ref<const std::string&>());
  if (route != nullptr) ctx.audit.source = route->backend->source().name;
  return route;
}

Error unknownTarget() {
  return makeError(Code::NotFound,
                   "unknown target: call list_dynamodb_targets for the allowed names");
}

Json describeTarget(const Route& route) {
  const Target& t = *route.target;
  Json j = {
      {"name", t.name},
      {"source", route.backend->source().name},
      {"table", t.table},
      {"description", t.description},
      {"partition_key",
       {{"name", t.partition_key.name}, {"type", keyTypeName(t.partition_key.type)}}},
      {"sort_key", nullptr},
      {"attributes", nullptr},
      {"exact_count", {{"enabled", t.exact_count.enabled}, {"max_items", t.exact_count.max_items}}},
      {"max_rows", t.limits.max_rows}};
  if (t.sort_key)
    j["sort_key"] = {{"name", t.sort_key->name}, {"type", keyTypeName(t.sort_key->type)}};
  if (!t.attributes.empty()) j["attributes"] = t.attributes;
  return j;
}

// ---- list_dynamodb_targets -------------------------------------------------------------------

Tool listTool(const std::shared_ptr<const Routes>& routes) {
  const Settings* reg = &routes->settings();
  Tool t;
  t.name = kListTargetsTool;
  t.title = "List DynamoDB targets";
  t.engine = kEngine;
  t.description =
      "Lists the DynamoDB targets this server may read: logical name, the source (AWS account "
      "and region) it reads, table, description, key schema "
      "(partition/sort key names and types S=string, N=number, B=binary), the attributes returned, "
      "whether exact counting is allowed, and the row cap. Call this first to learn the target "
      "names "
      "and key types for get_dynamodb_item, scan_dynamodb_table and count_dynamodb_items.";
  t.input_schema = {
      {"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}};
  t.output_schema = {
      {"type", "object"},
      {"properties", {{"targets", {{"type", "array"}, {"items", {{"type", "object"}}}}}}},
      {"required", {"targets"}}};
  t.limits = reg->limits;
  t.handler = [routes](const Json&, CallContext& ctx) -> Result<ToolOutput> {
    ctx.audit.source = routes->onlySource();  // several: the list reads none of them
    Json list = Json::array();
    for (const Route& route : routes->routes()) list.push_back(describeTarget(route));
    ToolOutput out;
    out.rows = list.size();
    out.free_text = false;  // the operator's registry, no database text
    out.structured = {{"targets", std::move(list)}};
    return out;
  };
  return t;
}

// ---- get_dynamodb_item -----------------------------------------------------------------------

Tool getTool(const std::shared_ptr<const Routes>& routes) {
  const Settings* reg = &routes->settings();
  Tool t;
  t.name = kGetItemTool;
  t.title = "Get one DynamoDB item by key";
  t.engine = kEngine;
  t.description =
      "Reads one item by its full primary key from a registered target (GetItem). Give the "
      "partition "
      "key value, and the sort key value when the target has one. Values are typed by the target's "
      "key "
      "schema: S keys take a string, N keys a number written as a string of digits (e.g. \"42\"), "
      "B keys "
      "standard base64. Values are matched exactly, never interpreted. Returns found=false when no "
      "item "
      "has that key. Only the target's allowed attributes are returned. Targets: " +
      targetsSummary(*reg) +
      ". Item values: strings, booleans, null, lists and maps are plain JSON; numbers are JSON "
      "numbers "
      "when exact, otherwise {\"$number\": \"digits\"}; binary is {\"$binary\": base64}; sets are "
      "{\"$stringSet\"|\"$numberSet\"|\"$binarySet\": [...]}.";
  t.input_schema = {
      {"type", "object"},
      {"properties",
       {{"target", targetProperty(*reg)},
        {"partition_key",
         {{"type", Json::array({"string", "integer"})},
          {"description",
           "Partition key value, typed by the target's key schema (N as a digit string)."}}},
        {"sort_key",
         {{"type", Json::array({"string", "integer"})},
          {"description", "Sort key value; required exactly when the target has a sort key."}}},
        {"consistent_read",
         {{"type", "boolean"},
          {"default", false},
          {"description",
           "Strongly consistent read (sees all writes acknowledged before the call)."}}}}},
      {"required", {"target", "partition_key"}},
      {"additionalProperties", false}};
  t.output_schema = {{"type", "object"},
                     {"properties",
                      {{"target", {{"type", "string"}}},
                       {"found", {{"type", "boolean"}}},
                       {"item", {{"type", Json::array({"object", "null"})}}},
                       {"truncated", {{"type", "boolean"}}},
                       {"note", {{"type", "string"}}}}},
                     {"required", {"target", "found", "item", "truncated"}}};
  t.limits = reg->limits;
  t.handler = [routes](const Json& args, CallContext& ctx) -> Result<ToolOutput> {
    const Route* route = findRoute(*routes, args, ctx);
    if (route == nullptr) return unknownTarget();
    const Target* target = route->target;
    const Json* sk = args.contains("sort_key") ? &args["sort_key"] : nullptr;
    auto key = buildKey(*target, args.value("partition_key", Json()), sk);
    if (!key) return key.error();
    auto transport = route->backend->transport();
    if (!transport) return forTarget(*target, transport.error());
    const Limits limits = narrowed(ctx.limits, target->limits);
    auto reply = (*transport)
                     ->call(readOpName(ReadOp::GetItem),
                            getItemRequest(*target, *key, args.value("consistent_read", false)),
                            callOptions(ctx, limits));
    if (!reply) return forTarget(*target, reply.error());
    ToolOutput out;
    out.fence = target->fence;
    out.structured = {
        {"target", target->name}, {"found", false}, {"item", nullptr}, {"truncated", false}};
    const Json* wire_item = objectField(*reply, "Item");
    if (wire_item == nullptr) return out;
    auto item = itemToJson(*wire_item);
    if (!item)
      return forTarget(*target,
                       makeError(Code::Internal, "unexpected item encoding from DynamoDB"));
    RowBudget budget(Limits{1, limits.max_bytes, limits.timeout});
    out.structured["found"] = true;
    if (budget.add(std::move(*item))) {
      out.structured["item"] = std::move(budget.takeRows()[0]);
      out.rows = 1;
    } else {
      out.structured["truncated"] = true;
      ctx.audit.truncated = true;
      out.structured["note"] = "The item exists but is larger than the " +
                               std::to_string(limits.max_bytes) +
                               "-byte response cap (max_bytes), so it is not returned.";
    }
    return out;
  };
  return t;
}

// ---- scan_dynamodb_table ---------------------------------------------------------------------

Tool scanTool(const std::shared_ptr<const Routes>& routes,
              const std::shared_ptr<const CursorCodec>& codec) {
  const Settings* reg = &routes->settings();
  std::uint32_t max_rows = 1;
  for (const auto& target : reg->targets) max_rows = std::max(max_rows, target.limits.max_rows);
  Tool t;
  t.name = kScanTool;
  t.title = "Scan a DynamoDB table, page by page";
  t.engine = kEngine;
  t.description =
      "Reads items of a registered target in DynamoDB's storage order (Scan, no filter), at most "
      "`limit` "
      "items per call (bounded by the target's max_rows; see list_dynamodb_targets). When more "
      "items "
      "remain, the result has has_more=true and a next_cursor: pass it back unchanged as `cursor` "
      "with "
      "the same target to continue. Cursors are signed, expire after an hour and work only for the "
      "target that issued them. Only the target's allowed attributes are returned. Prefer "
      "get_dynamodb_item when you know the key. Item values are encoded as in get_dynamodb_item.";
  t.input_schema = {
      {"type", "object"},
      {"properties",
       {{"target", targetProperty(*reg)},
        {"limit",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", max_rows},
          {"description", "Items to return in this call (default " +
                              std::to_string(kDefaultScanLimit) +
                              ", capped by the target's max_rows)."}}},
        {"cursor",
         {{"type", "string"},
          {"minLength", 1},
          {"maxLength", 8192},
          {"description", "next_cursor from the previous call on the same target."}}}}},
      {"required", {"target"}},
      {"additionalProperties", false}};
  t.output_schema = {
      {"type", "object"},
      {"properties",
       {{"target", {{"type", "string"}}},
        {"items", {{"type", "array"}, {"items", {{"type", "object"}}}}},
        {"count", {{"type", "integer"}}},
        {"has_more", {{"type", "boolean"}}},
        {"next_cursor", {{"type", Json::array({"string", "null"})}}},
        {"truncated", {{"type", "boolean"}}},
        {"note", {{"type", "string"}}}}},
      {"required", {"target", "items", "count", "has_more", "next_cursor", "truncated"}}};
  t.limits = reg->limits;
  t.handler = [routes, codec](const Json& args, CallContext& ctx) -> Result<ToolOutput> {
    const Route* route = findRoute(*routes, args, ctx);
    if (route == nullptr) return unknownTarget();
    const Target* target = route->target;
    const Limits limits = narrowed(ctx.limits, target->limits);
    std::uint32_t limit = std::min(kDefaultScanLimit, limits.max_rows);
    if (auto it = args.find("limit"); it != args.end() && !it->is_null()) {
      // 1.0 is an integer, as the schema says (json_integer.hpp).
      const std::optional<std::int64_t> v = integerValue(*it);
      if (!v || *v < 1 || *v > static_cast<std::int64_t>(limits.max_rows)) {
        return makeError(Code::InvalidArgument, "arguments.limit: must be between 1 and " +
                                                    std::to_string(limits.max_rows) +
                                                    " for target '" + target->name + "'");
      }
      limit = static_cast<std::uint32_t>(*v);
    }
    std::optional<Json> start;
    if (auto it = args.find("cursor"); it != args.end() && it->is_string()) {
      auto pos =
          codec->decode(clientCursorContext(scanCursorContext(*target), ctx.principal.client_id),
                        it->get<std::string>());
      if (!pos) return makeError(Code::InvalidArgument, "arguments.cursor: " + pos.error().message);
      if (stringField(*pos, "t") != target->table || field(*pos, "k") == nullptr ||
          !validateWireKey(*target, (*pos)["k"])) {
        return makeError(Code::InvalidArgument, "arguments.cursor: invalid cursor");
      }
      start = (*pos)["k"];
    }
    auto transport = route->backend->transport();
    if (!transport) return forTarget(*target, transport.error());
    const CallOptions opts = callOptions(ctx, limits);

    RowBudget budget(Limits{limit, limits.max_bytes, limits.timeout});
    std::optional<Json> resume;  // where the next call starts; nullopt = table exhausted
    std::uint64_t skipped = 0;
    bool stopped_by_budget = false;
    for (int page = 0; page < kMaxScanPages; ++page) {
      const auto want = static_cast<std::uint32_t>(limit - budget.rows());
      auto reply =
          (*transport)->call(readOpName(ReadOp::Scan), scanRequest(*target, want, start), opts);
      if (!reply) return forTarget(*target, reply.error());
      const Json* items = arrayField(*reply, "Items");
      if (items == nullptr)
        return forTarget(*target, makeError(Code::Internal, "unexpected Scan reply from DynamoDB"));
      for (const auto& wire : *items) {
        auto key = keyOfItem(*target, wire);
        if (!key) return forTarget(*target, key.error());
        auto item = itemToJson(wire);
        if (!item)
          return forTarget(*target,
                           makeError(Code::Internal, "unexpected item encoding from DynamoDB"));
        if (!budget.add(std::move(*item))) {
          if (budget.rows() == 0) {
            // A single item larger than the byte cap: step over it (and say so) rather than loop
            // forever.
            ++skipped;
            resume = std::move(*key);
          }
          stopped_by_budget = true;
          break;
        }
        resume = std::move(*key);
      }
      if (stopped_by_budget) break;
      const Json* lek = objectField(*reply, "LastEvaluatedKey");
      if (lek == nullptr) {
        resume.reset();
        break;
      }
      start = *lek;
      resume = *lek;
      if (budget.rows() >= limit || std::chrono::steady_clock::now() >= opts.deadline ||
          opts.stop.stop_requested())
        break;
    }
    ToolOutput out;
    out.rows = budget.rows();
    out.fence = target->fence;
    Json next = nullptr;
    if (resume)
      next = codec->encode(clientCursorContext(scanCursorContext(*target), ctx.principal.client_id),
                           Json{{"t", target->table}, {"k", *resume}});
    std::string note;
    if (stopped_by_budget) {
      note = skipped > 0
                 ? "An item larger than the " + std::to_string(limits.max_bytes) +
                       "-byte response cap (max_bytes) was skipped; continue with next_cursor."
                 : budget.note() + " Continue with next_cursor.";
    } else if (resume) {
      note = "More items remain: call again with cursor=next_cursor.";
    }
    out.structured = {{"target", target->name},
                      {"count", budget.rows()},
                      {"has_more", resume.has_value()},
                      {"next_cursor", next},
                      {"truncated", stopped_by_budget}};
    ctx.audit.truncated = stopped_by_budget;
    out.structured["items"] = budget.takeRows();
    if (skipped > 0) out.structured["skipped_items"] = skipped;
    if (!note.empty()) out.structured["note"] = note;
    return out;
  };
  return t;
}

// ---- count_dynamodb_items --------------------------------------------------------------------

Tool countTool(const std::shared_ptr<const Routes>& routes) {
  const Settings* reg = &routes->settings();
  Tool t;
  t.name = kCountTool;
  t.title = "Count items of a DynamoDB target";
  t.engine = kEngine;
  t.description =
      "Returns the approximate item count of a registered target (DynamoDB's DescribeTable "
      "ItemCount, "
      "refreshed by AWS only about every six hours, so labelled approximate). With exact=true, and "
      "only "
      "where the target allows it (list_dynamodb_targets: exact_count.enabled), also counts items "
      "with a "
      "Scan (Select=COUNT) that stops after the target's max_items and says whether that cap was "
      "hit.";
  t.input_schema = {
      {"type", "object"},
      {"properties",
       {{"target", targetProperty(*reg)},
        {"exact",
         {{"type", "boolean"},
          {"default", false},
          {"description",
           "Also count exactly by scanning (capped; slower and consumes read capacity)."}}}}},
      {"required", {"target"}},
      {"additionalProperties", false}};
  t.output_schema = {{"type", "object"},
                     {"properties",
                      {{"target", {{"type", "string"}}},
                       {"approximate_count", {{"type", "integer"}}},
                       {"approximate", {{"type", "boolean"}}},
                       {"table_status", {{"type", "string"}}},
                       {"exact_count", {{"type", "object"}}},
                       {"note", {{"type", "string"}}}}},
                     {"required", {"target", "approximate_count", "approximate", "note"}}};
  t.limits = reg->limits;
  t.handler = [routes](const Json& args, CallContext& ctx) -> Result<ToolOutput> {
    const Route* route = findRoute(*routes, args, ctx);
    if (route == nullptr) return unknownTarget();
    const Target* target = route->target;
    const bool exact = args.value("exact", false);
    if (exact && !target->exact_count.enabled) {
      return makeError(Code::FailedPrecondition,
                       "target '" + target->name +
                           "' does not allow exact counting (exact_count.enabled is off in the "
                           "server's config); use the approximate count");
    }
    auto transport = route->backend->transport();
    if (!transport) return forTarget(*target, transport.error());
    const Limits limits = narrowed(ctx.limits, target->limits);
    const CallOptions opts = callOptions(ctx, limits);
    auto desc =
        (*transport)->call(readOpName(ReadOp::DescribeTable), describeTableRequest(*target), opts);
    if (!desc) return forTarget(*target, desc.error());
    const Json* table_ptr = field(*desc, "Table");
    const Json table = table_ptr != nullptr ? *table_ptr : Json::object();
    ToolOutput out;
    out.free_text = false;  // counts
    out.structured = {{"target", target->name},
                      {"approximate_count", uintField(table, "ItemCount").value_or(0)},
                      {"approximate", true},
                      {"table_status", stringField(table, "TableStatus", "UNKNOWN")},
                      {"note", kApproximateNote}};
    if (!exact) return out;

    const std::uint64_t cap = target->exact_count.max_items;
    std::uint64_t counted = 0;
    std::uint64_t pages = 0;
    std::optional<Json> start;
    bool complete = false;
    std::string stopped_by;
    while (true) {
      if (opts.stop.stop_requested()) return makeError(Code::Cancelled, "count cancelled");
      if (std::chrono::steady_clock::now() >= opts.deadline) {
        stopped_by = "timeout";
        break;
      }
      const auto want = static_cast<std::uint32_t>(std::min<std::uint64_t>(cap - counted, 1000000));
      auto reply =
          (*transport)
              ->call(readOpName(ReadOp::Scan), countScanRequest(*target, want, start), opts);
      if (!reply) {
        if (reply.error().code == Code::TimedOut && pages > 0) {
          stopped_by = "timeout";
          break;
        }
        return forTarget(*target, reply.error());
      }
      ++pages;
      counted += uintField(*reply, "Count").value_or(0);
      ctx.progress(static_cast<double>(counted), static_cast<double>(cap), "counted items");
      const Json* lek = objectField(*reply, "LastEvaluatedKey");
      if (lek == nullptr) {
        complete = true;
        break;
      }
      if (counted >= cap) {
        stopped_by = "max_items";
        break;
      }
      start = *lek;
    }
    ctx.audit.truncated = stopped_by == "max_items";  // the item cap cut the count short
    Json ec = {{"count", counted},
               {"complete", complete},
               {"capped", stopped_by == "max_items"},
               {"max_items", cap},
               {"pages", pages}};
    if (!complete) {
      ec["stopped_by"] = stopped_by;
      out.structured["note"] = std::string(kApproximateNote) + " The exact count stopped early (" +
                               stopped_by + "): the table has at least " + std::to_string(counted) +
                               " items.";
    }
    out.structured["exact_count"] = std::move(ec);
    out.rows = 1;
    return out;
  };
  return t;
}

}  // namespace

std::string scanCursorContext(const Target& target) {
  return "dynamodb:scan_dynamodb_table:" + target.name;
}

Status registerTools(protocol::ToolRegistry& tools, const std::shared_ptr<const Routes>& routes,
                     const std::string& cursor_key) {
  if (routes->routes().empty()) return {};
  auto codec = std::make_shared<const CursorCodec>(cursor_key);
  for (Tool t : {listTool(routes), getTool(routes), scanTool(routes, codec), countTool(routes)}) {
    t.handler = guarded(std::move(t.handler));
    if (auto st = tools.add(std::move(t)); !st) return st;
  }
  return {};
}

}  // namespace mcpdb::dynamodb
