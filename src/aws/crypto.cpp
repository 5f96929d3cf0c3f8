#include "aws/crypto.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <stdexcept>

#include "common/sha256_md.hpp"
#include "common/hex.hpp"

namespace mcpdb::aws {

std::string sha256(std::string_view data) {
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  // One-shot EVP digest; fails only on allocation failure, which is not a recoverable input error.
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), nullptr,
                 sha256Md(), nullptr) != 1) {
    throw std::runtime_error("EVP_Digest(SHA-256) failed");
  }
  return out;
}

std::string sha256Hex(std::string_view data) {
  return toHex(sha256(data));
}

std::string hmacSha256(std::string_view key, std::string_view data) {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int len = 0;
  if (HMAC(sha256Md(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(),
           reinterpret_cast<unsigned char*>(out.data()), &len) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  out.resize(len);
  return out;
}

std::string toHex(std::string_view bytes) {
  return lowerHex(bytes);
}

}  // namespace mcpdb::aws
