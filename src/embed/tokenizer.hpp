#pragma once
// SentencePiece unigram tokenizer for the USE-Lite vocabulary (vocab.json: [[piece, score], ...]).
// Written by hand: Debian's libsentencepiece-dev needs a serialised ModelProto (there is none, only
// vocab.json) and its Viterbi differs from the reference's in the quirks below, which the golden
// test needs reproduced token for token.
//
// Behaviour, matching @energetic-ai/embeddings@0.2.0's tokenizer:
//  - the text is NFKC-normalised; a non-empty result gets a leading U+2581 and every U+0020 becomes
//    U+2581 (other whitespace is kept as is);
//  - the first 6 ids are reserved (id 0 is the unknown piece); a null score counts as 0; when a
//    piece appears twice, the later entry wins;
//  - Viterbi over code points: a position where no piece starts yields an unknown piece (score 0);
//    ties and "no score yet" (exactly 0) resolve to the later candidate;
//  - back-tracking steps by the piece's UTF-16 length; runs of unknown ids collapse into one.
// Output is every token id (no truncation here; the model keeps the first 128).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"

namespace mcpdb::embed {

class Tokenizer {
 public:
  static constexpr std::int32_t kUnknownId = 0;
  static constexpr std::size_t kReservedIds = 6;

  // Parses vocab.json text. Errors (InvalidArgument) name what is wrong with the vocabulary.
  static Result<Tokenizer> fromJson(std::string_view vocabJson);
  // Reads and parses a vocab.json file.
  static Result<Tokenizer> fromFile(const std::filesystem::path& path);

  // Token ids of text (any bytes; ill-formed UTF-8 is read as U+FFFD). Thread-safe.
  Result<std::vector<std::int32_t>> encode(std::string_view text) const;
  // Same, into a caller-owned vector (cleared first), to reuse its capacity.
  Status encodeInto(std::string_view text, std::vector<std::int32_t>& out) const;

  std::size_t vocabSize() const { return pieces_.size(); }
  // The piece text of an id (UTF-8), or empty for an out-of-range id.
  std::string_view piece(std::int32_t id) const;

 private:
  struct Node {
    double score = 0.0;
    std::int32_t id = -1;  // -1: no piece ends here
  };
  static std::uint64_t edgeKey(std::uint32_t node, char32_t c) {
    return (static_cast<std::uint64_t>(node) << 21) | static_cast<std::uint64_t>(c & 0x1FFFFF);
  }

  std::vector<std::string> pieces_;
  std::vector<std::uint32_t> utf16Len_;  // per id
  std::vector<Node> nodes_;              // trie; node 0 is the root
  std::unordered_map<std::uint64_t, std::uint32_t> edges_;
};

}  // namespace mcpdb::embed
