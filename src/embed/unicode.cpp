#include "embed/unicode.hpp"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <string>

namespace mcpdb::embed {
namespace {

// Per-thread UTF-16 buffers: tokenising a query must not allocate once the buffers have grown.
struct Utf16Scratch {
  std::u16string decoded;
  std::u16string normalized;
};

Utf16Scratch& scratch() {
  thread_local Utf16Scratch s;
  return s;
}

const UNormalizer2* nfkc() {
  // ICU returns a process-wide, immutable singleton; thread-safe to use concurrently.
  static const UNormalizer2* instance = [] {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFKCInstance(&err);
    return U_SUCCESS(err) ? n : nullptr;
  }();
  return instance;
}

}  // namespace

Status appendNfkcCodePoints(std::string_view utf8, std::vector<char32_t>& out) {
  if (utf8.empty()) return {};
  if (utf8.size() > kMaxUnicodeInputBytes) {
    return makeError(Code::ResourceExhausted, "text is too large to normalise");
  }
  const UNormalizer2* norm = nfkc();
  if (norm == nullptr) return makeError(Code::Internal, "ICU NFKC normaliser is unavailable");
  Utf16Scratch& s = scratch();

  // UTF-8 -> UTF-16 never produces more code units than input bytes.
  s.decoded.resize(utf8.size());
  int32_t decodedLen = 0;
  UErrorCode err = U_ZERO_ERROR;
  u_strFromUTF8WithSub(s.decoded.data(), static_cast<int32_t>(s.decoded.size()), &decodedLen,
                       utf8.data(), static_cast<int32_t>(utf8.size()), 0xFFFD, nullptr, &err);
  if (U_FAILURE(err)) return makeError(Code::Internal, "UTF-8 decoding failed");

  // NFKC may expand (ligatures, compatibility forms): grow and retry on overflow.
  if (s.normalized.size() < static_cast<std::size_t>(decodedLen) * 2 + 16) {
    s.normalized.resize(static_cast<std::size_t>(decodedLen) * 2 + 16);
  }
  int32_t normLen = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    err = U_ZERO_ERROR;
    normLen = unorm2_normalize(norm, s.decoded.data(), decodedLen, s.normalized.data(),
                               static_cast<int32_t>(s.normalized.size()), &err);
    if (err == U_BUFFER_OVERFLOW_ERROR) {
      s.normalized.resize(static_cast<std::size_t>(normLen));
      continue;
    }
    break;
  }
  if (U_FAILURE(err)) return makeError(Code::Internal, "NFKC normalisation failed");

  const char16_t* p = s.normalized.data();
  int32_t i = 0;
  while (i < normLen) {
    UChar32 c = 0;
    U16_NEXT(p, i, normLen, c);  // an unpaired surrogate comes back as itself, like JS for..of
    out.push_back(static_cast<char32_t>(c));
  }
  return {};
}

Status appendCodePoints(std::string_view utf8, std::vector<char32_t>& out) {
  if (utf8.size() > kMaxUnicodeInputBytes)
    return makeError(Code::ResourceExhausted, "text is too large");
  const auto* p = reinterpret_cast<const uint8_t*>(utf8.data());
  const auto len = static_cast<int32_t>(utf8.size());
  int32_t i = 0;
  while (i < len) {
    UChar32 c = 0;
    U8_NEXT(p, i, len, c);
    if (c < 0) return makeError(Code::InvalidArgument, "ill-formed UTF-8");
    out.push_back(static_cast<char32_t>(c));
  }
  return {};
}

std::size_t utf16Length(const std::vector<char32_t>& codePoints) {
  std::size_t n = 0;
  for (char32_t c : codePoints) n += c > 0xFFFF ? 2 : 1;
  return n;
}

}  // namespace mcpdb::embed
