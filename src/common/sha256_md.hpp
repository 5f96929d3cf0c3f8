#pragma once
// SHA-256 as an EVP_MD fetched once from OpenSSL's default provider. With OpenSSL 3, passing
// EVP_sha256() to EVP_Digest or HMAC makes each call fetch the implementation again (an "implicit
// fetch": a provider lookup under a lock), which showed up at about 2 % of an HTTP call at
// concurrency 8 (API key hashing) and sits on every SigV4 signature. Every SHA-256 digest and HMAC
// in the server takes its EVP_MD from here.
#include <openssl/evp.h>

namespace mcpdb {

// Never null: if the fetch fails, EVP_sha256() (which then fetches per call, as before).
const EVP_MD* sha256Md();

}  // namespace mcpdb
