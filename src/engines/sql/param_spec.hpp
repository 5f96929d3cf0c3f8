#pragma once
// The parameters of an allowlisted statement, shared by the engines that run SQL (Postgres,
// MySQL): their config keys (`parameters: [{name, type, description, required, default, min, max,
// min_length, max_length, pattern, enum, items, min_items, max_items}]`), validation, and the JSON
// Schema agents see. How a value is bound is the engine's (libpq text with a type OID; the MySQL
// binary protocol); what a value may be is decided here, once.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/result.hpp"
#include "config/node.hpp"
#include "protocol/pattern.hpp"

namespace mcpdb::sql {

enum class ScalarType { String, Integer, Float, Boolean, Date, Timestamp, Uuid };

// "string", "integer", ...
std::string_view scalarTypeName(ScalarType t);
// The type named in a config ("string", ...; not "array"), or nullopt.
std::optional<ScalarType> scalarTypeFrom(const std::string& s);

// The constraints of one scalar value (a parameter, or the items of an array parameter).
struct ScalarSpec {
  ScalarType type = ScalarType::String;
  std::optional<std::int64_t> min_int, max_int;  // integer
  std::optional<double> min_num, max_num;        // float
  std::optional<std::uint32_t> min_length;       // string
  std::uint32_t max_length = 1024;               // string; bounded by default
  std::optional<std::string> pattern;            // string, RE2 syntax, search semantics
  std::vector<std::string> enum_values;          // string
  // Compiled once at configure time (finalizeScalar) so calls do not recompile: the schema without
  // its pattern, and the pattern itself.
  std::shared_ptr<const Json> check_schema;
  protocol::CompiledPattern compiled_pattern;
};

// Fills check_schema / compiled_pattern (call after the constraints are set).
void finalizeScalar(ScalarSpec& spec);

struct ParamSpec {
  std::string name;
  std::string description;
  bool is_array = false;
  ScalarSpec scalar;              // the value, or each item of an array
  std::uint32_t min_items = 0;    // arrays
  std::uint32_t max_items = 100;  // arrays; bounded by default
  bool required = true;
  std::optional<Json> default_value;  // bound when the argument is absent (implies not required)
};

// A parameter or argument name: a lower-case identifier ([a-z_][a-z0-9_]*, at most 63).
bool isParamName(std::string_view s);

// Reads the constraints of a scalar (the parameter itself, an array's items, or a filter);
// `owner` names it in messages ("parameter 'id'").
ScalarSpec parseScalar(const config::Node& node, ScalarType type, const std::string& owner);

// Reads a `parameters:` list. `complete` is false when a parameter could not be parsed (its
// position is then unknown, so a placeholder count cannot be compared with it).
std::vector<ParamSpec> parseParams(const config::Node& node, bool& complete);
// The `parameters:` key's JSON Schema and reference lines (the keys parseParams accepts).
Json paramsConfigSchema(const std::string& doc);
std::vector<std::string> paramsConfigReference();

// The schema of one scalar value (no description).
Json scalarSchema(const ScalarSpec& spec);
// The schema of one parameter, with its description and default.
Json paramSchema(const ParamSpec& param);
// {type: object, properties, required, additionalProperties: false} over the parameters.
Json paramsInputSchema(const std::vector<ParamSpec>& params);

// The argument each declared parameter takes, in order: the agent's value, else the parameter's
// default, else nullptr (SQL NULL) for an optional parameter. InvalidArgument for an argument no
// parameter declares or a missing required one (naming the parameter, never a value).
Result<std::vector<const Json*>> selectArguments(const std::vector<ParamSpec>& params,
                                                 const Json& arguments);
// Re-checks one value against its spec (the registry validated the arguments already): type,
// bounds, lengths, enum, format, then the pattern compiled at configure time.
Status checkScalar(const ScalarSpec& spec, const Json& value, const std::string& path);

// Reports at `key` when it is present, else at its parent's line (a missing YAML node has no mark).
void errorAt(const config::Node& parent, std::string_view key, const std::string& message);
// "find_user" -> "Find user": the default title of a tool.
std::string titleFromName(const std::string& name);

// Tool names of a section, folded to lower case (unique regardless of case) -> as written.
using ToolNames = std::map<std::string, std::string>;
// Records `name`, or reports at `where` the name it clashes with (exactly or in case only).
bool claimToolName(ToolNames& names, const std::string& name, const config::Node& where);

}  // namespace mcpdb::sql
