#pragma once
// RDS IAM authentication for MySQL/MariaDB sources: the token source a pool hands to its DSN
// (dsn.hpp: Dsn::iam_token). The token is the same SigV4 presigned "connect" URL as for
// PostgreSQL (aws/rds_auth.hpp), made for each new connection: it lasts 15 minutes, so none is
// ever kept for a later connection.

#include <cstdint>
#include <memory>
#include <string>

#include "aws/credential_provider.hpp"
#include "common/env.hpp"
#include "engines/mysql/dsn.hpp"

namespace mcpdb::mysql {

// The region from AWS_REGION, else AWS_DEFAULT_REGION, else "".
std::string awsRegion(const Env& env);

// Tokens signed with `credentials` for `region` at `now()`. An empty region, or credentials that
// cannot be had, are FailedPrecondition errors that name the cause, never a secret.
TokenSource rdsTokenSource(std::string region, std::shared_ptr<aws::CredentialProvider> credentials,
                           aws::Now now = aws::Clock::now);

// The production source: the default AWS credential chain (created on first use) and awsRegion().
TokenSource rdsTokenSource(const Env& env);

}  // namespace mcpdb::mysql
