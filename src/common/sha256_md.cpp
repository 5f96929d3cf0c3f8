#include "common/sha256_md.hpp"

namespace mcpdb {

const EVP_MD* sha256Md() {
  // Fetched on first use and kept for the life of the process (thread-safe static initialisation).
  static const EVP_MD* const md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace mcpdb
