#pragma once
// Typed statement parameters bound for the binary protocol (MYSQL_BIND). Text must be valid
// UTF-8 (it is sent in utf8mb4 and the server would reject or mangle anything else); bytes go as
// a BLOB, which the server keeps in the binary character set, so any byte (NUL included)
// round-trips.

#include <span>
#include <vector>

#include <mysql.h>

#include "common/result.hpp"
#include "engines/mysql/client_types.hpp"

namespace mcpdb::mysql {

class ParamBinds {
 public:
  // InvalidArgument naming the parameter's position (never its value) for text that is not
  // UTF-8 or a double that is not finite.
  static Result<ParamBinds> make(std::span<const Param> params);

  // The binds point into `params`, which must outlive this object and stay unchanged.
  MYSQL_BIND* data() { return binds_.empty() ? nullptr : binds_.data(); }
  std::size_t size() const { return binds_.size(); }

 private:
  std::vector<MYSQL_BIND> binds_;
  std::vector<unsigned long> lengths_;
};

}  // namespace mcpdb::mysql
