#pragma once
// Internal helpers shared by the credential providers.

#include <string>
#include <string_view>

#include "aws/credentials.hpp"
#include "common/result.hpp"

namespace mcpdb::aws::detail {

std::string trim(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

// Reads a small file (token, credentials) whole; the error names the path, never the content.
Result<std::string> readSmallFile(const std::string& path, std::string_view what);

// Parses the JSON document of the container and instance-metadata endpoints
// ({"AccessKeyId","SecretAccessKey","Token","Expiration"}). Errors never echo the body.
Result<Credentials> credentialsFromJson(std::string_view body, const std::string& source);

// "~/x" -> "$HOME/x" when home is known.
std::string expandHome(const std::string& path, const std::string& home);

}  // namespace mcpdb::aws::detail
