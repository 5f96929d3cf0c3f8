#include "engines/mysql/params.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/utf8.hpp"

namespace mcpdb::mysql {
namespace {

Error badParam(std::size_t index, std::string_view why) {
  return makeError(Code::InvalidArgument,
                   "parameter " + std::to_string(index + 1) + " " + std::string(why));
}

// Fills `bind` for one parameter; the buffer points into the parameter itself.
Status bindOne(const Param& p, std::size_t index, MYSQL_BIND& bind, unsigned long& length) {
  return std::visit(
      [&](const auto& v) -> Status {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          bind.buffer_type = MYSQL_TYPE_NULL;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          bind.buffer_type = MYSQL_TYPE_LONGLONG;
          bind.buffer = const_cast<std::int64_t*>(&v);
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(v)) return badParam(index, "is not a finite number");
          bind.buffer_type = MYSQL_TYPE_DOUBLE;
          bind.buffer = const_cast<double*>(&v);
        } else {
          const std::string& s = [&]() -> const std::string& {
            if constexpr (std::is_same_v<T, Bytes>)
              return v.data;
            else
              return v;
          }();
          if constexpr (std::is_same_v<T, std::string>) {
            if (!isValidUtf8(s))
              return badParam(index, "is text that is not valid UTF-8 (send it as bytes)");
          }
          bind.buffer_type = std::is_same_v<T, Bytes> ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
          bind.buffer = const_cast<char*>(s.data());
          bind.buffer_length = static_cast<unsigned long>(s.size());
          length = static_cast<unsigned long>(s.size());
          bind.length = &length;
        }
        return {};
      },
      p);
}

}  // namespace

Result<ParamBinds> ParamBinds::make(std::span<const Param> params) {
  ParamBinds out;
  out.binds_.resize(params.size());
  out.lengths_.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    std::memset(&out.binds_[i], 0, sizeof(MYSQL_BIND));
    if (auto s = bindOne(params[i], i, out.binds_[i], out.lengths_[i]); !s) return s.error();
  }
  return out;
}

}  // namespace mcpdb::mysql
