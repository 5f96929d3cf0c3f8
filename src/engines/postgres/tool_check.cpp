// doctor's proof that every configured tool can run as the configured role: each statement is
// planned with EXPLAIN (all arguments NULL, so the server's reason quotes no value), which parses
// it, resolves every table, column, function and operator, and checks the role's privileges on
// them (the executor's permission check runs for EXPLAIN too), inside the same READ ONLY
// transaction as a call. Nothing is executed.

#include <string_view>

#include "engines/postgres/runtime.hpp"

namespace mcpdb::postgres {
namespace {

using engines::Finding;
using Sev = Finding::Severity;

// An identifier as SQL text: bare when it is a plain lower-case name, else double-quoted.
std::string sqlIdentifier(std::string_view name) {
  bool plain = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (plain) return std::string(name);
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The GRANT that gives `role` what a "permission denied for <kind> <name>" message says it lacks.
std::string grantFor(std::string_view message, const std::string& role) {
  constexpr std::string_view kPrefix = "permission denied for ";
  if (message.rfind(kPrefix, 0) != 0) {
    return "grant " + role + " the privilege the statement needs (GRANT SELECT ON <table> TO " +
           role + ";)";
  }
  std::string_view rest = message.substr(kPrefix.size());
  struct Kind {
    std::string_view word;
    std::string_view grant;
  };
  constexpr Kind kKinds[] = {
      {"materialized view ", "GRANT SELECT ON TABLE "},
      {"foreign table ", "GRANT SELECT ON TABLE "},
      {"table ", "GRANT SELECT ON TABLE "},
      {"view ", "GRANT SELECT ON TABLE "},
      {"sequence ", "GRANT SELECT ON SEQUENCE "},
      {"schema ", "GRANT USAGE ON SCHEMA "},
      {"function ", "GRANT EXECUTE ON FUNCTION "},
      {"type ", "GRANT USAGE ON TYPE "},
  };
  for (const auto& k : kKinds) {
    if (rest.rfind(k.word, 0) == 0) {
      return std::string(k.grant) + sqlIdentifier(rest.substr(k.word.size())) + " TO " + role + ";";
    }
  }
  return "grant " + role + " the privilege named by: " + std::string(message);
}

// The finding for one statement's EXPLAIN.
Finding assess(const std::string& check, const std::string& what, const Result<ExecResult>& r,
               const ExecOutcome& outcome, const std::string& role) {
  if (r) return {Sev::Ok, check, what + ": can be planned and read as role " + role, ""};
  const std::string& state = outcome.sqlstate;
  const std::string reason = outcome.server_message.empty()
                                 ? operatorText(r.error())
                                 : outcome.server_message + " (SQLSTATE " + state + ")";
  if (state == "42501") {
    return {Sev::Unusable, check, what + ": role " + role + " may not read it: " + reason,
            grantFor(outcome.server_message, role)};
  }
  if (state == "42P01" || state == "3F000") {
    return {Sev::Unusable, check, what + ": " + reason,
            "create it, or correct the statement in the config (relations are looked up with the "
            "role's search_path; schema-qualify them)"};
  }
  if (state.rfind("42", 0) == 0) {
    return {Sev::Unusable, check, what + ": " + reason, "correct the statement in the config"};
  }
  if (state.empty() || state.rfind("08", 0) == 0 || state.rfind("57", 0) == 0 ||
      state.rfind("53", 0) == 0) {
    return {Sev::Inconclusive, check, what + ": could not be checked: " + reason, ""};
  }
  // Planned with NULL arguments the server raised something else (e.g. a data exception from a
  // constant folded at plan time): the statement parsed and resolved, but this is no proof.
  return {Sev::Warning, check,
          what + ": planning it with NULL arguments failed, so it is unproved: " + reason, ""};
}

}  // namespace

std::vector<Finding> Runtime::checkTools(const std::stop_token& stop) {
  std::vector<Finding> out;
  Limits limits;
  limits.max_rows = 1;
  limits.max_bytes = 4096;
  limits.timeout = std::chrono::milliseconds(10000);
  auto who = run("SELECT quote_ident(current_user::text) AS role", BoundParams{}, limits, stop,
                 Clock::now() + limits.timeout);
  if (!who || who->rows.empty()) {
    out.push_back({Sev::Inconclusive, "pg.tools",
                   "could not check the configured statements: " +
                       (who ? std::string("no current_user") : operatorText(who.error())),
                   ""});
    return out;
  }
  const std::string role = who->rows[0].value("role", std::string("?"));

  // The server names a relation it refuses without its schema: qualify it when exactly one
  // relation of that name is unreadable to the role, so the GRANT can be pasted as it is.
  auto qualify = [&](Finding& f) {
    constexpr std::string_view kTable = "GRANT SELECT ON TABLE ";
    if (f.fix.rfind(kTable, 0) != 0) return;
    const auto space = f.fix.find(' ', kTable.size());
    const std::string bare = f.fix.substr(kTable.size(), space - kTable.size());
    if (bare.find('.') != std::string::npos || bare.front() == '"') return;
    BoundParams name;
    name.add(bare, oid::kText);
    Limits l = limits;
    l.max_rows = 2;
    auto found =
        run("SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name "
            "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relname = $1 AND NOT has_table_privilege(c.oid, 'SELECT')",
            name, l, stop, Clock::now() + l.timeout);
    if (found && found->rows.size() == 1) {
      f.fix = std::string(kTable) + found->rows[0].value("name", bare) + f.fix.substr(space);
    }
  };
  // The read-only proof first: a statement it refuses is never run, so planning it proves nothing.
  auto proved = latestProof();
  if (!proved) {
    out.push_back({Sev::Inconclusive, "pg.proof",
                   "could not prove the statements read-only: " + operatorText(proved.error()),
                   ""});
  }
  auto check = [&](const std::string& name, const std::string& what, const std::string& sql,
                   const BoundParams& params) {
    if (proved) {
      const auto it = (*proved)->verdicts.find(sql);
      if (it != (*proved)->verdicts.end() && it->second) {
        out.push_back({Sev::Unusable, "pg.tool." + name,
                       what + ": refused by the read-only proof: " + it->second->message(),
                       "rewrite the statement so that it does not reach " + it->second->object +
                           "; or, if that function cannot write, list it under "
                           "postgres.proof.allow_functions with the reason"});
        return;
      }
    }
    if (stop.stop_requested()) return;  // the server is stopping: nothing more is checked
    ExecOutcome outcome;
    auto r = explain(sql, params, outcome, stop);
    Finding f = assess("pg.tool." + name, what, r, outcome, role);
    if (f.severity == Sev::Unusable) qualify(f);
    out.push_back(std::move(f));
  };
  for (const auto& t : section_.tools) {
    BoundParams params;
    for (const auto& p : t.parameters) {
      params.add(std::nullopt, p.is_array ? arrayOid(p.scalar.type) : scalarOid(p.scalar.type));
    }
    check(t.name, "tool " + t.name, t.statement, params);
  }
  const SemanticSearch& s = section_.search;
  if (s.enabled) {
    BoundParams params;
    params.add(std::nullopt, 0);  // $1::vector
    params.add(std::nullopt, oid::kInt8);
    for (const auto& f : s.filters) params.add(std::nullopt, scalarOid(f.scalar.type));
    check(s.tool, "tool " + s.tool, s.statement, params);
    if (!s.model_statement.empty()) {
      check(s.tool + ".model_table", "tool " + s.tool + " (its model table)", s.model_statement,
            BoundParams{});
    }
  }
  return out;
}

}  // namespace mcpdb::postgres
