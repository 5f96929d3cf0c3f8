#pragma once
// The `mysql:` allowlist section, declared once (config/section.hpp), in the shape of the
// `postgres:` section and Google MCP Toolbox's tools.yaml where it fits:
//
//   mysql:
//     sources:                       # optional; default: one source `default` from MYSQL_DSN
//       default: {dsn_env: MYSQL_DSN}
//       reports: {dsn_env: REPORTS_MYSQL_DSN, iam_auth: true}   # RDS IAM token as password
//     pool: {size: 4}
//     limits: {max_rows, max_bytes, timeout_ms}
//     allowed_functions: [shop.price_with_tax]   # stored functions allowlisted by name
//     tools:
//       <name>: {kind: mysql-sql, source, title, description, statement, parameters: [...],
//                limits, fence}
//
// Every statement is judged by the MySQL-dialect guard (guard.hpp) when the config is read. A
// function it calls that is not a known built-in, and every view it reads, is vetted on the live
// server before the tool first runs: allowed when listed in `allowed_functions` or when its
// definition passes the guard (routines.hpp). Placeholders are `?`, one per declared parameter.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/fence.hpp"
#include "common/limits.hpp"
#include "config/node.hpp"
#include "config/section.hpp"
#include "config/sources.hpp"
#include "engines/mysql/guard.hpp"
#include "engines/sql/param_spec.hpp"

namespace mcpdb::mysql {

inline constexpr std::string_view kDefaultSource = config::kDefaultSourceName;
inline constexpr std::string_view kDefaultDsnEnv = "MYSQL_DSN";

// A database the engine reads, by the name tools use; its DSN comes from an environment variable
// (never from the file: the file holds no secrets).
struct Source {
  std::string name;
  std::string dsn_env;
  // RDS IAM authentication (also turned on by the DSN's ?iam=true): a fresh token per connection
  // as the password, over TLS that verifies the server (dsn.hpp: enableIam).
  bool iam_auth = false;
};

struct PoolSettings {
  std::uint32_t size = 4;  // connections per source
};

struct QueryTool {
  std::string name;
  std::string kind = "mysql-sql";
  std::string source;  // empty: the only source
  std::string title;
  std::string description;
  std::string statement;
  std::vector<sql::ParamSpec> parameters;  // parameters[i] is the i-th `?`
  // False when a parameter could not be read: its position is unknown, so the placeholder count
  // is not compared (the parameter's own error says what is wrong).
  bool parameters_complete = true;
  Limits limits;
  Fence fence = Fence::Inherit;
  // Filled when the statement is judged: the functions it calls that are not known built-ins,
  // and the relations it reads (a view may call a stored function). Both are vetted on the live
  // server before the tool first runs (routines.hpp).
  std::vector<guard::Name> called_functions;
  std::vector<guard::Name> relations;
};

struct Settings {
  bool optional =
      false;  // `optional: true`: start without this engine when its environment is unset
  Limits limits;
  PoolSettings pool;
  std::vector<Source> sources;
  std::vector<std::string> allowed_functions;
  std::vector<QueryTool> tools;

  // The source a tool runs on (its `source:`, or the only one); nullptr when unknown.
  const Source* sourceOf(const QueryTool& tool) const;
};

// The section's declaration: parsing, JSON Schema and reference from one place.
const config::Section<Settings>& settingsSection();

// Parses the section (absent: no tools, one default source). `defaults` are the server-wide
// limits (the section and its tools may only lower them).
Settings parseSettings(const config::Node& section, const Limits& defaults);

// The environment variable names every source reads (for enabled() and messages).
std::vector<std::string> sourceEnvNames(const Settings& settings);

}  // namespace mcpdb::mysql
