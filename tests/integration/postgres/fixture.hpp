#pragma once
// Shared setup of the Postgres integration tests: the environment written by scripts/servers.sh,
// a test schema `pgtest` created by the admin role (SELECT granted to the reader), a fake embedder
// with fixed vectors, and helpers to build a configured runtime from YAML.

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <string>

#include "common/env.hpp"
#include "common/result.hpp"
#include "embed/embedder.hpp"
#include "engines/postgres/pool.hpp"
#include "engines/postgres/runtime.hpp"
#include "protocol/tool.hpp"

namespace mcpdb::postgres::itest {

// The variable's value; fails the current test (never skips) when it is missing.
std::string requireEnv(const char* name);

// A process-environment Env with POSTGRES_DSN replaced (e.g. by the over-privileged DSN).
Env envWithDsn(const std::string& dsn);

// Creates/refreshes schema pgtest (idempotent, safe under parallel test processes).
void ensureTestSchema();

// Runs one statement as the admin role (test setup and inspection only). Returns the first
// column of the first row, if any.
std::optional<std::string> adminQuery(const std::string& sql);

// Runs one statement on a plain libpq connection of the reader role (outside the server's code
// path): it sees its own role's sessions in pg_stat_activity and may terminate them, which the
// admin role may not. Returns the first column of the first row, if any.
std::optional<std::string> readerQuery(const std::string& sql);

// Runs `sql` (one or more statements) as the cluster's superuser, over the Unix socket named by
// MCPDB_PG_SUPERUSER_DSN (scripts/servers.sh env; reachable only by root or the cluster's OS
// user): creating roles and granting what the admin role cannot. Returns the server's error
// message, empty on success. `database`: another database of the cluster than the DSN's.
std::string superuserExec(const std::string& sql, const std::string& database = "");
// The first value of `sql`'s first row as the superuser, or nothing.
std::optional<std::string> superuserQuery(const std::string& sql);

// A DSN for `user` with `password` on the reader's host, port and database.
std::string dsnFor(const std::string& user, const std::string& password);

// A runtime for the `postgres:` section in `yaml` (a whole config document), on `env`.
std::shared_ptr<Runtime> makeRuntime(const std::string& yaml, const Env& env);
// Same, on the reader's environment.
std::shared_ptr<Runtime> makeRuntime(const std::string& yaml);

// Calls the named query tool of the runtime (`waits`: what its runner offers the call, as
// CallContext::waits).
Result<protocol::ToolOutput> call(Runtime& rt, const std::string& tool, const Json& args,
                                  std::stop_token stop = {},
                                  std::optional<Limits> limits = std::nullopt,
                                  CallWaits* waits = nullptr);

// Deterministic 4-dimensional embedder: a query mentioning "database" points at doc a, etc.
class FakeEmbedder final : public embed::Embedder {
 public:
  explicit FakeEmbedder(std::string id = "fake-4@test") : id_(std::move(id)) {}
  Result<std::vector<embed::Vector>> embed(std::span<const std::string> texts) const override;
  std::size_t dimension() const override { return 4; }
  const std::string& modelId() const override { return id_; }

 private:
  std::string id_;
};

EmbedderFn fakeEmbedder(std::string id = "fake-4@test");

// The built-in default section pointed at the pgtest copy of the demo tables.
std::string defaultSectionOnTestSchema();

}  // namespace mcpdb::postgres::itest
