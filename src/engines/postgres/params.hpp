#pragma once
// Tool arguments -> libpq parameters. Every value is bound by the extended protocol as text with
// an explicit type OID; nothing from an argument is ever spliced into SQL text.

#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "common/result.hpp"
#include "engines/postgres/config.hpp"

namespace mcpdb::postgres {

using Oid = unsigned int;

// Built-in type OIDs used for binding and result mapping (pg_type.dat, stable across versions).
namespace oid {
inline constexpr Oid kBool = 16, kBytea = 17, kChar = 18, kName = 19, kInt8 = 20, kInt2 = 21,
                     kInt4 = 23, kText = 25, kOid = 26, kJson = 114, kFloat4 = 700, kFloat8 = 701,
                     kBpchar = 1042, kVarchar = 1043, kDate = 1082, kTime = 1083, kTimestamp = 1114,
                     kTimestamptz = 1184, kInterval = 1186, kTimetz = 1266, kNumeric = 1700,
                     kUuid = 2950, kJsonb = 3802;
inline constexpr Oid kBoolArray = 1000, kInt8Array = 1016, kTextArray = 1009, kFloat8Array = 1022,
                     kDateArray = 1182, kTimestamptzArray = 1185, kUuidArray = 2951;
}  // namespace oid

// Parameters ready for PQexecParams / PQsendQueryParams (text format).
struct BoundParams {
  std::vector<std::optional<std::string>> values;  // nullopt = SQL NULL
  std::vector<Oid> types;                          // 0 = let the server infer (e.g. $1::vector)

  void add(std::optional<std::string> value, Oid type) {
    values.push_back(std::move(value));
    types.push_back(type);
  }
  // Pointers into `values`, valid while this object lives unchanged.
  std::vector<const char*> pointers() const;
};

Oid scalarOid(ScalarType t);
Oid arrayOid(ScalarType t);

// Converts one checked argument to its text form. InvalidArgument (naming `path`, never the value)
// when the JSON does not fit the spec.
Result<std::string> encodeScalar(const ScalarSpec& spec, const Json& value,
                                 const std::string& path);
// A PostgreSQL array literal {"a","b"}: every element double-quoted with \ and " escaped.
Result<std::string> encodeArray(const ScalarSpec& item, const Json& value, const std::string& path);

// Binds the arguments of a query tool: each declared parameter in order ($1..$n), defaults
// applied, absent optional parameters as NULL, unknown arguments refused.
Result<BoundParams> bindArguments(const std::vector<ParamSpec>& params, const Json& arguments);

}  // namespace mcpdb::postgres
