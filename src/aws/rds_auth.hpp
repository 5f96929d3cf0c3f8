#pragma once
// RDS IAM database authentication token: a SigV4-presigned "connect" URL without its scheme, used
// as the database password. Valid for 15 minutes; generate a fresh one for every new connection.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "aws/credentials.hpp"

namespace mcpdb::aws {

inline constexpr std::chrono::seconds kRdsTokenLifetime{900};

// "host:port/?Action=connect&DBUser=...&X-Amz-Algorithm=...&X-Amz-Expires=900&...&X-Amz-Signature=..."
// (parameters in canonical order). The token is a secret: never log it.
std::string generateRdsAuthToken(std::string_view host, std::uint16_t port, std::string_view dbUser,
                                 std::string_view region, const Credentials& credentials,
                                 Clock::time_point now);

}  // namespace mcpdb::aws
