#pragma once
// The `postgres:` allowlist section, in the shape of Google MCP Toolbox's tools.yaml where it fits:
//
//   postgres:
//     sources:                 # optional; default: one source `default` (POSTGRES_DSN, or
//                              # PGHOST/PGUSER/PGDATABASE with MCPDB_PG_IAM_AUTH and AWS_REGION)
//       reports: {dsn_env: REPORTS_PG_DSN, iam_auth, sslmode, sslrootcert}
//     pool: {size, connect_timeout_ms, statement_timeout_ms, idle_in_transaction_timeout_ms,
//            iam_auth, sslmode, sslrootcert}   # the last three: defaults for every source
//     tools:
//       <name>: {kind: postgres-sql, source, title, description, statement, parameters: [...],
//                limits, fence}
//     semantic_search: {tool, source, table, id/title/text columns, metadata_columns,
//                       vector_column, distance, k_default, k_max, max_query_length, model_table,
//                       filters, limits}
//
// `source:` names one of `sources` (config/sources.hpp); it may be left out when there is one.
//
// Parsed and validated completely (guardrail verdict, placeholders vs parameters, identifiers,
// types, ranges, unknown keys); every problem is reported with file:line:key.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/fence.hpp"
#include "common/limits.hpp"
#include "config/node.hpp"
#include "config/section.hpp"
#include "engines/postgres/proof.hpp"
#include "engines/sql/param_spec.hpp"
#include "protocol/pattern.hpp"

namespace mcpdb::postgres {

// Parameters are the SQL engines' shared kit (engines/sql/param_spec.hpp).
using sql::finalizeScalar;
using sql::ParamSpec;
using sql::ScalarSpec;
using sql::ScalarType;
using sql::scalarTypeName;

inline constexpr std::string_view kDefaultDsnEnv = "POSTGRES_DSN";

// A database the engine reads, by the name tools use. A declared source reads its DSN only from
// its `dsn_env` variable (the file holds no secrets); its TLS and IAM settings default to the
// pool's.
struct Source {
  std::string name;
  std::string dsn_env;
  std::optional<bool> iam_auth;  // unset: postgres.pool.iam_auth, then MCPDB_PG_IAM_AUTH
  std::string sslmode;           // empty: postgres.pool.sslmode
  std::string sslrootcert;       // empty: postgres.pool.sslrootcert
  // The one source of a section without `sources:`: POSTGRES_DSN, or with it unset PGHOST,
  // PGUSER, PGDATABASE in RDS IAM mode (conninfo.hpp), and messages as before sources existed.
  bool implicit = false;
};

// The source `default` of a section without `sources:`.
Source implicitSource();

struct QueryTool {
  std::string name;
  std::string source;  // empty: the only source
  std::string title;
  std::string description;
  std::string statement;
  std::vector<ParamSpec> parameters;  // parameters[i] is $(i+1)
  // False when a parameter could not be read: its position is unknown, so the placeholder count
  // is not compared (the parameter's own error says what is wrong).
  bool parameters_complete = true;
  Limits limits;
  Fence fence = Fence::Inherit;  // untrusted-data fencing of its results (`fence:`)
};

enum class Distance { Cosine, L2, InnerProduct };

struct SearchFilter {
  std::string name;    // argument name
  std::string column;  // validated identifier
  std::string description;
  enum class Op {
    Equals,
    Contains
  } op = Op::Equals;  // Contains: the value is an element of an array column
  ScalarSpec scalar;
};

struct SemanticSearch {
  bool enabled = false;
  std::string tool = "semantic_search_documents";
  std::string source;  // empty: the only source
  std::string title;
  std::string description;
  std::vector<std::string> table;  // [schema,] table: validated identifiers
  std::string id_column = "id";
  std::string title_column;  // optional
  std::string text_column = "body";
  std::vector<std::string> metadata_columns;
  std::string vector_column = "embedding";
  Distance distance = Distance::Cosine;
  std::uint32_t k_default = 5;
  std::uint32_t k_max = 20;
  std::uint32_t max_query_length = 1000;
  std::vector<std::string>
      model_table;  // [schema,] table with (model_id text, dimension int); empty: no check
  std::vector<SearchFilter> filters;
  Limits limits;
  // Built from the above at configure time; checked by the guardrail then and before each call.
  std::string statement;
  std::string model_statement;
};

struct PoolSettings {
  std::uint32_t size = 4;
  std::chrono::milliseconds connect_timeout{5000};
  // Server-side ceiling, set at connect time; each call is also bounded by its own deadline.
  std::chrono::milliseconds statement_timeout{30000};
  std::chrono::milliseconds idle_in_transaction_timeout{10000};
  std::optional<bool> iam_auth;  // unset: environment MCPDB_PG_IAM_AUTH decides
  std::string sslmode;           // empty: the DSN's (IAM forces verify-full)
  std::string sslrootcert;       // empty: environment MCPDB_PG_SSLROOTCERT
  // Each connection prepares a statement the first time it runs it and executes it by name from
  // then on, so the server parses and plans it once per connection rather than once per call.
  // Off for a pooler that cannot keep named statements across transactions (PgBouncer in
  // transaction mode before 1.21, or without max_prepared_statements).
  bool prepared_statements = true;
  // PostgreSQL's JIT compiler, off by default: it spends 100-400 ms compiling any statement whose
  // estimated cost passes jit_above_cost, far more than the small allowlisted queries (and the
  // read-only proof's catalog query) take to run. Turn it on for heavy analytical tools.
  bool jit = false;
  // postgres.search_path: set on every connection, with pg_temp appended last (so a temporary
  // object is never found first); the read-only proof resolves names over the same path.
  std::vector<std::string> search_path = {"pg_catalog", "public"};
};

struct Settings {
  bool optional =
      false;  // `optional: true`: start without this engine when its environment is unset
  bool present = false;
  Limits defaults;  // the server-wide limits: tools start from them and may only lower them
  std::vector<Source> sources;  // after parsing: at least one (implicitSource() when none declared)
  PoolSettings pool;
  proof::Settings proof;  // search_path mirrors pool.search_path
  std::vector<QueryTool> tools;
  SemanticSearch search;

  // The source named `wanted` (empty: the only one); nullptr when there is none such.
  const Source* sourceOf(std::string_view wanted) const;
};

// What one source serves: `all` with only the tools (and the search tool) that read `source`,
// and `sources` = {source}. Its Runtime applies the source's TLS and IAM settings to the pool.
Settings settingsFor(const Settings& all, const Source& source);

// The pool settings of `source`: its iam_auth, sslmode and sslrootcert over the pool's.
PoolSettings poolFor(const PoolSettings& pool, const Source& source);

// The semantic-search SQL, generated from validated, quoted identifiers only.
std::string buildSearchStatement(const SemanticSearch& search);

// The section's declaration (config/section.hpp): parsing, JSON Schema and reference from one
// place. Cross-key rules (tool names unique regardless of case, statements judged by the guard,
// the generated search statement) are its checks.
const config::Section<Settings>& settingsSection();

// Parses the section; problems go to section.diag(). `defaults` are the server-wide limits (tools
// may only lower them).
Settings parseSettings(const config::Node& section, const Limits& defaults);

}  // namespace mcpdb::postgres
