#include "engines/mongodb/commands.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

namespace mcpdb::mongodb {

namespace {

void appendReadOptions(bson_t* opts, const ReadOptions& ro) {
  BSON_APPEND_INT64(opts, "maxTimeMS", std::max<std::int64_t>(1, ro.max_time_ms));
  if (!ro.read_concern.empty()) {
    bson_t rc;
    BSON_APPEND_DOCUMENT_BEGIN(opts, "readConcern", &rc);
    bson_append_utf8(&rc, "level", -1, ro.read_concern.c_str(), -1);
    bson_append_document_end(opts, &rc);
  }
}

// {_id: 1, f1: 1, ...} for the given fields (distinct, validated at config time).
void appendProjection(bson_t* opts, const std::vector<std::string>& fields) {
  bson_t proj;
  BSON_APPEND_DOCUMENT_BEGIN(opts, "projection", &proj);
  std::set<std::string> seen{"_id"};
  BSON_APPEND_INT32(&proj, "_id", 1);
  for (const auto& f : fields) {
    if (seen.insert(f).second) bson_append_int32(&proj, f.c_str(), -1, 1);
  }
  bson_append_document_end(opts, &proj);
}

std::vector<std::string> resultFields(const VectorSearch& vs) {
  std::vector<std::string> fields{vs.id_field, vs.title_field, vs.text_field};
  fields.insert(fields.end(), vs.metadata_fields.begin(), vs.metadata_fields.end());
  return fields;
}

void appendFilterValue(bson_t* doc, const char* key, const FilterValue& f) {
  if (const auto* s = std::get_if<std::string>(&f.value)) {
    bson_append_utf8(doc, key, -1, s->data(), static_cast<int>(s->size()));
  } else if (const auto* i = std::get_if<std::int64_t>(&f.value)) {
    BSON_APPEND_INT64(doc, key, *i);
  } else if (const auto* d = std::get_if<double>(&f.value)) {
    BSON_APPEND_DOUBLE(doc, key, *d);
  } else {
    BSON_APPEND_BOOL(doc, key, std::get<bool>(f.value));
  }
}

// {path: {$eq: value}}: an explicit $eq, so the value is a value whatever its content.
void appendEquality(bson_t* doc, const FilterValue& f) {
  bson_t cond;
  bson_append_document_begin(doc, f.path.c_str(), -1, &cond);
  appendFilterValue(&cond, "$eq", f);
  bson_append_document_end(doc, &cond);
}

void appendEqualityFilter(bson_t* doc, const std::vector<FilterValue>& filters) {
  if (filters.size() == 1) {
    appendEquality(doc, filters.front());
    return;
  }
  bson_t arr;
  BSON_APPEND_ARRAY_BEGIN(doc, "$and", &arr);
  for (std::size_t i = 0; i < filters.size(); ++i) {
    const std::string idx = std::to_string(i);
    bson_t elem;
    bson_append_document_begin(&arr, idx.c_str(), -1, &elem);
    appendEquality(&elem, filters[i]);
    bson_append_document_end(&arr, &elem);
  }
  bson_append_array_end(doc, &arr);
}

bool forbiddenKey(std::string_view key) {
  static constexpr std::array<std::string_view, 5> kForbidden = {"$out", "$merge", "$where",
                                                                 "$function", "$accumulator"};
  return std::find(kForbidden.begin(), kForbidden.end(), key) != kForbidden.end();
}

bool scanForbidden(bson_iter_t& it, int depth, std::string& found) {
  while (bson_iter_next(&it)) {
    const std::string_view key(bson_iter_key(&it), bson_iter_key_len(&it));
    if (forbiddenKey(key)) {
      found = std::string(key);
      return true;
    }
    if ((BSON_ITER_HOLDS_DOCUMENT(&it) || BSON_ITER_HOLDS_ARRAY(&it)) && depth < 200) {
      bson_iter_t child;
      if (bson_iter_recurse(&it, &child) && scanForbidden(child, depth + 1, found)) return true;
    }
  }
  return false;
}

}  // namespace

BsonPtr getFilter(const TypedId& id) {
  BsonPtr doc = newDoc();
  appendTypedId(doc.get(), "_id", id);
  return doc;
}

BsonPtr getOptions(const Target& target, const ReadOptions& ro) {
  BsonPtr opts = newDoc();
  appendProjection(opts.get(), target.projection);
  BSON_APPEND_INT64(opts.get(), "limit", 1);
  BSON_APPEND_BOOL(opts.get(), "singleBatch", true);
  appendReadOptions(opts.get(), ro);
  return opts;
}

BsonPtr listFilter(const bson_iter_t* after, bool descending) {
  BsonPtr doc = newDoc();
  if (after != nullptr) {
    bson_t cond;
    BSON_APPEND_DOCUMENT_BEGIN(doc.get(), "_id", &cond);
    bson_append_iter(&cond, descending ? "$lt" : "$gt", -1, after);
    bson_append_document_end(doc.get(), &cond);
  }
  return doc;
}

BsonPtr listOptions(const Target& target, std::uint32_t limit, const ReadOptions& ro) {
  BsonPtr opts = newDoc();
  appendProjection(opts.get(), target.projection);
  bson_t sort;
  BSON_APPEND_DOCUMENT_BEGIN(opts.get(), "sort", &sort);
  BSON_APPEND_INT32(&sort, "_id", target.sort_descending ? -1 : 1);
  bson_append_document_end(opts.get(), &sort);
  BSON_APPEND_INT64(opts.get(), "limit", limit);
  BSON_APPEND_INT32(opts.get(), "batchSize",
                    static_cast<std::int32_t>(std::min<std::uint32_t>(limit, 101)));
  appendReadOptions(opts.get(), ro);
  return opts;
}

BsonPtr countFilter() {
  return newDoc();
}

BsonPtr countOptions(std::int64_t limit, const ReadOptions& ro) {
  BsonPtr opts = newDoc();
  BSON_APPEND_INT64(opts.get(), "limit", limit);
  appendReadOptions(opts.get(), ro);
  return opts;
}

BsonPtr estimatedCountOptions(const ReadOptions& ro) {
  BsonPtr opts = newDoc();
  appendReadOptions(opts.get(), ro);
  return opts;
}

std::uint32_t numCandidates(const VectorSearch& vs, std::uint32_t k) {
  const std::uint64_t want =
      std::max<std::uint64_t>(static_cast<std::uint64_t>(k) * vs.num_candidates_multiplier, k);
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(want, std::max(vs.num_candidates_max, k)));
}

BsonPtr vectorSearchPipeline(const VectorSearch& vs, const std::vector<float>& query,
                             std::uint32_t k, const std::vector<FilterValue>& filters) {
  BsonPtr doc = newDoc();
  bson_t pipeline;
  BSON_APPEND_ARRAY_BEGIN(doc.get(), "pipeline", &pipeline);

  bson_t stage;
  BSON_APPEND_DOCUMENT_BEGIN(&pipeline, "0", &stage);
  bson_t search;
  BSON_APPEND_DOCUMENT_BEGIN(&stage, "$vectorSearch", &search);
  bson_append_utf8(&search, "index", -1, vs.index.c_str(), -1);
  bson_append_utf8(&search, "path", -1, vs.path.c_str(), -1);
  bson_t vec;
  BSON_APPEND_ARRAY_BEGIN(&search, "queryVector", &vec);
  for (std::size_t i = 0; i < query.size(); ++i) {
    const std::string idx = std::to_string(i);
    bson_append_double(&vec, idx.c_str(), -1, static_cast<double>(query[i]));
  }
  bson_append_array_end(&search, &vec);
  BSON_APPEND_INT32(&search, "numCandidates", static_cast<std::int32_t>(numCandidates(vs, k)));
  BSON_APPEND_INT32(&search, "limit", static_cast<std::int32_t>(k));
  if (!filters.empty()) {
    bson_t filter;
    BSON_APPEND_DOCUMENT_BEGIN(&search, "filter", &filter);
    appendEqualityFilter(&filter, filters);
    bson_append_document_end(&search, &filter);
  }
  bson_append_document_end(&stage, &search);
  bson_append_document_end(&pipeline, &stage);

  bson_t stage2;
  BSON_APPEND_DOCUMENT_BEGIN(&pipeline, "1", &stage2);
  bson_t proj;
  BSON_APPEND_DOCUMENT_BEGIN(&stage2, "$project", &proj);
  std::set<std::string> seen{"_id"};
  BSON_APPEND_INT32(&proj, "_id", 1);
  for (const auto& f : resultFields(vs)) {
    if (seen.insert(f).second) bson_append_int32(&proj, f.c_str(), -1, 1);
  }
  bson_t meta;
  BSON_APPEND_DOCUMENT_BEGIN(&proj, "score", &meta);
  BSON_APPEND_UTF8(&meta, "$meta", "vectorSearchScore");
  bson_append_document_end(&proj, &meta);
  bson_append_document_end(&stage2, &proj);
  bson_append_document_end(&pipeline, &stage2);

  bson_append_array_end(doc.get(), &pipeline);
  return doc;
}

BsonPtr aggregateOptions(const ReadOptions& ro) {
  BsonPtr opts = newDoc();
  appendReadOptions(opts.get(), ro);
  return opts;
}

BsonPtr equalityFilter(const std::vector<FilterValue>& filters) {
  BsonPtr doc = newDoc();
  if (!filters.empty()) appendEqualityFilter(doc.get(), filters);
  return doc;
}

BsonPtr exactScanOptions(const VectorSearch& vs, std::uint32_t limit, const ReadOptions& ro) {
  BsonPtr opts = newDoc();
  std::vector<std::string> fields = resultFields(vs);
  fields.push_back(vs.path);
  appendProjection(opts.get(), fields);
  BSON_APPEND_INT64(opts.get(), "limit", limit);
  BSON_APPEND_INT32(opts.get(), "batchSize", 200);
  appendReadOptions(opts.get(), ro);
  return opts;
}

BsonPtr connectionStatusCommand() {
  BsonPtr cmd = newDoc();
  BSON_APPEND_INT32(cmd.get(), "connectionStatus", 1);
  BSON_APPEND_BOOL(cmd.get(), "showPrivileges", true);
  return cmd;
}

BsonPtr pingCommand() {
  BsonPtr cmd = newDoc();
  BSON_APPEND_INT32(cmd.get(), "ping", 1);
  return cmd;
}

BsonPtr listCollectionCommand(const std::string& collection) {
  BsonPtr cmd = newDoc();
  BSON_APPEND_INT32(cmd.get(), "listCollections", 1);
  BSON_APPEND_BOOL(cmd.get(), "nameOnly", true);
  bson_t filter;
  BSON_APPEND_DOCUMENT_BEGIN(cmd.get(), "filter", &filter);
  bson_append_utf8(&filter, "name", -1, collection.c_str(), static_cast<int>(collection.size()));
  bson_append_document_end(cmd.get(), &filter);
  return cmd;
}

BsonPtr vectorSearchIndexModel(const VectorSearch& vs, std::uint32_t dimensions) {
  BsonPtr doc = newDoc();
  bson_append_utf8(doc.get(), "name", -1, vs.index.c_str(), -1);
  BSON_APPEND_UTF8(doc.get(), "type", "vectorSearch");
  bson_t def;
  BSON_APPEND_DOCUMENT_BEGIN(doc.get(), "definition", &def);
  bson_t fields;
  BSON_APPEND_ARRAY_BEGIN(&def, "fields", &fields);
  bson_t vec;
  BSON_APPEND_DOCUMENT_BEGIN(&fields, "0", &vec);
  BSON_APPEND_UTF8(&vec, "type", "vector");
  bson_append_utf8(&vec, "path", -1, vs.path.c_str(), -1);
  BSON_APPEND_INT32(&vec, "numDimensions", static_cast<std::int32_t>(dimensions));
  BSON_APPEND_UTF8(&vec, "similarity", "cosine");
  bson_append_document_end(&fields, &vec);
  for (std::size_t i = 0; i < vs.filter_fields.size(); ++i) {
    const std::string idx = std::to_string(i + 1);
    bson_t f;
    bson_append_document_begin(&fields, idx.c_str(), -1, &f);
    BSON_APPEND_UTF8(&f, "type", "filter");
    bson_append_utf8(&f, "path", -1, vs.filter_fields[i].path.c_str(), -1);
    bson_append_document_end(&fields, &f);
  }
  bson_append_array_end(&def, &fields);
  bson_append_document_end(doc.get(), &def);
  return doc;
}

Status checkNoForbiddenOperators(const bson_t& doc) {
  bson_iter_t it;
  if (!bson_iter_init(&it, &doc)) return makeError(Code::Internal, "unreadable command document");
  std::string found;
  if (scanForbidden(it, 0, found)) {
    return makeError(Code::PermissionDenied, "refused to send a command containing " + found);
  }
  return {};
}

std::string canonicalJson(const bson_t& doc) {
  std::size_t len = 0;
  char* s = bson_as_canonical_extended_json(&doc, &len);
  std::string out = s != nullptr ? std::string(s, len) : std::string();
  bson_free(s);
  return out;
}

}  // namespace mcpdb::mongodb
