#include "engines/postgres/pg_config.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>

#include "config/config.hpp"
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

void parseTools(const Node& node, const Limits& defaults, Section& out, ToolNames& tool_names) {
  if (!node.present()) return;
  if (!node.isMap()) {
    node.error("must map tool names to tool definitions");
    return;
  }
  for (const auto& [name, t] : node.entries()) {
    if (!protocol::isValidToolName(name)) {
      t.error("invalid tool name (1-128 characters of A-Z a-z 0-9 _ - .)");
      continue;
    }
    if (!claimToolName(tool_names, name, t)) continue;
    if (!t.expectMap(
            {"kind", "title", "description", "statement", "parameters", "limits", "fence"}))
      continue;
    QueryTool tool;
    tool.name = name;
    if (auto k = t.string("kind"); k && *k != "postgres-sql")
      t.child("kind").error("must be postgres-sql");
    tool.title = t.string("title").value_or(titleFromName(name));
    if (auto d = t.string("description", true)) {
      if (d->empty()) t.child("description").error("must not be empty");
      tool.description = *d;
    }
    bool complete = true;
    tool.parameters = parseParams(t.child("parameters"), complete);
    if (auto s = t.string("statement", true)) {
      tool.statement = *s;
      checkStatement(t.child("statement"), tool.statement, tool.parameters.size(), complete);
    }
    tool.limits = config::parseLimits(t.child("limits"), defaults, &defaults);
    if (auto f = t.choice("fence", {"auto", "always", "never"})) tool.fence = *parseFence(*f);
    out.tools.push_back(std::move(tool));
  }
}

std::optional<std::vector<std::string>> qualified(const Node& node, std::string_view key,
                                                  bool required) {
  auto s = node.string(key, required);
  if (!s) return std::nullopt;
  auto parts = parseQualifiedName(*s);
  if (!parts) {
    node.child(key).error(
        "must be table or schema.table, each a lower-case identifier ([a-z_][a-z0-9_]*)");
  }
  return parts;
}

std::string column(const Node& node, std::string_view key, const std::string& fallback,
                   bool optional_empty) {
  auto s = node.string(key);
  if (!s) return fallback;
  if (optional_empty && s->empty()) return {};
  if (!isSafeIdentifier(*s)) {
    node.child(key).error("must be a lower-case column name ([a-z_][a-z0-9_]*)");
    return fallback;
  }
  return *s;
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

void parseSearch(const Node& node, const Limits& defaults, Section& out, ToolNames& tool_names) {
  if (!node.present()) return;
  if (!node.expectMap({"tool", "title", "description", "table", "id_column", "title_column",
                       "text_column", "metadata_columns", "vector_column", "distance", "k_default",
                       "k_max", "max_query_length", "model_table", "filters", "limits"})) {
    return;
  }
  SemanticSearch& s = out.search;
  s.enabled = true;
  if (auto v = node.string("tool")) s.tool = *v;
  if (!protocol::isValidToolName(s.tool)) {
    errorAt(node, "tool", "invalid tool name (1-128 characters of A-Z a-z 0-9 _ - .)");
  } else {
    (void)claimToolName(tool_names, s.tool, node.has("tool") ? node.child("tool") : node);
  }
  s.title = node.string("title").value_or(titleFromName(s.tool));
  s.description = node.string("description")
                      .value_or(
                          "Finds the documents closest in meaning to a natural-language query "
                          "(vector search).");
  if (auto t = qualified(node, "table", true)) s.table = *t;
  s.id_column = column(node, "id_column", s.id_column, false);
  s.title_column = column(node, "title_column", s.title_column, true);
  s.text_column = column(node, "text_column", s.text_column, false);
  s.vector_column = column(node, "vector_column", s.vector_column, false);
  if (auto m = node.stringList("metadata_columns")) {
    std::set<std::string> seen;
    for (const auto& c : *m) {
      if (!isSafeIdentifier(c)) {
        node.child("metadata_columns")
            .error("must list lower-case column names ([a-z_][a-z0-9_]*)");
      } else if (!seen.insert(c).second) {
        node.child("metadata_columns").error("lists a column twice");
      } else {
        s.metadata_columns.push_back(c);
      }
    }
  }
  if (auto d = node.choice("distance", {"cosine", "l2", "inner_product"})) {
    s.distance = *d == "cosine" ? Distance::Cosine
                 : *d == "l2"   ? Distance::L2
                                : Distance::InnerProduct;
  }
  if (auto v = node.integer("k_max", 1, 1000)) s.k_max = static_cast<std::uint32_t>(*v);
  if (auto v = node.integer("k_default", 1, 1000)) s.k_default = static_cast<std::uint32_t>(*v);
  if (s.k_default > s.k_max) errorAt(node, "k_default", "must not exceed k_max");
  if (auto v = node.integer("max_query_length", 1, 100000))
    s.max_query_length = static_cast<std::uint32_t>(*v);
  if (node.has("model_table")) {
    if (auto t = qualified(node, "model_table", false)) s.model_table = *t;
  }
  Node filters = node.child("filters");
  if (filters.present()) {
    if (!filters.isSequence()) {
      filters.error("must be a list of filters");
    } else {
      std::set<std::string> names{"query", "k"};
      for (const auto& f : filters.elements()) {
        if (!f.expectMap({"name", "column", "type", "description", "op", "min", "max", "min_length",
                          "max_length", "pattern", "enum"})) {
          continue;
        }
        SearchFilter filter;
        auto name = f.string("name", true);
        auto col = f.string("column", true);
        auto type = f.choice(
            "type", {"string", "integer", "float", "boolean", "date", "timestamp", "uuid"}, true);
        auto desc = f.string("description", true);
        if (name) {
          if (!isParamName(*name)) {
            f.child("name").error(
                "must be a lower-case identifier ([a-z_][a-z0-9_]*, at most 63 characters)");
          } else if (!names.insert(*name).second) {
            f.child("name").error("duplicate argument name '" + *name + "'");
          }
          filter.name = *name;
        }
        if (col) {
          if (!isSafeIdentifier(*col))
            f.child("column").error("must be a lower-case column name ([a-z_][a-z0-9_]*)");
          filter.column = *col;
        }
        if (desc) filter.description = *desc;
        if (auto op = f.choice("op", {"equals", "contains"})) {
          filter.op = *op == "equals" ? SearchFilter::Op::Equals : SearchFilter::Op::Contains;
        }
        if (!type) continue;
        filter.scalar = parseScalar(f, *scalarTypeFrom(*type), "filter '" + filter.name + "'");
        s.filters.push_back(std::move(filter));
      }
    }
  }
  s.limits = config::parseLimits(node.child("limits"), defaults, &defaults);
  if (!node.diag().ok()) return;
  s.statement = buildSearchStatement(s);
  checkStatement(node.child("table"), s.statement, 2 + s.filters.size());
  if (!s.model_table.empty()) {
    s.model_statement = "SELECT model_id::text AS model_id, dimension::int8 AS dimension FROM " +
                        quoteQualified(s.model_table) + " LIMIT 2";
    checkStatement(node.child("model_table"), s.model_statement, 0);
  }
}

void parsePool(const Node& node, const Limits& defaults, PoolSettings& p) {
  p.statement_timeout = defaults.timeout;
  if (!node.present()) return;
  if (!node.expectMap({"size", "connect_timeout_ms", "statement_timeout_ms",
                       "idle_in_transaction_timeout_ms", "iam_auth", "sslmode", "sslrootcert",
                       "prepared_statements", "jit"})) {
    return;
  }
  if (auto v = node.integer("size", 1, 256)) p.size = static_cast<std::uint32_t>(*v);
  if (auto v = node.integer("connect_timeout_ms", 100, 120000))
    p.connect_timeout = std::chrono::milliseconds(*v);
  if (auto v = node.integer("statement_timeout_ms", 10, 3600000))
    p.statement_timeout = std::chrono::milliseconds(*v);
  if (auto v = node.integer("idle_in_transaction_timeout_ms", 100, 3600000)) {
    p.idle_in_transaction_timeout = std::chrono::milliseconds(*v);
  }
  p.iam_auth = node.boolean("iam_auth");
  if (auto v = node.boolean("prepared_statements")) p.prepared_statements = *v;
  if (auto v = node.boolean("jit")) p.jit = *v;
  if (auto v = node.choice("sslmode",
                           {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"})) {
    p.sslmode = *v;
  }
  if (p.iam_auth.value_or(false) && !p.sslmode.empty() && p.sslmode != "verify-full") {
    node.child("sslmode").error("must be verify-full (or unset) when iam_auth is true");
  }
  if (auto v = node.string("sslrootcert")) {
    if (v->empty()) node.child("sslrootcert").error("must not be empty");
    p.sslrootcert = *v;
  }
}

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

void parseSearchPath(const Node& section, std::vector<std::string>& path) {
  const Node node = section.child("search_path");
  if (!node.present()) return;
  auto list = section.stringList("search_path");
  if (!list) return;
  if (list->empty()) {
    node.error("must name at least one schema (pg_catalog is searched first unless listed)");
    return;
  }
  std::set<std::string> seen;
  for (const std::string& schema : *list) {
    if (!plainSchemaName(schema)) {
      node.error("'" + schema +
                 "' is not a plain lower-case schema name (letters, digits, underscores)");
      return;
    }
    if (schema == "pg_temp" || schema.starts_with("pg_temp_")) {
      node.error("must not list pg_temp: it is always appended last");
      return;
    }
    if (!seen.insert(schema).second) {
      node.error("lists '" + schema + "' twice");
      return;
    }
  }
  path = std::move(*list);
}

void parseProof(const Node& node, proof::Settings& p) {
  if (!node.present()) return;
  if (!node.expectMap({"trusted_extensions", "allow_functions", "interval_s"})) return;
  if (auto v = node.stringList("trusted_extensions")) p.trusted_extensions = std::move(*v);
  if (auto v = node.integer("interval_s", 10, 86400)) p.interval = std::chrono::seconds(*v);
  const Node list = node.child("allow_functions");
  if (!list.present()) return;
  if (!list.isSequence()) {
    list.error("must be a list of {function, reason}");
    return;
  }
  for (const Node& entry : list.elements()) {
    if (!entry.expectMap({"function", "reason"})) continue;
    auto function = entry.string("function", true);
    auto reason = entry.string("reason", true);
    if (!function || !reason) continue;
    if (function->find('.') == std::string::npos) {
      entry.child("function")
          .error(
              "must be schema-qualified: schema.name (every overload) or schema.name(type, ...)");
      continue;
    }
    if (reason->size() < 10) {
      entry.child("reason").error(
          "must say why the function cannot write (at least 10 characters)");
      continue;
    }
    p.allow_functions.push_back({std::move(*function), std::move(*reason)});
  }
}

}  // namespace

Section parseSection(const config::Node& section, const Limits& defaults) {
  Section out;
  out.pool.statement_timeout = defaults.timeout;
  if (!section.present()) return out;
  out.present = true;
  if (!section.expectMap({"pool", "search_path", "proof", "tools", "semantic_search"})) return out;
  ToolNames tool_names;
  parsePool(section.child("pool"), defaults, out.pool);
  parseSearchPath(section, out.pool.search_path);
  out.proof.search_path = out.pool.search_path;
  parseProof(section.child("proof"), out.proof);
  parseTools(section.child("tools"), defaults, out, tool_names);
  parseSearch(section.child("semantic_search"), defaults, out, tool_names);
  return out;
}

}  // namespace mcpdb::postgres
