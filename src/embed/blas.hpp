#pragma once
// OpenBLAS, loaded with dlopen when the local model is first loaded. Linking it would cost every
// start of the server (most of which never embed) ~14 000 symbol relocations, libgfortran and
// libquadmath, and OpenBLAS's thread pool; see docs/BENCHMARKS.md "Startup profile".

#include <cblas.h>

#include "common/result.hpp"

namespace mcpdb::embed::blas {

// Loads libopenblas once per process (thread-safe; later calls return the first outcome) and,
// when threads > 0, sets its thread count. FailedPrecondition names the library it looked for.
Status load(int threads = 0);

// cblas_sgemm from the loaded library. Precondition: load() succeeded.
void sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k,
           float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c,
           int ldc);

}  // namespace mcpdb::embed::blas
