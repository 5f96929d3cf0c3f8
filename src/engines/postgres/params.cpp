#include "engines/postgres/params.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "common/json_integer.hpp"
#include "engines/postgres/schema_gen.hpp"
#include "protocol/pattern.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::postgres {

std::vector<const char*> BoundParams::pointers() const {
  std::vector<const char*> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

Oid scalarOid(ScalarType t) {
  switch (t) {
    case ScalarType::String: return oid::kText;
    case ScalarType::Integer: return oid::kInt8;
    case ScalarType::Float: return oid::kFloat8;
    case ScalarType::Boolean: return oid::kBool;
    case ScalarType::Date: return oid::kDate;
    case ScalarType::Timestamp: return oid::kTimestamptz;
    case ScalarType::Uuid: return oid::kUuid;
  }
  return oid::kText;
}

Oid arrayOid(ScalarType t) {
  switch (t) {
    case ScalarType::String: return oid::kTextArray;
    case ScalarType::Integer: return oid::kInt8Array;
    case ScalarType::Float: return oid::kFloat8Array;
    case ScalarType::Boolean: return oid::kBoolArray;
    case ScalarType::Date: return oid::kDateArray;
    case ScalarType::Timestamp: return oid::kTimestamptzArray;
    case ScalarType::Uuid: return oid::kUuidArray;
  }
  return oid::kTextArray;
}

Result<std::string> encodeScalar(const ScalarSpec& spec, const Json& value,
                                 const std::string& path) {
  if (auto st = sql::checkScalar(spec, value, path); !st) return st.error();
  switch (spec.type) {
    case ScalarType::Integer: {
      // A JSON integer or an integral float such as 5.0, as the schema reads it.
      if (auto n = integerValue(value)) return std::to_string(*n);
      return makeError(Code::InvalidArgument,
                       path + (value.is_number_unsigned() ? ": must fit in a 64-bit signed integer"
                                                          : ": must be an integer"));
    }
    case ScalarType::Float: {
      const double d = value.get<double>();
      if (!std::isfinite(d))
        return makeError(Code::InvalidArgument, path + ": must be a finite number");
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      return std::string(buf);
    }
    case ScalarType::Boolean: return std::string(value.get<bool>() ? "true" : "false");
    default: {
      const std::string& s = value.get_ref<const std::string&>();
      // libpq text parameters end at the first NUL byte: a value containing one would be cut short.
      if (s.find('\0') != std::string::npos) {
        return makeError(Code::InvalidArgument, path + ": must not contain NUL characters");
      }
      return s;
    }
  }
}

Result<std::string> encodeArray(const ScalarSpec& item, const Json& value,
                                const std::string& path) {
  if (!value.is_array()) return makeError(Code::InvalidArgument, path + ": must be an array");
  std::string out = "{";
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto e = encodeScalar(item, value[i], path + "[" + std::to_string(i) + "]");
    if (!e) return e.error();
    if (i > 0) out += ',';
    out += '"';
    for (char c : *e) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

Result<BoundParams> bindArguments(const std::vector<ParamSpec>& params, const Json& arguments) {
  auto selected = sql::selectArguments(params, arguments);
  if (!selected) return selected.error();
  BoundParams out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& p = params[i];
    const std::string path = "arguments." + p.name;
    const Json* value = (*selected)[i];
    const Oid type = p.is_array ? arrayOid(p.scalar.type) : scalarOid(p.scalar.type);
    if (value == nullptr) {
      out.add(std::nullopt, type);
      continue;
    }
    if (p.is_array) {
      if (!value->is_array()) return makeError(Code::InvalidArgument, path + ": must be an array");
      if (value->size() < p.min_items) {
        return makeError(Code::InvalidArgument,
                         path + ": must have at least " + std::to_string(p.min_items) + " items");
      }
      if (value->size() > p.max_items) {
        return makeError(Code::InvalidArgument,
                         path + ": must have at most " + std::to_string(p.max_items) + " items");
      }
      auto e = encodeArray(p.scalar, *value, path);
      if (!e) return e.error();
      out.add(std::move(*e), type);
    } else {
      auto e = encodeScalar(p.scalar, *value, path);
      if (!e) return e.error();
      out.add(std::move(*e), type);
    }
  }
  return out;
}

}  // namespace mcpdb::postgres
