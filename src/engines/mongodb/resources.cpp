#include "engines/mongodb/resources.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "common/uri.hpp"
#include "engines/mongodb/tools.hpp"

namespace mcpdb::mongodb {
namespace {

constexpr const char* kEngine = "mongodb";

std::string_view methodName(SearchMethod m) {
  switch (m) {
    case SearchMethod::Atlas: return "atlas";
    case SearchMethod::Exact: return "exact";
    case SearchMethod::Auto: break;
  }
  return "auto";
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

Json vectorSearchJson(const VectorSearch& vs) {
  Json filters = Json::array();
  std::map<std::string, Json> by_path;
  for (const auto& f : vs.filter_fields)
    by_path[f.path] = {{"field", f.path}, {"type", filterTypeName(f.type)}};
  for (auto& [path, f] : by_path) filters.push_back(std::move(f));
  Json j = {{"tool", vs.tool},
            {"source", vs.source},
            {"index", vs.index},
            {"vector_field", vs.path},
            {"id_field", vs.id_field},
            {"title_field", vs.title_field},
            {"text_field", vs.text_field},
            {"metadata_fields", sorted(vs.metadata_fields)},
            {"filters", std::move(filters)},
            {"method", methodName(vs.method)},
            {"default_k", vs.default_k},
            {"max_k", vs.max_k},
            {"num_candidates",
             {{"multiplier", vs.num_candidates_multiplier}, {"max", vs.num_candidates_max}}},
            {"exact_scan_max_docs", vs.exact_scan_max_docs},
            // 0: the embedding model's dimension
            {"dimensions", vs.dimensions == 0 ? Json(nullptr) : Json(vs.dimensions)}};
  return j;
}

Json targetJson(const Target& t) {
  std::set<std::string> fields(t.projection.begin(), t.projection.end());
  fields.insert("_id");  // always returned
  return {
      {"name", t.name},
      {"description", t.description},
      {"source", t.source},
      {"id", {{"field", "_id"}, {"type", idTypeName(t.id_type)}}},
      {"fields", std::vector<std::string>(fields.begin(), fields.end())},
      {"sort", {{"field", "_id"}, {"order", t.sort_descending ? "desc" : "asc"}}},
      {"count_exact_max", t.count_exact_max},
      {"semantic_search", t.vector_search ? vectorSearchJson(*t.vector_search) : Json(nullptr)}};
}

}  // namespace

std::string collectionResourceUri(std::string_view collection) {
  return "mcpdb://mongodb/collections/" + percentEncode(collection);
}

Status registerResources(protocol::ToolRegistry& registry, const Settings& settings) {
  if (settings.targets.empty()) return {};
  // One resource per collection, in name order; several targets may read the same collection.
  std::map<std::string, std::vector<const Target*>> collections;
  for (const Target& t : settings.targets) collections[t.collection].push_back(&t);
  for (const auto& [collection, targets] : collections) {
    std::set<std::string> tools = {kListTargetsTool, kGetDocumentTool, kListDocumentsTool,
                                   kCountDocumentsTool};
    Json list = Json::array();
    for (const Target* t : targets) {
      if (t->vector_search) tools.insert(t->vector_search->tool);
      list.push_back(targetJson(*t));
    }
    std::vector<std::string> tool_names(tools.begin(), tools.end());
    // The description is fixed by the config: made once, here.
    auto description = std::make_shared<const Json>(Json{{"engine", kEngine},
                                                         {"collection", collection},
                                                         {"targets", std::move(list)},
                                                         {"tools", tool_names}});
    protocol::Resource r;
    r.uri = collectionResourceUri(collection);
    r.name = collection;
    r.title = "Schema of MongoDB collection " + collection;
    r.description =
        "For each target that reads the MongoDB collection: the id type, the fields the tools "
        "return (the projection, _id included) and the vector-search settings.";
    r.engine = kEngine;
    r.tools = std::move(tool_names);
    r.read = [description](protocol::CallContext& ctx) -> Result<Json> {
      if (ctx.stop.stop_requested()) return makeError(Code::Cancelled, "the request was cancelled");
      return *description;
    };
    if (auto st = registry.addResource(std::move(r)); !st) return st;
  }
  return registry.addTemplate({
      .uri_template = "mcpdb://mongodb/collections/{collection}",
      .name = "mongodb_collection_schema",
      .title = "Schema of a MongoDB collection",
      .description = "Id type, exposed fields and vector-search settings of one registered MongoDB "
                     "collection; "
                     "{collection} is the collection name, percent-encoded.",
      .engine = std::string(kEngine),
  });
}

}  // namespace mcpdb::mongodb
