#pragma once
// AWS credentials. Deliberately not printable: no operator<<, no to-string of the secret;
// describe() gives the source and a redacted key id only. PrintTo keeps GoogleTest from dumping raw
// bytes.

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace mcpdb::aws {

using Clock = std::chrono::system_clock;

struct Credentials {
  std::string accessKeyId;
  std::string secretAccessKey;
  std::string sessionToken;                     // empty for long-term keys
  std::optional<Clock::time_point> expiration;  // set for temporary credentials
  std::string source;  // e.g. "environment", "profile default", "web identity"

  bool temporary() const { return !sessionToken.empty(); }
  // "<source> (AKIA****MPLE)" plus the expiry time when set. Never the secret or the token.
  std::string describe() const;
};

// "AKIA****ABCD" (first and last four) or "****" for short ids.
std::string redactKeyId(std::string_view accessKeyId);

// "2015-08-30T12:36:00Z".
std::string formatIso8601(Clock::time_point t);
// Parses "YYYY-MM-DDTHH:MM:SS[.fff](Z|+00:00)" (the form STS, ECS and IMDS return). Empty on
// failure.
std::optional<Clock::time_point> parseIso8601(std::string_view s);

// GoogleTest printer hook (found by ADL): prints describe(), never the secret.
// NOLINTNEXTLINE(readability-identifier-naming): GoogleTest requires the name PrintTo.
void PrintTo(const Credentials& credentials, std::ostream* os);

}  // namespace mcpdb::aws
