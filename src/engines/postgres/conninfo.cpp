#include "engines/postgres/conninfo.hpp"

#include <libpq-fe.h>

#include <memory>
#include <mutex>

#include "aws/credential_provider.hpp"
#include "aws/rds_auth.hpp"
#include "common/handle.hpp"

namespace mcpdb::postgres {

std::string ConnParams::get(std::string_view key) const {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return values[i];
  }
  return {};
}

void ConnParams::set(std::string_view key, std::string value) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) {
      values[i] = std::move(value);
      return;
    }
  }
  keys.emplace_back(key);
  values.push_back(std::move(value));
}

bool iamAuthEnabled(const PoolSettings& pool, const Env& env) {
  if (pool.iam_auth) return *pool.iam_auth;
  const auto v = env.get("MCPDB_PG_IAM_AUTH");
  return v && (*v == "1" || *v == "true" || *v == "yes" || *v == "on");
}

std::string sessionOptions(const PoolSettings& pool) {
  // Later -c settings win over the DSN's own `options`, which are kept in front of these.
  return "-c default_transaction_read_only=on"
         " -c statement_timeout=" +
         std::to_string(pool.statement_timeout.count()) +
         " -c idle_in_transaction_session_timeout=" +
         std::to_string(pool.idle_in_transaction_timeout.count()) +
         " -c DateStyle=ISO -c IntervalStyle=iso_8601 -c TimeZone=UTC -c bytea_output=hex"
         " -c extra_float_digits=1 -c standard_conforming_strings=on" +
         std::string(pool.jit ? "" : " -c jit=off") +
         " -c search_path=" + searchPathSetting(pool.search_path);
}

std::string searchPathSetting(const std::vector<std::string>& schemas) {
  // Names are plain lower-case identifiers (checked by the config), so they need no quoting;
  // pg_temp last means a temporary object is never found before the listed schemas.
  std::string out;
  for (const std::string& s : schemas) out += s + ",";
  return out + "pg_temp";
}

namespace {

using ConninfoOptions = Owned<PQconninfoOption, PQconninfoFree>;

}  // namespace

Result<ConnParams> buildConnParams(const PoolSettings& pool, const Env& env,
                                   const TokenSource& token, const Source& source) {
  ConnParams p;
  p.iam = iamAuthEnabled(pool, env);
  std::string dsn_options;
  if (const auto dsn = env.get(source.dsn_env)) {
    char* err = nullptr;
    ConninfoOptions opts(PQconninfoParse(dsn->c_str(), &err));
    if (err != nullptr) PQfreemem(err);  // may quote the DSN: never shown
    if (!opts) {
      return makeError(Code::FailedPrecondition,
                       source.dsn_env + " is not a valid PostgreSQL connection string");
    }
    for (PQconninfoOption* o = opts.get(); o->keyword != nullptr; ++o) {
      if (o->val == nullptr) continue;
      const std::string_view key = o->keyword;
      if (key == "options") {
        dsn_options = o->val;
        continue;
      }
      p.set(key, o->val);
    }
  } else if (!source.implicit) {
    // A declared source reads its DSN from its own variable only.
    return makeError(Code::FailedPrecondition, source.dsn_env + " (its DSN) is not set");
  } else if (!p.iam) {
    return makeError(
        Code::FailedPrecondition,
        "PostgreSQL is not configured: set POSTGRES_DSN, or PGHOST, PGUSER, PGDATABASE with "
        "MCPDB_PG_IAM_AUTH=1 and AWS_REGION");
  }
  // Plain libpq variables fill what the DSN leaves out (libpq would read them too; IAM needs them
  // here).
  for (const auto& [var, key] : {std::pair{"PGHOST", "host"}, std::pair{"PGPORT", "port"},
                                 std::pair{"PGUSER", "user"}, std::pair{"PGDATABASE", "dbname"}}) {
    if (p.get(key).empty()) {
      if (auto v = env.get(var)) p.set(key, *v);
    }
  }

  p.set("application_name", std::string(kApplicationName));
  p.set("fallback_application_name", std::string(kApplicationName));
  p.set("client_encoding", "UTF8");
  const auto secs = (pool.connect_timeout.count() + 999) / 1000;
  p.set("connect_timeout", std::to_string(secs < 2 ? 2 : secs));
  p.set("options",
        dsn_options.empty() ? sessionOptions(pool) : dsn_options + " " + sessionOptions(pool));
  if (!pool.sslmode.empty()) p.set("sslmode", pool.sslmode);
  const std::string rootcert =
      !pool.sslrootcert.empty() ? pool.sslrootcert : env.get("MCPDB_PG_SSLROOTCERT").value_or("");
  if (!rootcert.empty()) p.set("sslrootcert", rootcert);

  if (p.iam) {
    const std::string host = p.get("host");
    const std::string user = p.get("user");
    if (host.empty() || user.empty() || p.get("dbname").empty()) {
      return makeError(
          Code::FailedPrecondition,
          "RDS IAM authentication needs the host, user and database (PGHOST, PGUSER, PGDATABASE or "
          "POSTGRES_DSN)");
    }
    if (host.find(',') != std::string::npos || host.front() == '/') {
      return makeError(Code::FailedPrecondition,
                       "RDS IAM authentication needs exactly one TCP host name");
    }
    if (rootcert.empty()) {
      return makeError(Code::FailedPrecondition,
                       "RDS IAM authentication needs a CA bundle for verify-full: set "
                       "postgres.pool.sslrootcert or "
                       "MCPDB_PG_SSLROOTCERT (e.g. the RDS global bundle)");
    }
    const std::string port_s = p.get("port").empty() ? "5432" : p.get("port");
    std::uint16_t port = 0;
    try {
      const int v = std::stoi(port_s);
      if (v <= 0 || v > 65535) throw std::out_of_range("port");
      port = static_cast<std::uint16_t>(v);
    } catch (...) {
      return makeError(Code::FailedPrecondition, "the PostgreSQL port is not a valid number");
    }
    if (!token) return makeError(Code::Internal, "no RDS token source");
    auto t = token(host, port, user);
    if (!t) return t.error();
    p.set("port", std::to_string(port));
    p.set("password", std::move(*t));
    p.set("sslmode", "verify-full");
    p.set("sslrootcert", rootcert);
  }
  return p;
}

TokenSource rdsTokenSource(const Env& env) {
  struct State {
    std::mutex mu;
    std::unique_ptr<aws::CredentialProvider> chain;
    std::string region;
  };
  auto state = std::make_shared<State>();
  state->region = env.get("AWS_REGION").value_or(env.get("AWS_DEFAULT_REGION").value_or(""));
  auto env_copy = std::make_shared<Env>(env);
  return [state, env_copy](const std::string& host, std::uint16_t port,
                           const std::string& user) -> Result<std::string> {
    if (state->region.empty()) {
      return makeError(Code::FailedPrecondition, "RDS IAM authentication needs AWS_REGION");
    }
    aws::CredentialProvider* chain = nullptr;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      if (!state->chain) state->chain = aws::makeDefaultCredentialChain(*env_copy);
      chain = state->chain.get();
    }
    auto creds = chain->get();
    if (!creds) {
      return makeError(Code::FailedPrecondition, "RDS IAM authentication: no AWS credentials (" +
                                                     creds.error().message + ")");
    }
    return aws::generateRdsAuthToken(host, port, user, state->region, *creds, aws::Clock::now());
  };
}

}  // namespace mcpdb::postgres
