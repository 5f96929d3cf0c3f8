// DynamoDB demo loader: the only code in the project that writes to DynamoDB (CreateTable,
// BatchWriteItem). It lives in mcp-dbserver-load, never in the serving binary (a unit test scans
// the server binary for these operation names).
//
// Tables (idempotent; re-running leaves exactly the demo data):
//   mcp_demo_documents  partition key id (S)
//   mcp_demo_events     partition key category (S), sort key published_id (S) = "<published>#<id>"
// Credentials: MCPDB_DYNAMODB_ADMIN_ACCESS_KEY_ID / MCPDB_DYNAMODB_ADMIN_SECRET_ACCESS_KEY when set
// (admin credentials the server never sees), else the standard AWS credential chain.

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "engines/dynamodb/config.hpp"
#include "engines/dynamodb/transport.hpp"
#include "engines/dynamodb/demo_loader.hpp"

namespace mcpdb::dynamodb {

using engines::DemoDocument;
using engines::DemoLoadContext;
namespace {

using dynamodb::CallOptions;
using dynamodb::Transport;
using namespace std::chrono_literals;

constexpr std::size_t kBatch = 25;  // BatchWriteItem's maximum

CallOptions opts(std::chrono::seconds s = 30s) {
  CallOptions o;
  o.deadline = std::chrono::steady_clock::now() + s;
  return o;
}

struct TableSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> keys;  // (name, HASH|RANGE)
};

Json documentItem(const DemoDocument& d) {
  Json tags = Json::array();
  for (const auto& t : d.tags) tags.push_back({{"S", t}});
  return {{"id", {{"S", d.id}}},     {"title", {{"S", d.title}}},
          {"body", {{"S", d.body}}}, {"category", {{"S", d.category}}},
          {"tags", {{"L", tags}}},   {"published", {{"S", d.published}}}};
}

Json eventItem(const DemoDocument& d) {
  Json item = documentItem(d);
  item["published_id"] = {{"S", d.published + "#" + d.id}};
  return item;
}

Json keyOf(const TableSpec& spec, const Json& item) {
  Json key = Json::object();
  for (const auto& [k, role] : spec.keys) key[k] = item.at(k);
  return key;
}

Status ensureTable(Transport& t, const TableSpec& spec) {
  auto desc = t.call("DescribeTable", {{"TableName", spec.name}}, opts());
  if (!desc && desc.error().code != Code::NotFound) return desc.error();
  if (!desc) {
    Json defs = Json::array(), schema = Json::array();
    for (const auto& [k, role] : spec.keys) {
      defs.push_back({{"AttributeName", k}, {"AttributeType", "S"}});
      schema.push_back({{"AttributeName", k}, {"KeyType", role}});
    }
    auto created = t.call("CreateTable",
                          {{"TableName", spec.name},
                           {"AttributeDefinitions", defs},
                           {"KeySchema", schema},
                           {"BillingMode", "PAY_PER_REQUEST"}},
                          opts());
    if (!created && created.error().code != Code::InvalidArgument)
      return created.error();  // raced: in use
  }
  for (int i = 0; i < 120; ++i) {
    auto d = t.call("DescribeTable", {{"TableName", spec.name}}, opts());
    if (d && d->value("Table", Json::object()).value("TableStatus", "") == "ACTIVE") return {};
    std::this_thread::sleep_for(500ms);
  }
  return makeError(Code::TimedOut, "table " + spec.name + " did not become ACTIVE");
}

Status batchWrite(Transport& t, const std::string& table, std::vector<Json> requests) {
  for (std::size_t i = 0; i < requests.size(); i += kBatch) {
    Json chunk = Json::array();
    for (std::size_t j = i; j < std::min(requests.size(), i + kBatch); ++j)
      chunk.push_back(requests[j]);
    Json pending = {{table, chunk}};
    for (int attempt = 0; !pending.empty(); ++attempt) {
      if (attempt == 10)
        return makeError(Code::ResourceExhausted, "BatchWriteItem kept leaving items unprocessed");
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50 << attempt));
      auto r = t.call("BatchWriteItem", {{"RequestItems", pending}}, opts());
      if (!r) return r.error();
      pending = r->value("UnprocessedItems", Json::object());
    }
  }
  return {};
}

// Every key currently in the table (for removing items that are no longer in the data set).
Result<std::vector<Json>> allKeys(Transport& t, const TableSpec& spec) {
  std::vector<Json> keys;
  Json names = Json::object();
  std::string projection;
  for (std::size_t i = 0; i < spec.keys.size(); ++i) {
    names["#k" + std::to_string(i)] = spec.keys[i].first;
    projection += (i ? ", #k" : "#k") + std::to_string(i);
  }
  std::optional<Json> start;
  while (true) {
    Json req = {{"TableName", spec.name},
                {"ProjectionExpression", projection},
                {"ExpressionAttributeNames", names}};
    if (start) req["ExclusiveStartKey"] = *start;
    auto r = t.call("Scan", req, opts());
    if (!r) return r.error();
    for (const auto& item : r->value("Items", Json::array())) keys.push_back(keyOf(spec, item));
    if (!r->contains("LastEvaluatedKey")) break;
    start = (*r)["LastEvaluatedKey"];
  }
  return keys;
}

Result<std::uint64_t> countItems(Transport& t, const std::string& table) {
  std::uint64_t n = 0;
  std::optional<Json> start;
  while (true) {
    Json req = {{"TableName", table}, {"Select", "COUNT"}};
    if (start) req["ExclusiveStartKey"] = *start;
    auto r = t.call("Scan", req, opts());
    if (!r) return r.error();
    n += r->value("Count", std::uint64_t{0});
    if (!r->contains("LastEvaluatedKey")) break;
    start = (*r)["LastEvaluatedKey"];
  }
  return n;
}

Status loadTable(Transport& t, const TableSpec& spec, const std::vector<Json>& items) {
  if (auto st = ensureTable(t, spec); !st)
    return makeError(st.error().code, spec.name + ": " + st.error().message);
  std::set<std::string> wanted;
  std::vector<Json> requests;
  for (const auto& item : items) {
    wanted.insert(keyOf(spec, item).dump());
    requests.push_back({{"PutRequest", {{"Item", item}}}});
  }
  auto existing = allKeys(t, spec);
  if (!existing)
    return makeError(existing.error().code, spec.name + ": " + existing.error().message);
  for (const auto& k : *existing) {
    if (wanted.count(k.dump()) == 0) requests.push_back({{"DeleteRequest", {{"Key", k}}}});
  }
  if (auto st = batchWrite(t, spec.name, std::move(requests)); !st) {
    return makeError(st.error().code, spec.name + ": " + st.error().message);
  }
  auto n = countItems(t, spec.name);
  if (!n) return makeError(n.error().code, spec.name + ": " + n.error().message);
  if (*n != items.size()) {
    return makeError(Code::Internal, spec.name + ": verification failed: Scan COUNT found " +
                                         std::to_string(*n) + " items, expected " +
                                         std::to_string(items.size()));
  }
  return {};
}

}  // namespace

namespace {

Result<std::string> loadDynamoDb(const std::vector<DemoDocument>& docs,
                                 const DemoLoadContext& ctx) {
  const Env process_env = Env::process();
  const Env& env = ctx.env != nullptr ? *ctx.env : process_env;
  auto region = env.get("AWS_REGION");
  if (!region) return makeError(Code::FailedPrecondition, "AWS_REGION is not set");
  auto endpoint = dynamodb::resolveEndpoint(env, *region);
  if (!endpoint) return endpoint.error();
  dynamodb::TransportOptions to;
  to.region = *region;
  to.endpoint = *endpoint;
  dynamodb::CredentialSource creds = dynamodb::defaultCredentials(env);
  if (env.has("MCPDB_DYNAMODB_ADMIN_ACCESS_KEY_ID")) {
    std::map<std::string, std::string, std::less<>> vars;
    vars["AWS_ACCESS_KEY_ID"] = env.get("MCPDB_DYNAMODB_ADMIN_ACCESS_KEY_ID").value_or("");
    vars["AWS_SECRET_ACCESS_KEY"] = env.get("MCPDB_DYNAMODB_ADMIN_SECRET_ACCESS_KEY").value_or("");
    if (auto tok = env.get("MCPDB_DYNAMODB_ADMIN_SESSION_TOKEN")) vars["AWS_SESSION_TOKEN"] = *tok;
    creds = dynamodb::environmentCredentials(Env::fromMap(std::move(vars)));
  }
  Transport t(to, std::move(creds));

  std::vector<Json> documents, events;
  for (const auto& d : docs) {
    documents.push_back(documentItem(d));
    events.push_back(eventItem(d));
  }
  const TableSpec docs_spec{dynamodb::kDemoDocumentsTable, {{"id", "HASH"}}};
  const TableSpec events_spec{dynamodb::kDemoEventsTable,
                              {{"category", "HASH"}, {"published_id", "RANGE"}}};
  if (auto st = loadTable(t, docs_spec, documents); !st) return st.error();
  if (auto st = loadTable(t, events_spec, events); !st) return st.error();

  // Sanity read: the first document comes back as written.
  if (!docs.empty()) {
    auto r = t.call("GetItem",
                    {{"TableName", docs_spec.name},
                     {"Key", {{"id", {{"S", docs[0].id}}}}},
                     {"ConsistentRead", true}},
                    opts());
    if (!r) return r.error();
    if (r->value("Item", Json::object()) != documents[0]) {
      return makeError(Code::Internal,
                       "verification failed: " + docs[0].id + " reads back differently");
    }
  }
  return std::to_string(docs.size()) + " items in " + docs_spec.name + " and " +
         std::to_string(docs.size()) + " in " + events_spec.name +
         " (verified by Scan COUNT and a read-back)";
}

}  // namespace

engines::DemoLoader demoLoader() {
  return {"dynamodb", "AWS_REGION", [](const Env& env) { return env.has("AWS_REGION"); },
          &loadDynamoDb};
}

}  // namespace mcpdb::dynamodb
