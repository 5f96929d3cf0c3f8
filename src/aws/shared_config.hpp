#pragma once
// Parser for the AWS shared credentials/config files. Hand-written: the format is INI-like but not
// INI (`[profile x]` sections in the config file, `#`/`;` comments, indented sub-properties such as
// `s3 =` blocks), and Boost.PropertyTree's INI reader rejects valid files of this shape.

#include <map>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace mcpdb::aws {

using ProfileValues = std::map<std::string, std::string>;
using Profiles = std::map<std::string, ProfileValues>;

enum class SharedFileKind { Credentials, Config };

// Profiles of one file, keyed by profile name ("default", "x" for "[profile x]" in config). Keys
// are lower-cased. Errors name the file and line, never the line's content (it may be a secret).
Result<Profiles> parseSharedFile(std::string_view text, SharedFileKind kind,
                                 std::string_view fileLabel);

}  // namespace mcpdb::aws
