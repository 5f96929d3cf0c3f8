#pragma once
// The libpq connection parameters of a serving connection: where to connect (POSTGRES_DSN, or
// PGHOST/PGPORT/PGUSER/PGDATABASE), how to authenticate (the DSN/libpq's own variables, or a fresh
// RDS IAM token per connection with TLS verify-full), and the session settings every connection
// must carry (read-only default, timeouts, application name, the formats the type mapping expects).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"
#include "engines/postgres/config.hpp"

namespace mcpdb::postgres {

inline constexpr std::string_view kApplicationName = "mcp-dbserver";

struct ConnParams {
  std::vector<std::string> keys;
  std::vector<std::string> values;
  bool iam = false;

  // The value of `key`, or "" (tests; never log the password).
  std::string get(std::string_view key) const;
  void set(std::string_view key, std::string value);
};

// Makes an RDS IAM token for (host, port, user); a secret.
using TokenSource = std::function<Result<std::string>(const std::string& host, std::uint16_t port,
                                                      const std::string& user)>;

// True when RDS IAM authentication is to be used (config flag, else MCPDB_PG_IAM_AUTH=1|true).
bool iamAuthEnabled(const PoolSettings& pool, const Env& env);

// The `options` value: -c settings applied at connect time (server-side, before any query).
std::string sessionOptions(const PoolSettings& pool);

// "a,b,pg_temp": the search_path every connection pins (postgres.search_path, pg_temp last).
std::string searchPathSetting(const std::vector<std::string>& schemas);

// Builds the parameters for one new connection of `source` (its DSN from its `dsn_env`; `pool`
// already carries its TLS and IAM settings: poolFor). `token` is called only in IAM mode (each call
// is a new token). Errors name the variable, never the DSN or any part of it.
Result<ConnParams> buildConnParams(const PoolSettings& pool, const Env& env,
                                   const TokenSource& token,
                                   const Source& source = implicitSource());

// The production token source: AWS credential chain + aws::generateRdsAuthToken, region from
// AWS_REGION (or AWS_DEFAULT_REGION).
TokenSource rdsTokenSource(const Env& env);

}  // namespace mcpdb::postgres
