#pragma once
// Loading a shared library on first use (dlopen) for the server binary's lazy forwarders of
// libcurl, libmongoc and libpq (src/common/lazy_curl.cpp, src/engines/mongodb/lazy_mongoc.cpp,
// src/engines/postgres/lazy_pq.cpp): one place for the open, the message naming the Debian
// package when it is missing, and the symbol lookup.
#include <dlfcn.h>

#include <cstdio>

namespace mcpdb::lazy {

// dlopen(soname) with local binding; on failure prints one line naming `package` and returns
// nullptr (each forwarder then fails the way the library reports an error).
inline void* openLibrary(const char* soname, const char* package) {
  void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = dlerror();
    std::fprintf(stderr, "mcp-dbserver: cannot load %s (install %s): %s\n", soname, package,
                 why != nullptr ? why : "not found");
  }
  return h;
}

// The function `name` in `lib` as type F; nullptr when the library or the symbol is missing.
template <typename F>
F resolveIn(void* lib, const char* name) {
  return lib == nullptr ? nullptr : reinterpret_cast<F>(dlsym(lib, name));
}

// One lazily loaded library, named by a tag type with `static constexpr const char* kSoname` and
// `kPackage` (the Debian package to install when it is missing): opened once, on first use.
template <typename Lib>
void* library() {
  static void* const lib = openLibrary(Lib::kSoname, Lib::kPackage);
  return lib;
}

// The function `name` of the library `Lib` as type F; nullptr when either is missing.
template <typename Lib, typename F>
F resolve(const char* name) {
  return resolveIn<F>(library<Lib>(), name);
}

}  // namespace mcpdb::lazy

// In a forwarder: `real` is the library's own function `name`, resolved once (nullptr when the
// library could not be loaded; each forwarder then answers as the library does on failure).
#define MCPDB_LAZY_REAL(Lib, name) \
  static const auto real = ::mcpdb::lazy::resolve<Lib, decltype(&(name))>(#name)
