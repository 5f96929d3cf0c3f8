// libcurl loaded on first use, for the server binary only (see CMakeLists.txt).
//
// Debian's libcurl brings 15 more libraries (GnuTLS through librtmp, libssh2, nettle, gmp,
// p11-kit, ...) whose ~4 500 eager relocations and GnuTLS's constructor every start paid, though
// only DynamoDB and the OpenAI-compatible embedder send HTTP. Each libcurl function that
// http_client.cpp calls is here a forwarder that loads the library with dlopen on first call.
// Test binaries link libcurl directly and do not use this file.
//
// These definitions are not exported from the executable (no -rdynamic), so the loaded library
// binds its internal calls to itself, never to these forwarders.
#define CURL_DISABLE_TYPECHECK  // the type-checking macros would hide the function definitions
#include <curl/curl.h>

#include <cstdarg>
#include <cstdio>

#include "common/lazy_library.hpp"

namespace {

struct Libcurl {
  static constexpr const char* kSoname = "libcurl.so.4";
  static constexpr const char* kPackage = "libcurl4";
};
using AnyFunction = void (*)();

}  // namespace

// The two variadic functions name an enum as their last fixed parameter, exactly as libcurl
// declares them; its values fit an int, so va_start is well-defined in practice (clang warns).
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wvarargs"
#endif

// The real function `name`, resolved once; nullptr when libcurl could not be loaded. Only the
// global set-up, curl_easy_init and the helpers without a handle can be reached in that case.
#define MCPDB_REAL(name) MCPDB_LAZY_REAL(Libcurl, name)

extern "C" {

CURLcode curl_global_init(long flags) {
  MCPDB_REAL(curl_global_init);
  return real != nullptr ? real(flags) : CURLE_FAILED_INIT;
}

CURL* curl_easy_init(void) {
  MCPDB_REAL(curl_easy_init);
  return real != nullptr ? real() : nullptr;
}

void curl_easy_cleanup(CURL* curl) {
  MCPDB_REAL(curl_easy_cleanup);
  real(curl);
}

void curl_easy_reset(CURL* curl) {
  MCPDB_REAL(curl_easy_reset);
  real(curl);
}

CURLcode curl_easy_perform(CURL* curl) {
  MCPDB_REAL(curl_easy_perform);
  return real(curl);
}

// The variadic argument's type follows from the option number, as libcurl itself reads it.
CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  MCPDB_REAL(curl_easy_setopt);
  va_list ap;
  va_start(ap, option);
  CURLcode rc = CURLE_OK;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    rc = real(curl, option, va_arg(ap, long));
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    rc = real(curl, option, va_arg(ap, void*));
  } else if (option < CURLOPTTYPE_OFF_T) {
    rc = real(curl, option, va_arg(ap, AnyFunction));
  } else if (option < CURLOPTTYPE_BLOB) {
    rc = real(curl, option, va_arg(ap, curl_off_t));
  } else {
    rc = real(curl, option, va_arg(ap, void*));
  }
  va_end(ap);
  return rc;
}

// Every CURLINFO_* takes one pointer.
CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  MCPDB_REAL(curl_easy_getinfo);
  va_list ap;
  va_start(ap, info);
  const CURLcode rc = real(curl, info, va_arg(ap, void*));
  va_end(ap);
  return rc;
}

const char* curl_easy_strerror(CURLcode code) {
  MCPDB_REAL(curl_easy_strerror);
  return real != nullptr ? real(code) : "libcurl is not available";
}

curl_slist* curl_slist_append(curl_slist* list, const char* data) {
  MCPDB_REAL(curl_slist_append);
  return real != nullptr ? real(list, data) : nullptr;
}

void curl_slist_free_all(curl_slist* list) {
  MCPDB_REAL(curl_slist_free_all);
  real(list);
}

}  // extern "C"
