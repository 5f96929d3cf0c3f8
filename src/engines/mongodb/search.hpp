#pragma once
// semantic_search_mongodb's two methods. "atlas_vector_search": a $vectorSearch pipeline built
// from the registry. "exact_scan": the documents matching the typed filters are read through a
// capped, batched cursor (vector plus result fields only) and scored in C++ by exact cosine
// similarity. Scoring here rather than with $reduce/$zip on the server keeps cancellation and the
// deadline checked between batches, makes the scan cap and the skipped malformed vectors exact
// counts, and gives the same double-precision arithmetic on every server.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <bson/bson.h>

#include "common/json.hpp"
#include "common/result.hpp"
#include "engines/mongodb/client.hpp"
#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/config.hpp"

namespace mcpdb::mongodb {

// One result, in the same shape as the pgvector tool (id, title, text, metadata, score) plus _id.
struct SearchHit {
  Json id;
  Json title;
  Json text;
  Json metadata = Json::object();
  double score = 0.0;  // cosine similarity, -1..1, for both methods
  Json mongo_id;
};

struct SearchOutcome {
  std::string method;  // "atlas_vector_search" | "exact_scan"
  std::vector<SearchHit> hits;
  // exact_scan only
  std::uint64_t scanned = 0;
  std::uint64_t skipped_vectors = 0;  // missing, non-numeric or wrong-dimension vectors
  bool cap_hit = false;
};

// Exact cosine similarity between the array under `iter` and `query`; nullopt when the value is not
// an array of query.size() finite numbers or has zero norm.
std::optional<double> cosineSimilarity(const bson_iter_t& iter, const std::vector<float>& query);

// The value at a dotted path as JSON (null when absent).
Json fieldAt(const bson_t& doc, const std::string& path);

// Builds a hit from a result document.
SearchHit makeHit(const bson_t& doc, const VectorSearch& vs, double score);

// Keeps the k best (score descending, then scan order) of a stream of candidates.
class TopK {
 public:
  explicit TopK(std::size_t k) : k_(k) {}
  void offer(double score, const bson_t& doc);
  // Best first.
  std::vector<std::pair<double, BsonPtr>> take();

 private:
  struct Entry {
    double score;
    std::uint64_t seq;
    BsonPtr doc;
  };
  std::size_t k_;
  std::uint64_t seq_ = 0;
  std::vector<Entry> heap_;  // min-heap on (score, -seq)
};

Result<SearchOutcome> exactScan(Client& client, const Target& target,
                                const std::vector<float>& query, std::uint32_t k,
                                const std::vector<FilterValue>& filters, const ReadOptions& ro,
                                const CallBounds& bounds);

// Runs $vectorSearch; `unsupported` is set when the server has no Atlas Search.
Result<SearchOutcome> atlasSearch(Client& client, const Target& target,
                                  const std::vector<float>& query, std::uint32_t k,
                                  const std::vector<FilterValue>& filters, const ReadOptions& ro,
                                  const CallBounds& bounds, bool& unsupported);

}  // namespace mcpdb::mongodb
