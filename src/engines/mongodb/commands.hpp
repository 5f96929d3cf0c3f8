#pragma once
// Every command, filter, option document and pipeline the engine sends is built here, by type,
// from the registry and typed values: nothing is parsed from agent input. These builders are pure
// (no I/O), so tests can inspect each one (tests/unit/mongodb/commands_test.cpp), and the client
// re-checks every pipeline and filter with checkNoForbiddenOperators before sending it.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <bson/bson.h>

#include "common/result.hpp"
#include "engines/mongodb/ids.hpp"
#include "engines/mongodb/config.hpp"

namespace mcpdb::mongodb {

// An owned heap bson_t (bson_new/bson_copy/...). A class rather than Owned<bson_t, ...>: bson_t
// carries an alignment attribute that GCC drops (and warns about) in template arguments.
class BsonPtr {
 public:
  BsonPtr() = default;
  explicit BsonPtr(bson_t* p) : p_(p) {}
  ~BsonPtr() { reset(); }
  BsonPtr(BsonPtr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  BsonPtr& operator=(BsonPtr&& o) noexcept {
    if (this != &o) {
      reset(o.p_);
      o.p_ = nullptr;
    }
    return *this;
  }
  BsonPtr(const BsonPtr&) = delete;
  BsonPtr& operator=(const BsonPtr&) = delete;

  bson_t* get() const { return p_; }
  bson_t& operator*() const { return *p_; }
  bson_t* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  void reset(bson_t* p = nullptr) {
    if (p_ != nullptr) bson_destroy(p_);
    p_ = p;
  }

 private:
  bson_t* p_ = nullptr;
};

inline BsonPtr newDoc() {
  return BsonPtr(bson_new());
}

// Applied to every operation.
struct ReadOptions {
  std::int64_t max_time_ms = 5000;  // from the call deadline
  std::string read_concern;         // "" = server default
};

// One typed equality filter on a registry-declared field.
struct FilterValue {
  std::string path;
  std::variant<std::string, std::int64_t, double, bool> value;
};

// get: {_id: <typed id>} and {projection, limit: 1, ...}.
BsonPtr getFilter(const TypedId& id);
BsonPtr getOptions(const Target& target, const ReadOptions& ro);

// list: {} or {_id: {$gt|$lt: <last _id>}}, sorted on _id; `after` is the last _id of a page.
BsonPtr listFilter(const bson_iter_t* after, bool descending);
BsonPtr listOptions(const Target& target, std::uint32_t limit, const ReadOptions& ro);

// count: countDocuments options (filter is always {}), and estimatedDocumentCount options.
BsonPtr countFilter();
BsonPtr countOptions(std::int64_t limit, const ReadOptions& ro);
BsonPtr estimatedCountOptions(const ReadOptions& ro);

// numCandidates = min(max(k * multiplier, k), max).
std::uint32_t numCandidates(const VectorSearch& vs, std::uint32_t k);
// Atlas: {pipeline: [{$vectorSearch: {...}}, {$project: {..., score: {$meta:
// "vectorSearchScore"}}}]}.
BsonPtr vectorSearchPipeline(const VectorSearch& vs, const std::vector<float>& query,
                             std::uint32_t k, const std::vector<FilterValue>& filters);
BsonPtr aggregateOptions(const ReadOptions& ro);
// The equality filter shared by both methods: {} | {p: {$eq: v}} | {$and: [...]}.
BsonPtr equalityFilter(const std::vector<FilterValue>& filters);
// Exact scan: find options fetching the vector and result fields, at most `limit` documents.
BsonPtr exactScanOptions(const VectorSearch& vs, std::uint32_t limit, const ReadOptions& ro);

// {connectionStatus: 1, showPrivileges: true}.
// {ping: 1}: readiness (a round trip that reads nothing and needs no privilege).
BsonPtr pingCommand();
BsonPtr connectionStatusCommand();
// {listCollections: 1, nameOnly: true, filter: {name: <collection>}} (doctor: does it exist).
BsonPtr listCollectionCommand(const std::string& collection);

// The Atlas Vector Search index model for createSearchIndexes (used only by the loader):
// {name, type: "vectorSearch", definition: {fields: [{type: "vector", path, numDimensions,
// similarity: "cosine"}, {type: "filter", path}...]}}.
BsonPtr vectorSearchIndexModel(const VectorSearch& vs, std::uint32_t dimensions);

// Refuses any key naming a stage or operator that writes or runs server-side code
// ($out, $merge, $where, $function, $accumulator), at any depth.
Status checkNoForbiddenOperators(const bson_t& doc);

// Canonical extended JSON (relaxed=false), for tests and golden files.
std::string canonicalJson(const bson_t& doc);

}  // namespace mcpdb::mongodb
