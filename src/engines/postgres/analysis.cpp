#include "engines/postgres/analysis.hpp"

#include <memory>
#include <string>

namespace mcpdb::postgres {
namespace {

using ResultPtr = std::unique_ptr<PGresult, decltype(&PQclear)>;

// The trees PostgreSQL prints while the statement is prepared. Every other notice (the
// transaction's own statements print theirs too) is dropped: nothing reaches the default
// receiver, which would print it on stderr.
struct Notices {
  bool collecting = false;
  int trees = 0;
  std::string text;
};

void receive(void* arg, const PGresult* r) {
  auto* n = static_cast<Notices*>(arg);
  if (!n->collecting) return;
  const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  const char* detail = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL);
  if (primary == nullptr || detail == nullptr ||
      std::string_view(primary) != "rewritten parse tree:") {
    return;
  }
  ++n->trees;
  n->text += detail;
  n->text += '\n';
}

bool succeeded(PGconn* conn, const char* sql, ExecStatusType want) {
  ResultPtr r(PQexecParams(conn, sql, 0, nullptr, nullptr, nullptr, nullptr, 0), &PQclear);
  return r && PQresultStatus(r.get()) == want;
}

// The session's settings for one analysis (set_config(..., true) is SET LOCAL: the ROLLBACK undoes
// them). debug_pretty_print off: the plain dump breaks lines only between tokens, except inside a
// token longer than a line (a long name), which the reader then refuses.
constexpr const char* kSettings =
    "SELECT pg_catalog.set_config('statement_timeout', '10s', true), "
    "pg_catalog.set_config('debug_pretty_print', 'off', true), "
    "pg_catalog.set_config('client_min_messages', 'log', true), "
    "pg_catalog.set_config('debug_print_rewritten', 'on', true)";

// Parse only (libpq's PQsendPrepare, outside pipeline mode): the statement is never bound or
// executed. The last result, or null when the connection failed.
ResultPtr prepare(PGconn* conn, const std::string& sql, const std::vector<Oid>& types) {
  ResultPtr last(nullptr, &PQclear);
  if (PQsendPrepare(conn, "", sql.c_str(), static_cast<int>(types.size()),
                    types.empty() ? nullptr : types.data()) != 1) {
    return last;
  }
  while (PGresult* r = PQgetResult(conn)) last.reset(r);
  return last;
}

}  // namespace

Result<proof::Analysis> analyzeStatement(PGconn* conn, std::string_view sql,
                                         const std::vector<std::vector<Oid>>& param_type_lists,
                                         bool& broken) {
  Notices notices;
  // libpq gives back the receiver but not its argument: the pool's connections keep libpq's
  // default, whose argument is null.
  const PQnoticeReceiver old = PQsetNoticeReceiver(conn, receive, &notices);
  proof::Analysis out;
  out.prepared = true;
  const std::string text(sql);
  bool ok = succeeded(conn, "BEGIN READ ONLY", PGRES_COMMAND_OK) &&
            succeeded(conn, kSettings, PGRES_TUPLES_OK);
  // No binding at all is one without parameter types (the server infers them).
  const std::vector<std::vector<Oid>> none(1);
  for (const std::vector<Oid>& types : param_type_lists.empty() ? none : param_type_lists) {
    if (!ok || !out.prepared) break;
    notices.collecting = true;
    const int before = notices.trees;
    ResultPtr r = prepare(conn, text, types);
    notices.collecting = false;
    if (!r || PQstatus(conn) != CONNECTION_OK) {
      ok = false;
      break;
    }
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
      const char* primary = PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY);
      out.prepared = false;
      out.sqlstate = state ? state : "";
      out.failure = std::string("SQLSTATE ") + (state ? state : "-----") + ": " +
                    (primary ? primary : "no message");
      break;
    }
    if (notices.trees == before) {
      out.prepared = false;
      out.failure = "the server printed no query tree";
    }
  }
  ok = succeeded(conn, "ROLLBACK", PGRES_COMMAND_OK) && ok;
  PQsetNoticeReceiver(conn, old, nullptr);
  if (!ok) {
    broken = true;
    return makeError(Code::Unavailable,
                     "the connection failed while PostgreSQL analyzed a statement for the "
                     "read-only proof");
  }
  out.tree = std::move(notices.text);
  return out;
}

}  // namespace mcpdb::postgres
