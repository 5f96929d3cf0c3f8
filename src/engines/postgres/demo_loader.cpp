// PostgreSQL demo loader: the only Postgres code in this project that writes. With the admin role
// (MCPDB_PG_ADMIN_DSN; the server never reads it) it creates schema `demo`, the table
// demo.documents with a vector(DIM) column and an HNSW cosine index, records the embedding model in
// demo.embedding_model, upserts the documents (removing any no longer in the file), grants SELECT
// to the serving role, then verifies the count and one semantic query through that role.
// Idempotent: re-running replaces the demo data; a different dimension recreates the table.

#include <libpq-fe.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/handle.hpp"
#include "engines/postgres/params.hpp"
#include "engines/postgres/sqlstate.hpp"
#include "engines/postgres/demo_loader.hpp"

namespace mcpdb::postgres {

using engines::DemoDocument;
using engines::DemoLoadContext;
namespace {

using ConnPtr = Owned<PGconn, PQfinish>;
using ResPtr = Owned<PGresult, PQclear>;

// The sanity query of data/demo_queries_expected.tsv's first line.
constexpr const char* kSanityQuery = "how to speed up slow SQL queries";
constexpr const char* kSanityExpected = "doc-01";

Result<ConnPtr> connect(const std::string& dsn, const char* what) {
  ConnPtr c(PQconnectdb(dsn.c_str()));
  if (!c || PQstatus(c.get()) != CONNECTION_OK) {
    Error e = postgres::connectError(c ? PQerrorMessage(c.get()) : "");
    return makeError(e.code, std::string(what) + ": " + e.message);
  }
  return c;
}

// One statement through the extended protocol; the error names the step and SQLSTATE only.
Result<ResPtr> exec(PGconn* conn, const char* step, const std::string& sql,
                    const std::vector<const char*>& values = {}) {
  ResPtr r(PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                        nullptr, nullptr, 0));
  const auto st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    const char* state = r ? PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
    Error e = postgres::errorFromSqlstate(state != nullptr ? state : "");
    return makeError(e.code, std::string(step) + ": " + e.message);
  }
  return r;
}

std::string vectorText(const std::vector<float>& v) {
  std::string s = "[";
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v[i]));
    if (i > 0) s += ',';
    s += buf;
  }
  return s + "]";
}

Result<std::string> textArray(const std::vector<std::string>& items) {
  postgres::ScalarSpec spec;
  spec.max_length = 1 << 20;
  return postgres::encodeArray(spec, Json(items), "tags");
}

// The role that serves (gets SELECT): the user of POSTGRES_DSN, else MCPDB_PG_READER_ROLE, else
// mcp_reader.
std::string readerRole(const Env& env) {
  if (auto r = env.get("MCPDB_PG_READER_ROLE")) return *r;
  if (auto dsn = env.get("POSTGRES_DSN")) {
    char* err = nullptr;
    Owned<PQconninfoOption, PQconninfoFree> opts(PQconninfoParse(dsn->c_str(), &err));
    if (err != nullptr) PQfreemem(err);
    if (opts) {
      for (PQconninfoOption* o = opts.get(); o->keyword != nullptr; ++o) {
        if (std::string_view(o->keyword) == "user" && o->val != nullptr && *o->val != '\0')
          return o->val;
      }
    }
  }
  return "mcp_reader";
}

std::string quoteIdent(PGconn* conn, const std::string& name) {
  char* q = PQescapeIdentifier(conn, name.c_str(), name.size());
  if (q == nullptr) return "\"\"";
  std::string s(q);
  PQfreemem(q);
  return s;
}

Status loadTable(PGconn* conn, const std::vector<DemoDocument>& docs, const DemoLoadContext& ctx,
                 const std::string& reader) {
  const std::string dim = std::to_string(ctx.dimension);
  if (auto r = exec(conn, "begin", "BEGIN"); !r) return r.error();
  if (auto r = exec(conn, "create schema", "CREATE SCHEMA IF NOT EXISTS demo"); !r)
    return r.error();
  // A table made for another dimension is replaced (vector(N) cannot change in place).
  auto typmod = exec(
      conn, "inspect table",
      "SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass('demo.documents') "
      "AND a.attname = 'embedding' AND NOT a.attisdropped");
  if (!typmod) return typmod.error();
  if (PQntuples(typmod->get()) == 1 && std::string(PQgetvalue(typmod->get(), 0, 0)) != dim) {
    if (auto r = exec(conn, "drop table", "DROP TABLE demo.documents"); !r) return r.error();
  }
  const std::string ddl =
      "CREATE TABLE IF NOT EXISTS demo.documents (id text PRIMARY KEY, title text NOT NULL, body "
      "text NOT NULL, "
      "category text NOT NULL, tags text[] NOT NULL, published date NOT NULL, embedding vector(" +
      dim + ") NOT NULL)";
  if (auto r = exec(conn, "create table", ddl); !r) return r.error();
  if (auto r = exec(conn, "create index",
                    "CREATE INDEX IF NOT EXISTS documents_embedding_hnsw ON demo.documents "
                    "USING hnsw (embedding vector_cosine_ops)");
      !r) {
    return r.error();
  }
  if (auto r = exec(conn, "create model table",
                    "CREATE TABLE IF NOT EXISTS demo.embedding_model (model_id text NOT NULL, "
                    "dimension int NOT NULL)");
      !r) {
    return r.error();
  }
  if (auto r = exec(conn, "clear model", "DELETE FROM demo.embedding_model"); !r) return r.error();
  if (auto r = exec(conn, "record model",
                    "INSERT INTO demo.embedding_model (model_id, dimension) VALUES ($1, $2)",
                    {ctx.model_id.c_str(), dim.c_str()});
      !r) {
    return r.error();
  }
  std::vector<std::string> ids;
  for (const auto& d : docs) {
    if (d.embedding.size() != ctx.dimension) {
      return makeError(Code::InvalidArgument,
                       "document " + d.id + " has a vector of the wrong dimension");
    }
    auto tags = textArray(d.tags);
    if (!tags) return tags.error();
    const std::string vec = vectorText(d.embedding);
    if (auto r = exec(
            conn, "upsert document",
            "INSERT INTO demo.documents (id, title, body, category, tags, published, embedding) "
            "VALUES ($1, $2, $3, $4, $5::text[], $6::date, $7::vector) ON CONFLICT (id) DO UPDATE "
            "SET "
            "title = EXCLUDED.title, body = EXCLUDED.body, category = EXCLUDED.category, "
            "tags = EXCLUDED.tags, published = EXCLUDED.published, embedding = EXCLUDED.embedding",
            {d.id.c_str(), d.title.c_str(), d.body.c_str(), d.category.c_str(), tags->c_str(),
             d.published.c_str(), vec.c_str()});
        !r) {
      return r.error();
    }
    ids.push_back(d.id);
  }
  auto id_list = textArray(ids);
  if (!id_list) return id_list.error();
  if (auto r = exec(conn, "remove stale documents",
                    "DELETE FROM demo.documents WHERE id <> ALL($1::text[])", {id_list->c_str()});
      !r) {
    return r.error();
  }
  const std::string role = quoteIdent(conn, reader);
  if (auto r = exec(conn, "grant usage", "GRANT USAGE ON SCHEMA demo TO " + role); !r)
    return r.error();
  if (auto r = exec(conn, "grant select",
                    "GRANT SELECT ON demo.documents, demo.embedding_model TO " + role);
      !r) {
    return r.error();
  }
  if (auto r = exec(conn, "commit", "COMMIT"); !r) return r.error();
  if (auto r = exec(conn, "analyze", "ANALYZE demo.documents"); !r) return r.error();
  return {};
}

}  // namespace

namespace {

Result<std::string> loadPostgres(const std::vector<DemoDocument>& docs,
                                 const DemoLoadContext& ctx) {
  if (ctx.env == nullptr) return makeError(Code::Internal, "no environment");
  const auto admin_dsn = ctx.env->get("MCPDB_PG_ADMIN_DSN");
  if (!admin_dsn) return makeError(Code::FailedPrecondition, "MCPDB_PG_ADMIN_DSN is not set");
  if (ctx.dimension == 0) return makeError(Code::InvalidArgument, "the embedding dimension is 0");
  auto admin = connect(*admin_dsn, "admin connection (MCPDB_PG_ADMIN_DSN)");
  if (!admin) return admin.error();
  const std::string reader = readerRole(*ctx.env);
  if (auto st = loadTable(admin->get(), docs, ctx, reader); !st) {
    PQclear(PQexec(admin->get(), "ROLLBACK"));
    return st.error();
  }

  // Verify through the serving role when its DSN is set (proves the grant), else as admin.
  const auto reader_dsn = ctx.env->get("POSTGRES_DSN");
  auto verifier =
      reader_dsn ? connect(*reader_dsn, "serving connection (POSTGRES_DSN)") : std::move(admin);
  if (!verifier) return verifier.error();
  PGconn* v = verifier->get();
  auto count = exec(v, "verify count", "SELECT count(*) FROM demo.documents");
  if (!count) return count.error();
  const std::string n = PQgetvalue(count->get(), 0, 0);
  if (n != std::to_string(docs.size())) {
    return makeError(Code::Internal, "verify: demo.documents has " + n + " rows, expected " +
                                         std::to_string(docs.size()));
  }
  std::string sanity = "no semantic check (no embedder)";
  if (ctx.embed) {
    auto q = ctx.embed(kSanityQuery);
    if (!q) return q.error();
    const std::string qv = vectorText(*q);
    auto top = exec(v, "verify semantic query",
                    "SELECT id, 1 - (embedding <=> $1::vector) FROM demo.documents ORDER BY "
                    "embedding <=> $1::vector LIMIT 1",
                    {qv.c_str()});
    if (!top) return top.error();
    if (PQntuples(top->get()) != 1)
      return makeError(Code::Internal, "verify: the semantic query returned nothing");
    const std::string id = PQgetvalue(top->get(), 0, 0);
    bool expected_present = false;
    for (const auto& d : docs) expected_present = expected_present || d.id == kSanityExpected;
    if (expected_present && id != kSanityExpected) {
      return makeError(Code::Internal, std::string("verify: the sanity query's top result is ") +
                                           id + ", expected " + kSanityExpected);
    }
    sanity = std::string("top-1 for \"") + kSanityQuery + "\" is " + id + " (score " +
             std::string(PQgetvalue(top->get(), 0, 1)).substr(0, 6) + ")";
  }
  return "demo.documents: " + n + " rows, vector(" + std::to_string(ctx.dimension) +
         ") + HNSW cosine index, model " + ctx.model_id + "; SELECT granted to " + reader +
         "; verified as " + (reader_dsn ? std::string("the serving role") : std::string("admin")) +
         ": " + sanity;
}

}  // namespace

engines::DemoLoader demoLoader() {
  return {"postgres", "MCPDB_PG_ADMIN_DSN",
          [](const Env& env) { return env.has("MCPDB_PG_ADMIN_DSN"); }, &loadPostgres};
}

}  // namespace mcpdb::postgres
