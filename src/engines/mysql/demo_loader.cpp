// MySQL/MariaDB demo loader: the only MySQL code in this project that writes. As MYSQL_ADMIN_DSN
// (the server never reads it) it creates the table `documents` in the DSN's database when it is
// missing, upserts every document and removes the rows no longer in the file, all in one
// transaction, then verifies the count and one known document AS THE SERVING USER (MYSQL_DSN),
// through the same read-only client path the server uses.
//
// No embeddings and no vector index: MariaDB 10.11 has no VECTOR type (it arrives in 11.7), so the
// vectors the loader executable computes are not stored here and the summary says so.
//
// No GRANT either: the local admin has ALL on demo.* without GRANT OPTION, and granting is the
// server administrator's decision. The serving user's SELECT is checked by the verification read;
// a refusal names the GRANT the administrator has to run.
//
// libmariadb is linked directly (this library is never part of the server binary). Errors name
// the step and the server's error number (errors.hpp), never a password or a row value.

#include "engines/mysql/demo_loader.hpp"

#include <mysql.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <optional>
#include <set>
#include <span>

#include "common/handle.hpp"
#include "common/json.hpp"
#include "common/utf8.hpp"
#include "engines/mysql/connection.hpp"
#include "engines/mysql/dsn.hpp"
#include "engines/mysql/errors.hpp"
#include "engines/mysql/params.hpp"
#include "engines/mysql/raw_client.hpp"

namespace mcpdb::mysql {

using engines::DemoDocument;

namespace {

using StmtPtr = Owned<MYSQL_STMT, mysql_stmt_close>;
using ResPtr = Owned<MYSQL_RES, mysql_free_result>;

constexpr const char* kAdminEnv = "MYSQL_ADMIN_DSN";
constexpr const char* kServingEnv = "MYSQL_DSN";
constexpr const char* kNoVector = "no vector search: MariaDB 10.11 has no VECTOR type";
constexpr const char* kKnownId = "doc-01";
constexpr std::chrono::seconds kIoTimeout{120};

struct Counts {
  std::size_t inserted = 0;
  std::size_t updated = 0;
  std::size_t unchanged = 0;
  std::size_t removed = 0;
};

Error withStep(const Error& e, std::string_view step) {
  Error out = makeError(e.code, std::string(step) + ": " + e.message);
  out.detail = e.detail;
  return out;
}

bool validTableName(std::string_view t) {
  return !t.empty() && t.size() <= 64 && std::all_of(t.begin(), t.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// `name` as a backtick-quoted identifier (backticks doubled): the database name comes from the DSN.
std::string quoteIdent(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

Result<Dsn> dsnFromEnv(const Env& env, const char* variable) {
  const auto text = env.get(variable);
  if (!text) return makeError(Code::FailedPrecondition, std::string(variable) + " is not set");
  auto dsn = parseDsn(*text);
  if (!dsn) return withStep(dsn.error(), variable);
  return dsn;
}

// A text statement whose result (if any) is discarded.
Status execText(MYSQL* m, const std::string& sql, std::string_view step) {
  auto r = queryFirstValue(m, sql, step);
  if (!r) return r.error();
  return {};
}

Error statementError(MYSQL_STMT* stmt, std::string_view step) {
  return classifyError(mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt), mysql_stmt_error(stmt),
                       step);
}

Result<StmtPtr> prepareStatement(MYSQL* m, const std::string& sql, std::string_view step) {
  StmtPtr stmt(mysql_stmt_init(m));
  if (stmt == nullptr) return lastErrorOf(m, step);
  if (mysql_stmt_prepare(stmt.get(), sql.data(), sql.size()) != 0)
    return statementError(stmt.get(), step);
  return stmt;
}

// Executes a prepared statement without a result set; the affected-row count.
Result<std::uint64_t> executeWith(MYSQL_STMT* stmt, std::span<const Param> params,
                                  std::string_view step) {
  auto binds = ParamBinds::make(params);
  if (!binds) return withStep(binds.error(), step);
  if (mysql_stmt_bind_param(stmt, binds->data()) != 0) return statementError(stmt, step);
  if (mysql_stmt_execute(stmt) != 0) return statementError(stmt, step);
  return static_cast<std::uint64_t>(mysql_stmt_affected_rows(stmt));
}

// Strict (a bad date or an overlong title fails instead of being mangled with a warning) and
// MySQL's default lexing, as the serving sessions use.
Status setUpSession(MYSQL* m) {
  return execText(m, "SET SESSION sql_mode = '" + std::string(kSessionSqlMode) + "'",
                  "set up the session");
}

Status createTable(MYSQL* m, const std::string& table) {
  // tags: MariaDB's JSON is LONGTEXT with a JSON_VALID check (MySQL's is a real JSON type); the
  // id compares byte for byte so that ids differing only in case stay distinct documents.
  const std::string ddl =
      "CREATE TABLE IF NOT EXISTS " + table +
      " (id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,"
      " title VARCHAR(512) NOT NULL, body TEXT NOT NULL, category VARCHAR(128) NOT NULL,"
      " tags JSON NOT NULL, published DATE NULL)"
      " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";
  return execText(m, ddl, "create table");
}

// The ids in the table, locked until the transaction ends (a concurrent loader waits).
Result<std::set<std::string>> existingIds(MYSQL* m, const std::string& table) {
  const std::string sql = "SELECT id FROM " + table + " FOR UPDATE";
  constexpr std::string_view step = "read existing ids";
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) return lastErrorOf(m, step);
  ResPtr res(mysql_store_result(m));
  if (res == nullptr) return lastErrorOf(m, step);
  std::set<std::string> ids;
  while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
    const unsigned long* lengths = mysql_fetch_lengths(res.get());
    if (row[0] != nullptr) ids.emplace(row[0], lengths[0]);
  }
  return ids;
}

// The statement parameters of one document; the error names its position in the file only.
Result<std::vector<Param>> documentParams(const DemoDocument& d, std::size_t index) {
  // The _bin collations PAD SPACE: 'a' and 'a ' would be one key to the server but two ids here,
  // and removing the stale one would delete the other.
  if (d.id.empty() || d.id.back() == ' ') {
    return makeError(Code::InvalidArgument, "document " + std::to_string(index + 1) +
                                                ": the id is empty or ends in a space");
  }
  for (const auto& t : d.tags) {
    if (!isValidUtf8(t)) {
      return makeError(Code::InvalidArgument,
                       "document " + std::to_string(index + 1) + ": a tag is not valid UTF-8");
    }
  }
  std::vector<Param> p;
  p.emplace_back(d.id);
  p.emplace_back(d.title);
  p.emplace_back(d.body);
  p.emplace_back(d.category);
  p.emplace_back(Json(d.tags).dump());
  if (d.published.empty())
    p.emplace_back(nullptr);
  else
    p.emplace_back(d.published);
  return p;
}

Status upsertDocuments(MYSQL* m, const std::string& table, const std::vector<DemoDocument>& docs,
                       Counts& counts) {
  auto stmt = prepareStatement(
      m,
      "INSERT INTO " + table +
          " (id, title, body, category, tags, published) VALUES (?, ?, ?, ?, ?, ?)"
          " ON DUPLICATE KEY UPDATE title = VALUES(title), body = VALUES(body),"
          " category = VALUES(category), tags = VALUES(tags), published = VALUES(published)",
      "prepare upsert");
  if (!stmt) return stmt.error();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    auto params = documentParams(docs[i], i);
    if (!params) return params.error();
    const std::string step = "upsert document " + std::to_string(i + 1);
    auto affected = executeWith(stmt->get(), *params, step);
    if (!affected) return affected.error();
    // MySQL's convention for ON DUPLICATE KEY UPDATE: 1 inserted, 2 changed, 0 already equal.
    if (*affected == 1)
      ++counts.inserted;
    else if (*affected == 2)
      ++counts.updated;
    else
      ++counts.unchanged;
  }
  return {};
}

Status removeStale(MYSQL* m, const std::string& table, const std::set<std::string>& existing,
                   const std::set<std::string>& wanted, Counts& counts) {
  std::vector<std::string> stale;
  std::set_difference(existing.begin(), existing.end(), wanted.begin(), wanted.end(),
                      std::back_inserter(stale));
  if (stale.empty()) return {};
  auto stmt = prepareStatement(m, "DELETE FROM " + table + " WHERE id = ?", "prepare delete");
  if (!stmt) return stmt.error();
  for (const auto& id : stale) {
    const Param p[] = {id};
    auto affected = executeWith(stmt->get(), p, "remove a stale document");
    if (!affected) return affected.error();
    counts.removed += static_cast<std::size_t>(*affected);
  }
  return {};
}

Status loadInTransaction(MYSQL* m, const std::string& table, const std::vector<DemoDocument>& docs,
                         const std::set<std::string>& wanted, Counts& counts) {
  if (auto s = execText(m, "START TRANSACTION", "start transaction"); !s) return s;
  auto existing = existingIds(m, table);
  if (!existing) return existing.error();
  if (auto s = upsertDocuments(m, table, docs, counts); !s) return s;
  if (auto s = removeStale(m, table, *existing, wanted, counts); !s) return s;
  return execText(m, "COMMIT", "commit");
}

// Two loaders at once could deadlock on the gap locks of a new, empty table (both SELECT ... FOR
// UPDATE, then both INSERT); in practice the second CREATE TABLE IF NOT EXISTS mostly waits for
// the first transaction, but not when it runs before that transaction starts. A named lock
// (released when the connection closes) makes the second load wait for the first, always. Lock
// names are at most 64 characters.
Status takeLoadLock(MYSQL* m, std::string_view table_name) {
  const std::string name = ("mcpdb_demo_load_" + std::string(table_name)).substr(0, 64);
  auto got = queryFirstValue(m, "SELECT GET_LOCK('" + name + "', 60)", "take the load lock");
  if (!got) return got.error();
  if (*got != "1")
    return makeError(Code::Unavailable, "take the load lock: another load held it for 60 s");
  return {};
}

// The admin's part: everything that writes.
Result<Counts> writeDocuments(const Dsn& admin, const std::string& table,
                              std::string_view table_name, const std::vector<DemoDocument>& docs,
                              const std::set<std::string>& wanted) {
  auto conn = connectRaw(admin, kIoTimeout);
  if (!conn) return withStep(conn.error(), std::string("admin connection (") + kAdminEnv + ")");
  MYSQL* m = conn->get();
  if (auto s = setUpSession(m); !s) return s.error();
  if (auto s = takeLoadLock(m, table_name); !s) return s.error();
  // DDL commits implicitly in MySQL: it runs before the transaction, not inside it.
  if (auto s = createTable(m, table); !s) return s.error();
  Counts counts;
  if (auto s = loadInTransaction(m, table, docs, wanted, counts); !s) {
    (void)execText(m, "ROLLBACK", "rollback");  // closing would roll back too; say it plainly
    return s.error();
  }
  return counts;
}

std::optional<std::int64_t> intCell(const QueryResult& r) {
  if (r.rows.size() != 1 || r.rows[0].empty() || !r.rows[0][0].is_number_integer()) return {};
  return r.rows[0][0].get<std::int64_t>();
}

// The reader's part: the count and one known document, through the read-only client path.
Status verifyAs(const Dsn& dsn, const std::string& who, const std::string& table,
                std::size_t expected, const DemoDocument& known) {
  auto conn = Connection::open(dsn);
  if (!conn) return withStep(conn.error(), "verify: connect as " + who);
  const CallLimits limits{};
  auto count = conn->run("SELECT COUNT(*) FROM " + table, {}, limits);
  if (!count) {
    Error e = withStep(count.error(), "verify: count as " + who);
    if (e.code == Code::PermissionDenied) {
      e.message +=
          "; the loader grants nothing: as the server's administrator run GRANT SELECT ON " +
          quoteIdent(dsn.database.empty() ? "demo" : dsn.database) + ".* TO " +
          quoteIdent(dsn.user) + "@<its host>";
    }
    return e;
  }
  const auto n = intCell(*count);
  if (!n || *n != static_cast<std::int64_t>(expected)) {
    return makeError(Code::Internal, "verify: the table has " +
                                         (n ? std::to_string(*n) : std::string("?")) +
                                         " rows, expected " + std::to_string(expected));
  }
  const Param id[] = {known.id};
  auto row = conn->run("SELECT title, published FROM " + table + " WHERE id = ?", id, limits);
  if (!row) return withStep(row.error(), "verify: read a known document as " + who);
  const Json want_published = known.published.empty() ? Json(nullptr) : Json(known.published);
  if (row->rows.size() != 1 || row->rows[0].size() != 2 || row->rows[0][0] != Json(known.title) ||
      row->rows[0][1] != want_published) {
    // Never the values: only that they differ.
    return makeError(Code::Internal, "verify: a known document did not read back as written");
  }
  return {};
}

// doc-01 when the file has it, else the last document; the last occurrence of an id is the one
// the upserts left in the table.
const DemoDocument& knownDocument(const std::vector<DemoDocument>& docs) {
  const auto it = std::find_if(docs.rbegin(), docs.rend(),
                               [](const DemoDocument& d) { return d.id == kKnownId; });
  return it != docs.rend() ? *it : docs.back();
}

std::string countsText(const Counts& c) {
  return std::to_string(c.inserted) + " new, " + std::to_string(c.updated) + " updated, " +
         std::to_string(c.unchanged) + " unchanged, " + std::to_string(c.removed) +
         " stale removed";
}

Result<std::string> loadMysql(const std::vector<DemoDocument>& docs,
                              const engines::DemoLoadContext& ctx) {
  if (ctx.env == nullptr) return makeError(Code::Internal, "no environment");
  auto loaded = demo_detail::loadInto(docs, *ctx.env, demo_detail::kDemoTable);
  if (loaded) return loaded;
  // The loader's output is the operator's: the server's own text (kept out of agent-facing
  // messages, in the detail) is shown with it.
  return makeError(loaded.error().code, operatorText(loaded.error()));
}

}  // namespace

namespace demo_detail {

Result<std::string> loadInto(const std::vector<DemoDocument>& docs, const Env& env,
                             std::string_view table_name) {
  if (!validTableName(table_name))
    return makeError(Code::InvalidArgument, "the demo table name must be [a-z0-9_]{1,64}");
  if (docs.empty()) return makeError(Code::InvalidArgument, "no documents to load");
  auto admin = dsnFromEnv(env, kAdminEnv);
  if (!admin) return admin.error();
  if (admin->database.empty())
    return makeError(Code::FailedPrecondition, std::string(kAdminEnv) + " names no database");
  const std::string table = quoteIdent(admin->database) + "." + quoteIdent(table_name);
  const std::string shown = admin->database + "." + std::string(table_name);

  std::set<std::string> wanted;
  for (const auto& d : docs) wanted.insert(d.id);
  auto counts = writeDocuments(*admin, table, table_name, docs, wanted);
  if (!counts) return counts.error();

  // Verified by the serving user when its DSN is set (which also proves its SELECT), else by the
  // admin through the same read-only path.
  const bool as_serving = env.has(kServingEnv);
  Dsn verifier = *admin;
  if (as_serving) {
    auto serving = dsnFromEnv(env, kServingEnv);
    if (!serving) return serving.error();
    verifier = *serving;
  }
  const std::string who =
      as_serving ? "the serving user " + verifier.user + " (" + kServingEnv + ")"
                 : std::string("the admin (") + kAdminEnv + "; " + kServingEnv + " not set)";
  const DemoDocument& known = knownDocument(docs);
  if (auto s = verifyAs(verifier, who, table, wanted.size(), known); !s) return s.error();

  std::string summary = shown + ": " + std::to_string(wanted.size()) + " rows (" +
                        countsText(*counts) + "); " + kNoVector + "; ";
  summary += as_serving ? "SELECT already held by " + verifier.user + " (checked, not granted)"
                        : std::string("grants not checked (") + kServingEnv + " not set)";
  return summary + "; verified as " + who + ": count " + std::to_string(wanted.size()) + ", " +
         known.id + " reads back";
}

}  // namespace demo_detail

engines::DemoLoader demoLoader() {
  return {"mysql", kAdminEnv, [](const Env& env) { return env.has(kAdminEnv); }, &loadMysql};
}

}  // namespace mcpdb::mysql
