#include "engines/mongodb/search.hpp"

#include <algorithm>
#include <cmath>

#include "engines/mongodb/bson_json.hpp"

namespace mcpdb::mongodb {

namespace {

bool heapLess(double sa, std::uint64_t qa, double sb, std::uint64_t qb) {
  // "a is worse than b": lower score, or equal score and scanned later.
  if (sa != sb) return sa < sb;
  return qa > qb;
}

}  // namespace

std::optional<double> cosineSimilarity(const bson_iter_t& iter, const std::vector<float>& query) {
  if (!BSON_ITER_HOLDS_ARRAY(&iter) || query.empty()) return std::nullopt;
  bson_iter_t child;
  if (!bson_iter_recurse(&iter, &child)) return std::nullopt;
  double dot = 0.0;
  double na = 0.0;
  double nb = 0.0;
  std::size_t i = 0;
  while (bson_iter_next(&child)) {
    if (i >= query.size()) return std::nullopt;
    double v = 0.0;
    switch (bson_iter_type(&child)) {
      case BSON_TYPE_DOUBLE: v = bson_iter_double(&child); break;
      case BSON_TYPE_INT32: v = bson_iter_int32(&child); break;
      case BSON_TYPE_INT64: v = static_cast<double>(bson_iter_int64(&child)); break;
      default: return std::nullopt;
    }
    if (!std::isfinite(v)) return std::nullopt;
    const double q = query[i];
    dot += v * q;
    na += v * v;
    nb += q * q;
    ++i;
  }
  if (i != query.size() || na == 0.0 || nb == 0.0) return std::nullopt;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

Json fieldAt(const bson_t& doc, const std::string& path) {
  bson_iter_t it;
  bson_iter_t found;
  if (!bson_iter_init(&it, &doc)) return nullptr;
  if (!bson_iter_find_descendant(&it, path.c_str(), &found)) return nullptr;
  return bsonValueToJson(found);
}

SearchHit makeHit(const bson_t& doc, const VectorSearch& vs, double score) {
  SearchHit h;
  h.id = fieldAt(doc, vs.id_field);
  h.title = fieldAt(doc, vs.title_field);
  h.text = fieldAt(doc, vs.text_field);
  for (const auto& m : vs.metadata_fields) h.metadata[m] = fieldAt(doc, m);
  h.score = score;
  h.mongo_id = fieldAt(doc, "_id");
  return h;
}

void TopK::offer(double score, const bson_t& doc) {
  const std::uint64_t seq = seq_++;
  auto cmp = [](const Entry& a, const Entry& b) {
    return heapLess(b.score, b.seq, a.score, a.seq);
  };
  if (k_ == 0) return;
  if (heap_.size() < k_) {
    heap_.push_back(Entry{score, seq, BsonPtr(bson_copy(&doc))});
    std::push_heap(heap_.begin(), heap_.end(), cmp);
    return;
  }
  // heap_.front() is the worst kept entry.
  const Entry& worst = heap_.front();
  if (!heapLess(worst.score, worst.seq, score, seq)) return;
  std::pop_heap(heap_.begin(), heap_.end(), cmp);
  heap_.back() = Entry{score, seq, BsonPtr(bson_copy(&doc))};
  std::push_heap(heap_.begin(), heap_.end(), cmp);
}

std::vector<std::pair<double, BsonPtr>> TopK::take() {
  std::sort(heap_.begin(), heap_.end(), [](const Entry& a, const Entry& b) {
    return heapLess(b.score, b.seq, a.score, a.seq);
  });
  std::vector<std::pair<double, BsonPtr>> out;
  for (auto& e : heap_) out.emplace_back(e.score, std::move(e.doc));
  heap_.clear();
  return out;
}

Result<SearchOutcome> exactScan(Client& client, const Target& target,
                                const std::vector<float>& query, std::uint32_t k,
                                const std::vector<FilterValue>& filters, const ReadOptions& ro,
                                const CallBounds& bounds) {
  const VectorSearch& vs = *target.vector_search;
  SearchOutcome out;
  out.method = "exact_scan";
  TopK top(k);
  const std::uint32_t cap = vs.exact_scan_max_docs;
  BsonPtr filter = equalityFilter(filters);
  // One document beyond the cap tells whether the cap cut the scan short.
  BsonPtr opts = exactScanOptions(vs, cap + 1, ro);
  auto st = client.find(target.collection, *filter, *opts, bounds, [&](const bson_t& doc) {
    if (out.scanned >= cap) {
      out.cap_hit = true;
      return false;
    }
    ++out.scanned;
    bson_iter_t it;
    bson_iter_t vec;
    std::optional<double> score;
    if (bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, vs.path.c_str(), &vec)) {
      score = cosineSimilarity(vec, query);
    }
    if (!score) {
      ++out.skipped_vectors;
      return true;
    }
    top.offer(*score, doc);
    return true;
  });
  if (!st) return st.error();
  for (auto& [score, doc] : top.take()) out.hits.push_back(makeHit(*doc, vs, score));
  return out;
}

Result<SearchOutcome> atlasSearch(Client& client, const Target& target,
                                  const std::vector<float>& query, std::uint32_t k,
                                  const std::vector<FilterValue>& filters, const ReadOptions& ro,
                                  const CallBounds& bounds, bool& unsupported) {
  unsupported = false;
  const VectorSearch& vs = *target.vector_search;
  SearchOutcome out;
  out.method = "atlas_vector_search";
  BsonPtr pipeline = vectorSearchPipeline(vs, query, k, filters);
  BsonPtr opts = aggregateOptions(ro);
  bson_error_t raw{};
  auto st = client.aggregate(
      target.collection, *pipeline, *opts, bounds,
      [&](const bson_t& doc) {
        bson_iter_t it;
        double s = 0.0;
        if (bson_iter_init_find(&it, &doc, "score") && BSON_ITER_HOLDS_NUMBER(&it))
          s = bson_iter_as_double(&it);
        // Atlas reports cosine as (1 + cos) / 2; convert back so both methods report cosine
        // similarity.
        out.hits.push_back(makeHit(doc, vs, 2.0 * s - 1.0));
        return out.hits.size() < k;
      },
      &raw);
  if (!st) {
    unsupported = isVectorSearchUnsupported(raw);
    return st.error();
  }
  return out;
}

}  // namespace mcpdb::mongodb
