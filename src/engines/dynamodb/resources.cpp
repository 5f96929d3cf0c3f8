#include "engines/dynamodb/resources.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "common/uri.hpp"
#include "engines/dynamodb/reply.hpp"
#include "engines/dynamodb/requests.hpp"
#include "engines/dynamodb/tools.hpp"

namespace mcpdb::dynamodb {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kEngine = "dynamodb";
// How long a table's DescribeTable answer is kept. A table's key schema never changes while the
// table exists; what can change it is deleting and re-creating the table, or adding or removing a
// secondary index, which a read then shows within this time.
constexpr std::chrono::minutes kDescribeTtl{5};
// The bound of one DescribeTable when the call gives no earlier deadline.
constexpr std::chrono::seconds kDescribeTimeout{10};

std::vector<std::string> toolNames() {
  std::vector<std::string> names = {kListTargetsTool, kGetItemTool, kScanTool, kCountTool};
  std::sort(names.begin(), names.end());
  return names;
}

Json keyJson(const KeyAttribute& k) {
  return {{"name", k.name}, {"type", keyTypeName(k.type)}};
}

// The attribute's type in AttributeDefinitions ("S", "N", "B"), empty when absent.
std::string attributeType(const Json& table, const std::string& name) {
  if (const Json* defs = arrayField(table, "AttributeDefinitions")) {
    for (const Json& d : *defs) {
      if (stringField(d, "AttributeName") == name) return stringField(d, "AttributeType");
    }
  }
  return {};
}

// {partition_key, sort_key} of a KeySchema array (the table's or an index's).
Json keySchemaJson(const Json& table, const Json* schema) {
  Json out = {{"partition_key", nullptr}, {"sort_key", nullptr}};
  if (schema == nullptr) return out;
  for (const Json& k : *schema) {
    const std::string name = stringField(k, "AttributeName");
    const std::string role = stringField(k, "KeyType");
    Json key = {{"name", name}, {"type", attributeType(table, name)}};
    if (role == "HASH") {
      out["partition_key"] = std::move(key);
    } else if (role == "RANGE") {
      out["sort_key"] = std::move(key);
    }
  }
  return out;
}

// The table's secondary indexes, sorted by name: key schema and projection, nothing else.
Json indexesJson(const Json& table) {
  std::map<std::string, Json> sorted;
  for (const auto& [field_name, kind] : {std::pair{"GlobalSecondaryIndexes", "global"},
                                         std::pair{"LocalSecondaryIndexes", "local"}}) {
    const Json* list = arrayField(table, field_name);
    if (list == nullptr) continue;
    for (const Json& ix : *list) {
      const std::string name = stringField(ix, "IndexName");
      Json entry = keySchemaJson(table, arrayField(ix, "KeySchema"));
      entry["name"] = name;
      entry["kind"] = kind;
      const Json* projection = field(ix, "Projection");
      entry["projection"] =
          projection != nullptr ? stringField(*projection, "ProjectionType", "ALL") : "ALL";
      if (projection != nullptr) {
        if (const Json* attrs = arrayField(*projection, "NonKeyAttributes")) {
          std::vector<std::string> names;
          for (const Json& a : *attrs) {
            if (a.is_string()) names.push_back(a.get<std::string>());
          }
          std::sort(names.begin(), names.end());
          entry["projected_fields"] = names;
        }
      }
      sorted[name] = std::move(entry);
    }
  }
  Json out = Json::array();
  for (auto& [name, entry] : sorted) out.push_back(std::move(entry));
  return out;
}

// What the tools return of a target's items: the listed attributes and the keys, or every
// attribute (then only the keys are known by name).
Json targetJson(const Target& t, const Json& table_keys) {
  std::set<std::string> fields(t.attributes.begin(), t.attributes.end());
  fields.insert(t.partition_key.name);
  if (t.sort_key) fields.insert(t.sort_key->name);
  Json configured = {{"partition_key", keyJson(t.partition_key)},
                     {"sort_key", t.sort_key ? keyJson(*t.sort_key) : Json(nullptr)}};
  Json j = {
      {"name", t.name},
      {"description", t.description},
      {"partition_key", configured["partition_key"]},
      {"sort_key", configured["sort_key"]},
      {"key_schema_matches_table", configured == table_keys},
      {"fields", Json(std::vector<std::string>(fields.begin(), fields.end()))},
      {"all_fields", t.attributes.empty()},
      {"exact_count", {{"enabled", t.exact_count.enabled}, {"max_items", t.exact_count.max_items}}},
      {"max_rows", t.limits.max_rows}};
  return j;
}

// The part of a description DescribeTable gives, kept for kDescribeTtl.
class TableCache {
 public:
  std::optional<Json> get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (value_ && Clock::now() - at_ < kDescribeTtl) return value_;
    return std::nullopt;
  }
  void put(Json value) {
    std::lock_guard<std::mutex> lock(mu_);
    value_ = std::move(value);
    at_ = Clock::now();
  }

 private:
  std::mutex mu_;
  std::optional<Json> value_;
  Clock::time_point at_{};
};

// A table of one source and the targets that read it.
struct Table {
  std::string name;
  std::shared_ptr<Backend> backend;    // its source's
  std::vector<const Target*> targets;  // in config order (non-owning: the registry outlives us)
};

Result<Json> readTable(const Table& table, TableCache& cache, protocol::CallContext& ctx) {
  ctx.audit.source = table.backend->source().name;
  if (ctx.stop.stop_requested()) return makeError(Code::Cancelled, "the request was cancelled");
  std::optional<Json> live = cache.get();
  if (!live) {
    auto transport = table.backend->transport();
    if (!transport) return transport.error();
    CallOptions opts;
    opts.stop = ctx.stop;
    opts.deadline = Clock::now() + kDescribeTimeout;
    if (ctx.deadline != Clock::time_point{}) opts.deadline = std::min(opts.deadline, ctx.deadline);
    auto reply = (*transport)
                     ->call(readOpName(ReadOp::DescribeTable),
                            describeTableRequest(*table.targets.front()), opts);
    if (!reply)
      return makeError(reply.error().code, "table '" + table.name + "': " + reply.error().message);
    const Json* t = field(*reply, "Table");
    if (t == nullptr || !t->is_object())
      return makeError(Code::Internal, "unexpected DescribeTable reply from DynamoDB");
    // Only the schema: never ItemCount, sizes, status or times (they change, and say nothing of
    // the shape).
    live = Json{{"key_schema", keySchemaJson(*t, arrayField(*t, "KeySchema"))},
                {"indexes", indexesJson(*t)}};
    cache.put(*live);
  }
  Json targets = Json::array();
  for (const Target* t : table.targets) targets.push_back(targetJson(*t, (*live)["key_schema"]));
  return Json{{"engine", kEngine},
              {"source", table.backend->source().name},
              {"table", table.name},
              {"key_schema", (*live)["key_schema"]},
              {"indexes", (*live)["indexes"]},
              {"targets", std::move(targets)},
              {"tools", toolNames()}};
}

}  // namespace

std::string tableResourceUri(std::string_view table) {
  return "mcpdb://dynamodb/tables/" + percentEncode(table);
}

std::string tableResourceUri(std::string_view source, std::string_view table) {
  return "mcpdb://dynamodb/sources/" + percentEncode(source) + "/tables/" + percentEncode(table);
}

Status registerResources(protocol::ToolRegistry& tools,
                         const std::shared_ptr<const Routes>& routes) {
  if (routes->routes().empty()) return {};
  // One resource per table of a source, in (source, table) name order; several targets may read
  // the same table. With one source the URI names only the table.
  const bool one_source = !routes->onlySource().empty();
  std::map<std::pair<std::string, std::string>, Table> tables;
  for (const Route& route : routes->routes()) {
    Table& table = tables[{route.backend->source().name, route.target->table}];
    table.name = route.target->table;
    table.backend = route.backend;
    table.targets.push_back(route.target);
  }
  for (auto& [key, table] : tables) {
    const std::string& name = key.second;
    auto shared = std::make_shared<const Table>(std::move(table));
    auto cache = std::make_shared<TableCache>();
    protocol::Resource r;
    r.uri = one_source ? tableResourceUri(name) : tableResourceUri(key.first, name);
    r.name = one_source ? name : key.first + "/" + name;
    r.title =
        "Schema of DynamoDB table " + name + (one_source ? "" : " (source " + key.first + ")");
    r.description =
        "Key schema and secondary indexes of the DynamoDB table (DescribeTable), and for each "
        "target that reads it the key the tools take and the fields they return.";
    r.engine = kEngine;
    r.tools = toolNames();
    // `routes` is captured so that the targets `shared` points into outlive every read.
    r.read = [routes, shared, cache](protocol::CallContext& ctx) -> Result<Json> {
      try {
        return readTable(*shared, *cache, ctx);
      } catch (const std::exception&) {
        return makeError(Code::Internal, "unexpected error while describing a DynamoDB table");
      }
    };
    if (auto st = tools.addResource(std::move(r)); !st) return st;
  }
  return tools.addTemplate({
      .uri_template = one_source ? "mcpdb://dynamodb/tables/{table}"
                                 : "mcpdb://dynamodb/sources/{source}/tables/{table}",
      .name = "dynamodb_table_schema",
      .title = "Schema of a DynamoDB table",
      .description =
          std::string("Key schema, secondary indexes and the exposed fields of one registered "
                      "DynamoDB table; {table} is the table name") +
          (one_source ? "." : ", {source} the source that reads it."),
      .engine = std::string(kEngine),
  });
}

}  // namespace mcpdb::dynamodb
