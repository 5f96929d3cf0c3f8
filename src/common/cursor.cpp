#include "common/cursor.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>

#include "common/sha256_md.hpp"

namespace mcpdb {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::size_t kMaxCursorBytes = 8192;

std::string hmac(std::string_view key, std::string_view context, std::string_view payload) {
  std::string msg;
  msg.reserve(context.size() + 1 + payload.size());
  msg.append(context).push_back('\n');
  msg.append(payload);
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int len = 0;
  HMAC(sha256Md(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out.data(), &len);
  return std::string(reinterpret_cast<const char*>(out.data()), len);
}

std::int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Error badCursor() {
  return makeError(Code::InvalidArgument, "invalid cursor: pass back a cursor exactly as returned");
}

}  // namespace

// Base64url without padding (RFC 4648 section 5). OpenSSL's EVP encoder only does the standard
// alphabet with line breaks, so this small codec is written here.
std::string clientCursorContext(std::string_view context, std::string_view client_id) {
  std::string out(context);
  out += "\nclient:";
  out += client_id;
  return out;
}

std::string base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16U) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8U) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(v >> 18U) & 63U];
    out += kAlphabet[(v >> 12U) & 63U];
    out += kAlphabet[(v >> 6U) & 63U];
    out += kAlphabet[v & 63U];
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16U;
    out += kAlphabet[(v >> 18U) & 63U];
    out += kAlphabet[(v >> 12U) & 63U];
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16U) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8U);
    out += kAlphabet[(v >> 18U) & 63U];
    out += kAlphabet[(v >> 12U) & 63U];
    out += kAlphabet[(v >> 6U) & 63U];
  }
  return out;
}

Result<std::string> base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) return badCursor();
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    const auto pos = kAlphabet.find(c);
    if (pos == std::string_view::npos) return badCursor();
    buffer = (buffer << 6U) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> static_cast<unsigned>(bits)) & 0xFFU));
    }
  }
  return out;
}

std::string CursorCodec::encode(std::string_view context, const Json& position) const {
  const std::string payload = Json{{"p", position}, {"e", nowSeconds() + ttl_.count()}}.dump();
  return base64UrlEncode(payload) + "." + base64UrlEncode(hmac(key_, context, payload));
}

Result<Json> CursorCodec::decode(std::string_view context, std::string_view cursor) const {
  if (cursor.empty() || cursor.size() > kMaxCursorBytes) return badCursor();
  const auto dot = cursor.find('.');
  if (dot == std::string_view::npos) return badCursor();
  auto payload = base64UrlDecode(cursor.substr(0, dot));
  auto sig = base64UrlDecode(cursor.substr(dot + 1));
  if (!payload || !sig) return badCursor();
  const std::string expected = hmac(key_, context, *payload);
  if (sig->size() != expected.size() ||
      CRYPTO_memcmp(sig->data(), expected.data(), expected.size()) != 0) {
    return badCursor();
  }
  Json j = Json::parse(*payload, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("p") || !j.contains("e") ||
      !j["e"].is_number_integer()) {
    return badCursor();
  }
  if (j["e"].get<std::int64_t>() < nowSeconds()) {
    return makeError(Code::InvalidArgument, "cursor expired: start again without a cursor");
  }
  return j["p"];
}

}  // namespace mcpdb
