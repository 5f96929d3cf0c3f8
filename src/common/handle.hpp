#pragma once
// Owned C handles: a std::unique_ptr with a stateless deleter per C type, e.g.
//   using PgConnPtr = mcpdb::Owned<PGconn, PQfinish>;
// Move-only by construction; no C handle is ever held by a raw pointer that owns it.

#include <memory>

namespace mcpdb {

template <auto FreeFn>
struct CDeleter {
  template <class T>
  void operator()(T* p) const noexcept {
    if (p != nullptr) FreeFn(p);
  }
};

template <class T, auto FreeFn>
using Owned = std::unique_ptr<T, CDeleter<FreeFn>>;

}  // namespace mcpdb
