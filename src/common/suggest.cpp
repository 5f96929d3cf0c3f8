#include "common/suggest.hpp"

#include <algorithm>
#include <numeric>

namespace mcpdb {
namespace {

char fold(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::size_t editDistance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: two back for transpositions.
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1])) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closestName(std::string_view word,
                                       const std::vector<std::string>& candidates) {
  // Very long input is nobody's typo (and would cost a large table).
  if (word.size() > 256) return std::nullopt;
  std::string w(word);
  for (char& c : w) c = fold(c);
  // A third of the word's length in edits (none below 3 characters, 1 from 3, 2 from 6): a typo or
  // two, too few to turn one short name into another (max/min, off/on).
  const std::size_t budget = w.size() / 3;
  const std::string* best = nullptr;
  std::size_t best_distance = budget + 1;
  const std::string* extended = nullptr;  // a candidate that begins with `word` ("desc")
  int extensions = 0;
  const std::string* stem = nullptr;  // the longest candidate `word` begins with ("minimum")
  for (const auto& c : candidates) {
    if (c.size() > 256) continue;
    std::string l(c);
    for (char& ch : l) ch = fold(ch);
    const std::size_t d = editDistance(w, l);
    if (d < best_distance) {
      best = &c;
      best_distance = d;
    }
    if (w.size() >= 3 && l.size() > w.size() && l.compare(0, w.size(), w) == 0) {
      extended = &c;
      ++extensions;
    }
    if (l.size() >= 3 && l.size() < w.size() && w.compare(0, l.size(), l) == 0 &&
        (stem == nullptr || l.size() > stem->size())) {
      stem = &c;
    }
  }
  if (best != nullptr) return *best;
  if (extensions == 1) return *extended;
  if (stem != nullptr) return *stem;
  return std::nullopt;
}

std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  const auto best = closestName(word, candidates);
  return best ? "; did you mean '" + *best + "'?" : std::string();
}

}  // namespace mcpdb
