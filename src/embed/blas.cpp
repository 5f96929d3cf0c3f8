#include "embed/blas.hpp"

#include <dlfcn.h>

#include <string>

#ifndef MCPDB_OPENBLAS_DIR
#define MCPDB_OPENBLAS_DIR ""
#endif

namespace mcpdb::embed::blas {
namespace {

constexpr const char* kSoname = "libopenblas.so.0";

struct Api {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
  std::string error;
};

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

Api open() {
  Api api;
  // The soname first (the system's choice, e.g. Debian's alternatives), then the directory the
  // build found it in. The handle is never closed: OpenBLAS owns threads until exit.
  void* lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr && *MCPDB_OPENBLAS_DIR != '\0') {
    lib = dlopen((std::string(MCPDB_OPENBLAS_DIR) + "/" + kSoname).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (lib == nullptr) {
    const char* why = dlerror();
    api.error = std::string("cannot load ") + kSoname +
                " (install libopenblas0): " + (why != nullptr ? why : "not found");
    return api;
  }
  api.sgemm = symbol<decltype(api.sgemm)>(lib, "cblas_sgemm");
  api.set_num_threads = symbol<decltype(api.set_num_threads)>(lib, "openblas_set_num_threads");
  if (api.sgemm == nullptr || api.set_num_threads == nullptr) {
    api.sgemm = nullptr;
    api.error = std::string(kSoname) + " has no cblas_sgemm / openblas_set_num_threads";
  }
  return api;
}

const Api& api() {
  static const Api instance = open();
  return instance;
}

}  // namespace

Status load(int threads) {
  const Api& a = api();
  if (a.sgemm == nullptr) return makeError(Code::FailedPrecondition, a.error);
  if (threads > 0) a.set_num_threads(threads);
  return {};
}

void sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k,
           float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c,
           int ldc) {
  api().sgemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace mcpdb::embed::blas
