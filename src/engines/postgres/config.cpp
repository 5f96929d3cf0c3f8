// One file, over 600 lines: the `postgres:` section is declared once here (config::Section),
// with its sources, pool, proof, semantic search and tool keys, and the checks that relate them;
// a declaration split over files would make the generated reference and schema harder to audit.
#include "engines/postgres/config.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>

#include "config/config.hpp"
#include "config/sources.hpp"
#include "engines/kit/module.hpp"
#include "engines/postgres/identifiers.hpp"
#include "engines/postgres/schema_gen.hpp"
#include "engines/postgres/guard/guard.hpp"
#include "protocol/pattern.hpp"
#include "protocol/schema.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::postgres {

namespace {

using config::Node;
using sql::claimToolName;
using sql::errorAt;
using sql::isParamName;
using sql::parseParams;
using sql::parseScalar;
using sql::scalarTypeFrom;
using sql::titleFromName;
using sql::ToolNames;

// Runs the guardrail and compares its placeholders with the declared parameter count.
void checkStatement(const Node& at, const std::string& statement, std::size_t declared,
                    bool compare_count = true) {
  const guard::Verdict v = guard::checkTemplate(statement);
  if (!v.allowed) {
    // The statement is the operator's own text, so the parser's words (which quote it) are shown.
    std::string message = v.rule == guard::Rule::ParseError && !v.detail.empty()
                              ? v.detail + " (line " + std::to_string(v.line) + ", column " +
                                    std::to_string(v.column) + " of the statement)"
                              : v.message;
    at.error("refused by the SQL guard (" + std::string(guard::ruleId(v.rule)) + "): " + message);
    return;
  }
  const std::size_t used = v.placeholders.size();
  if (compare_count && used != declared) {
    at.error("uses " + std::to_string(used) + " placeholder" + (used == 1 ? "" : "s") +
             (used == 0 ? "" : " ($1..$" + std::to_string(used) + ")") + " but " +
             std::to_string(declared) + " parameter" + (declared == 1 ? " is" : "s are") +
             " declared");
  }
}

}  // namespace

// The statement text is generated here, from validated identifiers only; the guardrail checks it
// like any operator template.
std::string buildSearchStatement(const SemanticSearch& s) {
  const std::string vec = quoteIdentifier(s.vector_column);
  const std::string op = s.distance == Distance::Cosine ? "<=>"
                         : s.distance == Distance::L2   ? "<->"
                                                        : "<#>";
  const std::string dist = vec + " " + op + " $1::vector";
  const std::string score =
      s.distance == Distance::Cosine ? "1 - (" + dist + ")" : "-(" + dist + ")";
  std::string sql = "SELECT coalesce(" + quoteIdentifier(s.id_column) + "::text, '') AS id";
  if (!s.title_column.empty())
    sql += ", coalesce(" + quoteIdentifier(s.title_column) + "::text, '') AS title";
  sql += ", coalesce(" + quoteIdentifier(s.text_column) + "::text, '') AS text";
  if (s.metadata_columns.empty()) {
    sql += ", '{}'::jsonb AS metadata";
  } else {
    sql += ", jsonb_build_object(";
    for (std::size_t i = 0; i < s.metadata_columns.size(); ++i) {
      sql += (i == 0 ? "'" : ", '") + s.metadata_columns[i] + "', " +
             quoteIdentifier(s.metadata_columns[i]);
    }
    sql += ") AS metadata";
  }
  sql += ", (" + score + ")::float8 AS score FROM " + quoteQualified(s.table) + " WHERE " + vec +
         " IS NOT NULL";
  for (std::size_t i = 0; i < s.filters.size(); ++i) {
    const std::string ph = "$" + std::to_string(i + 3);
    const std::string col = quoteIdentifier(s.filters[i].column);
    if (s.filters[i].op == SearchFilter::Op::Equals) {
      sql += " AND (";
      sql += ph;
      sql += " IS NULL OR ";
      sql += col;
      sql += " = ";
      sql += ph;
      sql += ")";
    } else {
      sql += " AND (";
      sql += ph;
      sql += " IS NULL OR ";
      sql += ph;
      sql += " = ANY(";
      sql += col;
      sql += "))";
    }
  }
  sql += " ORDER BY " + dist + " LIMIT $2";
  return sql;
}

namespace {

// --- Readers for keys whose value is read by code of its own (config::Section::custom) ---

// libpq's sslmode values, as config::Section choices (the pool's and each source's).
std::vector<std::pair<std::string, std::string>> sslModes() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* m : {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}) {
    out.emplace_back(m, m);
  }
  return out;
}

Json integerSchema(std::int64_t min, std::int64_t max) {
  return {{"type", "integer"}, {"minimum", min}, {"maximum", max}};
}

Json stringsSchema() {
  return {{"type", "array"}, {"items", {{"type", "string"}}}};
}

// A duration key in milliseconds (`<name>_ms`) or seconds, read into a chrono member.
template <class T, class D>
std::function<bool(T&, const Node&)> durationReader(D T::*member, std::int64_t min,
                                                    std::int64_t max) {
  return [member, min, max](T& out, const Node& n) {
    auto v = n.asInteger(min, max);
    if (v) out.*member = D(*v);
    return v.has_value();
  };
}

template <class T>
std::function<bool(T&, const Node&)> limitsReader(Limits T::*member) {
  return [member](T& out, const Node& n) {
    const std::size_t before = n.diag().errors().size();
    out.*member = config::parseLimits(n, out.*member, &(out.*member));
    return n.diag().errors().size() == before;
  };
}

// Reported in the key's own check (it needs the parsed value), so the key itself reads nothing.
template <class T>
std::function<bool(T&, const Node&)> readInCheck() {
  return [](T&, const Node&) { return true; };
}

// " (each: `a`, `b`)": the keys of a list's entries, for the reference line of the list.
template <class U>
std::string entryKeys(const config::Section<U>& entry) {
  std::string keys;
  for (const auto& f : entry.fields()) keys += (keys.empty() ? "`" : ", `") + f.key + "`";
  return " (each: " + keys + ")";
}

std::string columnProblem(std::string_view name) {
  return isSafeIdentifier(name) ? "" : "must be a lower-case column name ([a-z_][a-z0-9_]*)";
}

std::string notEmpty(std::string_view v) {
  return v.empty() ? "must not be empty" : "";
}

// `table` or `schema.table`, read into a member holding its parts.
std::function<bool(SemanticSearch&, const Node&)> qualifiedReader(
    std::vector<std::string> SemanticSearch::*member) {
  return [member](SemanticSearch& s, const Node& n) {
    auto text = n.asString();
    if (!text) return false;
    auto parts = parseQualifiedName(*text);
    if (!parts) {
      n.error("must be table or schema.table, each a lower-case identifier ([a-z_][a-z0-9_]*)");
      return false;
    }
    s.*member = std::move(*parts);
    return true;
  };
}

// --- pool ---

const config::Section<PoolSettings>& poolSection() {
  using P = PoolSettings;
  static const auto s =
      config::Section<P>("connections to the server and the session settings each one carries")
          .integer("size", &P::size, 1, 256, "connections kept open at most (default 4)")
          .custom(
              "connect_timeout_ms", "how long opening a connection may take (default 5000)",
              [] { return integerSchema(100, 120000); }, config::kOptional,
              durationReader(&P::connect_timeout, 100, 120000))
          .custom(
              "statement_timeout_ms",
              "the server-side statement_timeout of every connection (default: the server's "
              "limits.timeout_ms); each call is also bounded by its own deadline",
              [] { return integerSchema(10, 3600000); }, config::kOptional,
              durationReader(&P::statement_timeout, 10, 3600000))
          .custom(
              "idle_in_transaction_timeout_ms",
              "idle_in_transaction_session_timeout of every connection (default 10000)",
              [] { return integerSchema(100, 3600000); }, config::kOptional,
              durationReader(&P::idle_in_transaction_timeout, 100, 3600000))
          .boolean("iam_auth", &P::iam_auth,
                   "RDS IAM authentication: a fresh token per connection as the password, over TLS "
                   "verify-full (default: MCPDB_PG_IAM_AUTH)")
          .choice("sslmode", &P::sslmode, sslModes(),
                  "libpq's sslmode (default: the DSN's; IAM forces verify-full)")
          .string("sslrootcert", &P::sslrootcert,
                  "the CA bundle a verify-ca/verify-full connection checks the server against "
                  "(default: MCPDB_PG_SSLROOTCERT)",
                  config::kOptional, notEmpty)
          .boolean("prepared_statements", &P::prepared_statements,
                   "prepare each statement once per connection and run it by name (default true; "
                   "off for a pooler that cannot keep named statements)")
          .boolean("jit", &P::jit,
                   "PostgreSQL's JIT compiler (default false: it costs more than small queries "
                   "take)")
          .check([](P& p, const Node& node) {
            if (p.iam_auth.value_or(false) && !p.sslmode.empty() && p.sslmode != "verify-full") {
              node.child("sslmode").error("must be verify-full (or unset) when iam_auth is true");
              return false;
            }
            return true;
          });
  return s;
}

// --- sources ---

const config::Section<Source>& sourceSection() {
  static const auto s =
      config::Section<Source>("a database the tools read")
          .entryNoun("source")
          .string("dsn_env", &Source::dsn_env,
                  "the environment variable holding its DSN (postgresql://user:password@host/db "
                  "or key=value pairs); never the DSN itself",
                  config::kRequired, config::envNameProblem)
          .boolean("iam_auth", &Source::iam_auth,
                   "RDS IAM authentication for this source (default: postgres.pool's)")
          .choice("sslmode", &Source::sslmode, sslModes(),
                  "libpq's sslmode for this source (default: postgres.pool's)")
          .string("sslrootcert", &Source::sslrootcert,
                  "the CA bundle for this source (default: postgres.pool's)", config::kOptional,
                  notEmpty);
  return s;
}

// A source in RDS IAM mode connects with verify-full: an sslmode saying otherwise (its own, or the
// pool's it inherits) is a mistake.
bool checkSourceTls(const Settings& st, const Node& node) {
  bool ok = true;
  for (const Source& src : st.sources) {
    const PoolSettings p = poolFor(st.pool, src);
    if (src.implicit || !p.iam_auth.value_or(false) || p.sslmode.empty() ||
        p.sslmode == "verify-full") {
      continue;
    }
    const Node at = node.child("sources").child(src.name);
    if (!src.sslmode.empty()) {
      at.child("sslmode").error("must be verify-full (or unset) when iam_auth is true");
    } else {
      at.error(
          "uses RDS IAM authentication, which needs sslmode verify-full, but inherits "
          "postgres.pool.sslmode " +
          p.sslmode + ": set this source's sslmode to verify-full");
    }
    ok = false;
  }
  return ok;
}

// Every tool (and the search tool) reads a declared source.
bool resolveToolSources(Settings& st, const Node& node) {
  if (st.sources.empty()) st.sources.push_back(implicitSource());
  bool ok = true;
  const Node tools = node.child("tools");
  for (const QueryTool& t : st.tools) {
    if (config::resolveSource(st.sources, t.source, tools.child(t.name)) == nullptr) ok = false;
  }
  if (st.search.enabled && config::resolveSource(st.sources, st.search.source,
                                                 node.child("semantic_search")) == nullptr) {
    ok = false;
  }
  return ok;
}

// --- search_path ---

// A schema name as it is written in a search_path setting: plain lower-case identifiers only, so
// that it needs no quoting in the connection's options string.
bool plainSchemaName(const std::string& name) {
  if (name.empty() || name.size() > 63 ||
      !(std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// "" when `path` can be pinned on every connection, else the message.
std::string searchPathProblem(const std::vector<std::string>& path) {
  if (path.empty()) {
    return "must name at least one schema (pg_catalog is searched first unless listed)";
  }
  std::set<std::string> seen;
  for (const std::string& schema : path) {
    if (!plainSchemaName(schema)) {
      return "'" + schema +
             "' is not a plain lower-case schema name (letters, digits, underscores)";
    }
    if (schema == "pg_temp" || schema.starts_with("pg_temp_")) {
      return "must not list pg_temp: it is always appended last";
    }
    if (!seen.insert(schema).second) return "lists '" + schema + "' twice";
  }
  return "";
}

bool readSearchPath(Settings& out, const Node& n) {
  auto list = n.asStringList();
  if (!list) return false;
  if (auto p = searchPathProblem(*list); !p.empty()) {
    n.error(p);
    return false;
  }
  out.pool.search_path = std::move(*list);
  return true;
}

// --- proof ---

const config::Section<proof::AllowedFunction>& allowedFunctionSection() {
  using F = proof::AllowedFunction;
  static const auto s =
      config::Section<F>("a function the proof accepts, with why it cannot write")
          .string("function", &F::function,
                  "schema.name (every overload) or schema.name(type, ...)", config::kRequired,
                  [](std::string_view f) {
                    return f.find('.') != std::string_view::npos
                               ? ""
                               : "must be schema-qualified: schema.name (every overload) or "
                                 "schema.name(type, ...)";
                  })
          .string("reason", &F::reason, "why it cannot write (at least 10 characters)",
                  config::kRequired, [](std::string_view r) {
                    return r.size() >= 10
                               ? ""
                               : "must say why the function cannot write (at least 10 characters)";
                  });
  return s;
}

bool readAllowedFunctions(proof::Settings& p, const Node& list) {
  if (!list.isSequence()) {
    list.error("must be a list of {function, reason}");
    return false;
  }
  bool ok = true;
  for (const Node& entry : list.elements()) {
    proof::AllowedFunction f;
    if (allowedFunctionSection().parse(entry, f)) {
      p.allow_functions.push_back(std::move(f));
    } else {
      ok = false;
    }
  }
  return ok;
}

const config::Section<proof::Settings>& proofSection() {
  using P = proof::Settings;
  static const auto s =
      config::Section<P>("the read-only proof of every statement against the catalog")
          .strings("trusted_extensions", &P::trusted_extensions,
                   "extensions whose functions are judged like built-ins (default [vector])")
          .custom(
              "interval_s", "how long a proof is trusted before it is made again (default 300)",
              [] { return integerSchema(10, 86400); }, config::kOptional,
              durationReader(&P::interval, 10, 86400))
          .custom(
              "allow_functions",
              "functions the proof accepts although it cannot see they only read, each with the "
              "reason" +
                  entryKeys(allowedFunctionSection()),
              [] {
                return Json{{"type", "array"}, {"items", allowedFunctionSection().jsonSchema()}};
              },
              config::kOptional, readAllowedFunctions);
  return s;
}

// --- tools ---

// Runs the guardrail on the statement and compares its placeholders with the parameters.
bool checkToolStatement(QueryTool& t, const Node& node) {
  if (t.title.empty()) t.title = titleFromName(t.name);
  if (t.statement.empty()) return true;  // reported as required (or empty) already
  const std::size_t before = node.diag().errors().size();
  checkStatement(node.child("statement"), t.statement, t.parameters.size(), t.parameters_complete);
  return node.diag().errors().size() == before;
}

const config::Section<QueryTool>& toolSection() {
  static const auto s =
      config::Section<QueryTool>("one allowlisted statement, as a tool agents can call")
          .entryNoun("tool")
          .custom(
              "kind", "postgres-sql (the default)",
              [] {
                return Json{{"type", "string"}, {"enum", {"postgres-sql"}}};
              },
              config::kOptional,
              [](QueryTool&, const Node& n) {
                auto k = n.asString();
                if (k && *k != "postgres-sql") n.error("must be postgres-sql");
                return k && *k == "postgres-sql";
              })
          .string("source", &QueryTool::source,
                  "the source it reads (required when there are several)")
          .string("title", &QueryTool::title, "a short human title (default: from the name)")
          .string("description", &QueryTool::description,
                  "what it returns and when to use it, written for an agent", config::kRequired,
                  notEmpty)
          .string("statement", &QueryTool::statement,
                  "one SELECT with $1..$n placeholders, judged by PostgreSQL's own parser",
                  config::kRequired, notEmpty)
          .custom(
              "parameters", "one per placeholder, in order ($1 is the first)",
              [] {
                return sql::paramsConfigSchema("one per placeholder, in order ($1 is the first)");
              },
              config::kOptional,
              [](QueryTool& t, const Node& n) {
                t.parameters = parseParams(n, t.parameters_complete);
                return t.parameters_complete;
              },
              &sql::paramsConfigReference)
          .custom("limits", "rows, bytes and time for this tool (at most the server's)",
                  &config::limitsSchema, config::kOptional, limitsReader(&QueryTool::limits))
          .choice("fence", &QueryTool::fence,
                  {{"auto", Fence::Auto}, {"always", Fence::Always}, {"never", Fence::Never}},
                  "untrusted-data fencing of its results (default: the server's)")
          .check(checkToolStatement);
  return s;
}

// --- semantic_search ---

const std::vector<std::string>& scalarTypeNames() {
  static const std::vector<std::string> names = {"string", "integer",   "float", "boolean",
                                                 "date",   "timestamp", "uuid"};
  return names;
}

// The value constraints of a filter (parseScalar reads them all at once, in the filter's check).
Json filterConstraintSchema(const char* type) {
  return Json{{"type", type}};
}

const config::Section<SearchFilter>& filterSection() {
  using F = SearchFilter;
  static const auto s =
      config::Section<F>("an optional argument that narrows the search to matching rows")
          .string("name", &F::name, "the argument's name", config::kRequired,
                  [](std::string_view n) {
                    return isParamName(n) ? ""
                                          : "must be a lower-case identifier ([a-z_][a-z0-9_]*, "
                                            "at most 63 characters)";
                  })
          .string("column", &F::column, "the column it matches", config::kRequired, columnProblem)
          .custom(
              "type", "the argument's type",
              [] {
                return Json{{"type", "string"}, {"enum", scalarTypeNames()}};
              },
              config::kRequired, readInCheck<F>())
          .string("description", &F::description, "what it filters, written for an agent",
                  config::kRequired)
          .choice("op", &F::op, {{"equals", F::Op::Equals}, {"contains", F::Op::Contains}},
                  "equals (the default) or contains (the value is an element of an array column)")
          .custom(
              "min", "the least value (integer, float)",
              [] { return filterConstraintSchema("number"); }, config::kOptional, readInCheck<F>())
          .custom(
              "max", "the greatest value (integer, float)",
              [] { return filterConstraintSchema("number"); }, config::kOptional, readInCheck<F>())
          .custom(
              "min_length", "the shortest string", [] { return integerSchema(0, 1 << 20); },
              config::kOptional, readInCheck<F>())
          .custom(
              "max_length", "the longest string", [] { return integerSchema(0, 1 << 20); },
              config::kOptional, readInCheck<F>())
          .custom(
              "pattern", "an RE2 pattern the string must match",
              [] { return filterConstraintSchema("string"); }, config::kOptional, readInCheck<F>())
          .custom("enum", "the only values allowed", &stringsSchema, config::kOptional,
                  readInCheck<F>())
          .check([](F& f, const Node& node) {
            const std::size_t before = node.diag().errors().size();
            auto type = node.choice("type", scalarTypeNames());
            if (!type) return false;
            f.scalar = parseScalar(node, *scalarTypeFrom(*type), "filter '" + f.name + "'");
            return node.diag().errors().size() == before;
          });
  return s;
}

bool readFilters(SemanticSearch& s, const Node& list) {
  if (!list.isSequence()) {
    list.error("must be a list of filters");
    return false;
  }
  bool ok = true;
  std::set<std::string> names{"query", "k"};
  for (const Node& entry : list.elements()) {
    SearchFilter f;
    bool entry_ok = filterSection().parse(entry, f);
    if (!f.name.empty() && isParamName(f.name) && !names.insert(f.name).second) {
      entry.child("name").error("duplicate argument name '" + f.name + "'");
      entry_ok = false;
    }
    if (entry_ok) s.filters.push_back(std::move(f));
    ok = entry_ok && ok;
  }
  return ok;
}

bool checkMetadataColumns(const SemanticSearch& s, const Node& node) {
  std::set<std::string> seen;
  bool ok = true;
  for (const auto& c : s.metadata_columns) {
    if (!isSafeIdentifier(c)) {
      node.child("metadata_columns").error("must list lower-case column names ([a-z_][a-z0-9_]*)");
      ok = false;
    } else if (!seen.insert(c).second) {
      node.child("metadata_columns").error("lists a column twice");
      ok = false;
    }
  }
  return ok;
}

// The generated statements, judged like any operator template, once every key is valid.
bool buildSearchStatements(SemanticSearch& s, const Node& node) {
  if (!node.diag().ok()) return false;
  const std::size_t before = node.diag().errors().size();
  s.statement = buildSearchStatement(s);
  checkStatement(node.child("table"), s.statement, 2 + s.filters.size());
  if (!s.model_table.empty()) {
    s.model_statement = "SELECT model_id::text AS model_id, dimension::int8 AS dimension FROM " +
                        quoteQualified(s.model_table) + " LIMIT 2";
    checkStatement(node.child("model_table"), s.model_statement, 0);
  }
  return node.diag().errors().size() == before;
}

bool checkSearch(SemanticSearch& s, const Node& node) {
  s.enabled = true;
  if (s.title.empty()) s.title = titleFromName(s.tool);
  if (s.description.empty()) {
    s.description =
        "Finds the documents closest in meaning to a natural-language query (vector search).";
  }
  bool ok = checkMetadataColumns(s, node);
  if (s.k_default > s.k_max) {
    errorAt(node, "k_default", "must not exceed k_max");
    ok = false;
  }
  return buildSearchStatements(s, node) && ok;
}

std::function<bool(SemanticSearch&, const Node&)> columnReader(std::string SemanticSearch::*member,
                                                               bool may_be_empty) {
  return [member, may_be_empty](SemanticSearch& s, const Node& n) {
    auto v = n.asString();
    if (!v) return false;
    if (may_be_empty && v->empty()) {
      s.*member = "";
      return true;
    }
    if (auto p = columnProblem(*v); !p.empty()) {
      n.error(p);
      return false;
    }
    s.*member = *v;
    return true;
  };
}

const config::Section<SemanticSearch>& searchSection() {
  using S = SemanticSearch;
  const auto column = [] { return Json{{"type", "string"}}; };
  static const auto s =
      config::Section<S>("a vector-search tool over a table of embedded documents (pgvector)")
          .string("tool", &S::tool, "the tool's name (default semantic_search_documents)",
                  config::kOptional, engines::kit::toolNameProblem)
          .string("source", &S::source, "the source it reads (required when there are several)")
          .string("title", &S::title, "a short human title (default: from the tool's name)")
          .string("description", &S::description, "what it finds, written for an agent")
          .custom(
              "table", "table or schema.table holding the documents",
              [] {
                return Json{{"type", "string"}};
              },
              config::kRequired, qualifiedReader(&S::table))
          .custom("id_column", "the id column (default id)", column, config::kOptional,
                  columnReader(&S::id_column, false))
          .custom("title_column", "the title column (default: none)", column, config::kOptional,
                  columnReader(&S::title_column, true))
          .custom("text_column", "the text column (default body)", column, config::kOptional,
                  columnReader(&S::text_column, false))
          .strings("metadata_columns", &S::metadata_columns,
                   "columns returned as each result's metadata")
          .custom("vector_column", "the pgvector column (default embedding)", column,
                  config::kOptional, columnReader(&S::vector_column, false))
          .choice("distance", &S::distance,
                  {{"cosine", Distance::Cosine},
                   {"l2", Distance::L2},
                   {"inner_product", Distance::InnerProduct}},
                  "the distance operator (default cosine)")
          .integer("k_default", &S::k_default, 1, 1000, "results when k is not given (default 5)")
          .integer("k_max", &S::k_max, 1, 1000, "the most results a call may ask for (default 20)")
          .integer("max_query_length", &S::max_query_length, 1, 100000,
                   "the longest query text (default 1000)")
          .custom(
              "model_table",
              "table or schema.table with (model_id text, dimension int): the model the "
              "stored vectors were made with, checked against the server's (default: none)",
              [] {
                return Json{{"type", "string"}};
              },
              config::kOptional, qualifiedReader(&S::model_table))
          .custom(
              "filters", "optional arguments that narrow the search" + entryKeys(filterSection()),
              [] {
                return Json{{"type", "array"}, {"items", filterSection().jsonSchema()}};
              },
              config::kOptional, readFilters)
          .custom("limits", "rows, bytes and time for this tool (at most the server's)",
                  &config::limitsSchema, config::kOptional, limitsReader(&S::limits))
          .check(checkSearch);
  return s;
}

// --- the section ---

// Tool names are unique regardless of case, the search tool's included. Every valid name in the
// file is claimed, also of a tool with other errors (as the file reads).
bool claimToolNames(const Settings& out, const Node& node) {
  ToolNames names;
  bool ok = true;
  const Node tools = node.child("tools");
  std::set<std::string> seen;
  if (tools.present() && tools.isMap()) {
    for (const auto& [name, at] : tools.entries()) {
      // An invalid or exactly repeated name was reported by the map's own reading.
      if (!protocol::isValidToolName(name) || !seen.insert(name).second) continue;
      ok = claimToolName(names, name, at) && ok;
    }
  }
  const Node search = node.child("semantic_search");
  if (search.present() && search.isMap()) {
    const Node named = search.child("tool");
    const std::string tool =
        named.present() && named.isScalar() ? named.yaml().Scalar() : out.search.tool;
    if (protocol::isValidToolName(tool)) {
      ok = claimToolName(names, tool, search.has("tool") ? search.child("tool") : search) && ok;
    }
  }
  return ok;
}

}  // namespace

const config::Section<Settings>& settingsSection() {
  static const auto s =
      config::Section<Settings>("the PostgreSQL statements and vector search agents may run")
          .boolean("optional", &Settings::optional,
                   "true: when this engine's environment is unset, the server starts without it "
                   "(its tools are not served; check-config and doctor still report it). Default "
                   "false: a config that declares tools for an engine whose environment is unset "
                   "refuses to start (exit 3)")
          .named("sources", &Settings::sources, &Source::name, sourceSection(),
                 "the databases, by name (default: `default` from POSTGRES_DSN)", config::kOptional,
                 config::sourceNameProblem, "must map a source name to its settings")
          .object("pool", &Settings::pool, poolSection(), "connections")
          .custom("search_path",
                  "the schemas every connection searches, in order (pg_temp is always appended "
                  "last; default [pg_catalog, public])",
                  &stringsSchema, config::kOptional, readSearchPath)
          .object("proof", &Settings::proof, proofSection(), "the read-only proof")
          .named("tools", &Settings::tools, &QueryTool::name, toolSection(), "the tools, by name",
                 config::kOptional, engines::kit::toolNameProblem,
                 "must map tool names to tool definitions",
                 [](QueryTool& t, const Settings& st) { t.limits = st.defaults; })
          .object("semantic_search", &Settings::search, searchSection(),
                  "a vector-search tool (default: none)")
          .check([](Settings& st, const Node& node) {
            st.proof.search_path = st.pool.search_path;
            const bool names_ok = claimToolNames(st, node);
            const bool sources_ok = resolveToolSources(st, node);
            return checkSourceTls(st, node) && names_ok && sources_ok;
          });
  return s;
}

Source implicitSource() {
  Source s;
  s.name = std::string(config::kDefaultSourceName);
  s.dsn_env = std::string(kDefaultDsnEnv);
  s.implicit = true;
  return s;
}

const Source* Settings::sourceOf(std::string_view wanted) const {
  return config::findSource(sources, wanted);
}

Settings settingsFor(const Settings& all, const Source& source) {
  Settings out = all;
  out.sources = {source};
  out.tools.clear();
  for (const QueryTool& t : all.tools) {
    const Source* reads = all.sourceOf(t.source);
    if (reads != nullptr && reads->name == source.name) out.tools.push_back(t);
  }
  const Source* search_source = all.search.enabled ? all.sourceOf(all.search.source) : nullptr;
  if (search_source == nullptr || search_source->name != source.name) out.search = {};
  return out;
}

PoolSettings poolFor(const PoolSettings& pool, const Source& source) {
  PoolSettings p = pool;
  if (source.iam_auth) p.iam_auth = source.iam_auth;
  if (!source.sslmode.empty()) p.sslmode = source.sslmode;
  if (!source.sslrootcert.empty()) p.sslrootcert = source.sslrootcert;
  return p;
}

Settings parseSettings(const config::Node& section, const Limits& defaults) {
  Settings out;
  out.defaults = defaults;
  out.pool.statement_timeout = defaults.timeout;
  out.search.limits = defaults;
  if (!section.present()) {
    out.sources.push_back(implicitSource());
    return out;
  }
  out.present = true;
  settingsSection().parse(section, out);
  return out;
}

}  // namespace mcpdb::postgres
