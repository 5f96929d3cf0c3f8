#include "embed/tokenizer.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/json.hpp"
#include "embed/unicode.hpp"

namespace mcpdb::embed {
namespace {

constexpr char32_t kWordBoundary = 0x2581;  // "▁"
constexpr std::size_t kMaxVocabBytes = std::size_t{64} * 1024 * 1024;

// Per-thread work buffers so that encoding a query does not allocate once they have grown.
struct EncodeScratch {
  std::vector<char32_t> symbols;
  std::vector<double> best;
  std::vector<std::int32_t> words;
  std::vector<std::int32_t> reversed;
};

EncodeScratch& encodeScratch() {
  thread_local EncodeScratch s;
  return s;
}

}  // namespace

Result<Tokenizer> Tokenizer::fromFile(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return makeError(Code::FailedPrecondition,
                     "cannot read vocabulary " + path.string() + ": " + ec.message());
  if (size > kMaxVocabBytes)
    return makeError(Code::FailedPrecondition, "vocabulary " + path.string() + " is too large");
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(Code::FailedPrecondition, "cannot open vocabulary " + path.string());
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.gcount() != static_cast<std::streamsize>(text.size())) {
    return makeError(Code::FailedPrecondition, "short read on vocabulary " + path.string());
  }
  auto tok = fromJson(text);
  if (!tok.ok()) return makeError(tok.error().code, path.string() + ": " + tok.error().message);
  return tok;
}

Result<Tokenizer> Tokenizer::fromJson(std::string_view vocabJson) {
  Json doc = Json::parse(vocabJson, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return makeError(Code::InvalidArgument, "vocabulary is not valid JSON");
  if (!doc.is_array()) return makeError(Code::InvalidArgument, "vocabulary must be a JSON array");
  if (doc.size() <= kReservedIds)
    return makeError(Code::InvalidArgument, "vocabulary has too few pieces");
  if (doc.size() > (1u << 24))
    return makeError(Code::InvalidArgument, "vocabulary has too many pieces");

  Tokenizer t;
  t.pieces_.reserve(doc.size());
  t.utf16Len_.reserve(doc.size());
  t.nodes_.emplace_back();  // root
  std::vector<char32_t> cps;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const Json& e = doc[i];
    const std::string where = "vocabulary entry " + std::to_string(i);
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() ||
        !(e[1].is_number() || e[1].is_null())) {
      return makeError(Code::InvalidArgument, where + " is not [piece, score]");
    }
    const auto& piece = e[0].get_ref<const std::string&>();
    // The reference adds a null score to a number, which reads it as 0.
    const double score = e[1].is_null() ? 0.0 : e[1].get<double>();
    cps.clear();
    if (auto st = appendCodePoints(piece, cps); !st.ok())
      return makeError(Code::InvalidArgument, where + ": " + st.error().message);
    if (cps.size() > 256)
      return makeError(Code::InvalidArgument, where + " is longer than 256 code points");
    t.pieces_.push_back(piece);
    t.utf16Len_.push_back(static_cast<std::uint32_t>(utf16Length(cps)));
    if (i < kReservedIds || cps.empty()) continue;

    std::uint32_t node = 0;
    for (char32_t c : cps) {
      auto [it, inserted] =
          t.edges_.try_emplace(edgeKey(node, c), static_cast<std::uint32_t>(t.nodes_.size()));
      if (inserted) t.nodes_.emplace_back();
      node = it->second;
    }
    // A repeated piece overwrites the earlier one, as the reference's trie does.
    t.nodes_[node].score = score;
    t.nodes_[node].id = static_cast<std::int32_t>(i);
  }
  // Back-tracking over an unknown piece steps by the length of piece 0; zero would never end.
  if (t.utf16Len_[kUnknownId] == 0)
    return makeError(Code::InvalidArgument, "vocabulary entry 0 (unknown piece) is empty");
  return t;
}

std::string_view Tokenizer::piece(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size()) return {};
  return pieces_[static_cast<std::size_t>(id)];
}

Result<std::vector<std::int32_t>> Tokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids;
  if (auto st = encodeInto(text, ids); !st.ok()) return st.error();
  return ids;
}

Status Tokenizer::encodeInto(std::string_view text, std::vector<std::int32_t>& out) const {
  out.clear();
  EncodeScratch& s = encodeScratch();
  auto& sym = s.symbols;
  sym.clear();
  sym.push_back(kWordBoundary);
  if (auto st = appendNfkcCodePoints(text, sym); !st.ok()) return st;
  if (sym.size() == 1) return {};  // empty after normalisation: no tokens
  std::replace(sym.begin() + 1, sym.end(), U' ', kWordBoundary);

  const std::size_t n = sym.size();
  s.best.assign(n + 1, 0.0);
  s.words.assign(n + 1, 0);
  auto& best = s.best;
  auto& words = s.words;
  // Candidates for one end position are visited in increasing start order, as the reference does,
  // and best[start] is final when start is reached, so a forward sweep reproduces its choices.
  auto relax = [&](std::size_t start, std::size_t end, double score, std::int32_t id) {
    const double total = score + best[start];
    if (best[end] == 0.0 || total >= best[end]) {
      best[end] = total;
      words[end] = id;
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    bool matched = false;
    std::uint32_t node = 0;
    for (std::size_t j = i; j < n; ++j) {
      auto it = edges_.find(edgeKey(node, sym[j]));
      if (it == edges_.end()) break;
      node = it->second;
      if (nodes_[node].id >= 0) {
        matched = true;
        relax(i, j + 1, nodes_[node].score, nodes_[node].id);
      }
    }
    if (!matched) relax(i, i + 1, 0.0, kUnknownId);
  }

  auto& rev = s.reversed;
  rev.clear();
  std::size_t pos = n;
  while (pos > 0) {
    const std::int32_t id = words[pos];
    rev.push_back(id);
    const std::size_t step = utf16Len_[static_cast<std::size_t>(id)];
    pos = step >= pos ? 0 : pos - step;
  }
  bool previousUnknown = false;
  for (std::int32_t id : rev) {
    if (!(previousUnknown && id == kUnknownId)) out.push_back(id);
    previousUnknown = id == kUnknownId;
  }
  std::reverse(out.begin(), out.end());
  return {};
}

}  // namespace mcpdb::embed
