#pragma once
// The DynamoDB target registry: the operator's `dynamodb:` config section, validated completely.
// Tables are named only here, never by the environment or by an agent.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.hpp"
#include "common/fence.hpp"
#include "common/limits.hpp"
#include "config/node.hpp"
#include "config/section.hpp"
#include "config/sources.hpp"

namespace mcpdb::dynamodb {

// An AWS account, region or endpoint the targets read, by the name targets use (`source:`). The
// file holds no secret: credentials and endpoints come only from the environment variables named
// here. Without `sources:` there is one source `default` with every setting empty: AWS_REGION, the
// standard endpoint variables and the standard AWS credential chain.
struct Source {
  std::string name;
  std::string region = {};        // e.g. eu-west-1; empty: AWS_REGION
  std::string endpoint_env = {};  // holds an endpoint URL; empty: AWS_ENDPOINT_URL_DYNAMODB, ...
  // Static keys from these variables (both or neither); neither: the standard AWS chain.
  std::string access_key_id_env = {};
  std::string secret_access_key_env = {};
  std::string session_token_env = {};  // optional, only with the two above
};

enum class KeyType { S, N, B };

std::string_view keyTypeName(KeyType type);

struct KeyAttribute {
  std::string name;
  KeyType type = KeyType::S;
};

struct ExactCount {
  bool enabled = false;
  std::uint64_t max_items = 100000;  // items a counting scan may read before it stops (and says so)
};

struct Target {
  std::string name;    // logical name shown to agents
  std::string source;  // the source it reads; empty: the only one
  std::string table;   // DynamoDB table name
  std::string description;
  KeyAttribute partition_key;
  std::optional<KeyAttribute> sort_key;
  // Allowed attributes (top-level names), empty = all. Key attributes are always included.
  std::vector<std::string> attributes;
  ExactCount exact_count;
  Limits limits;
  Fence fence = Fence::Inherit;  // untrusted-data fencing of its items (`fence:`)
};

struct Settings {
  bool optional =
      false;      // `optional: true`: start without this engine when its environment is unset
  Limits limits;  // section-wide limits (tool limits)
  std::vector<Source> sources;  // never empty once parsed (default: one source `default`)
  std::vector<Target> targets;

  const Target* find(std::string_view name) const;
  // The source `target` reads (its `source:`, or the only one); nullptr when unknown.
  const Source* sourceOf(const Target& target) const;
};

// Whether `source` can be used with `env`: its region is known and the variables it names are set.
bool sourceUsable(const Source& source, const Env& env);

// DynamoDB's table name rule, [A-Za-z0-9_.-]{3,255}.
bool validTableName(std::string_view s);
// A target name as agents see it: [A-Za-z][A-Za-z0-9_-]{0,63}.
bool validTargetName(std::string_view s);
// An AWS region name: [a-z]{2}(-[a-z0-9]+)+-[0-9]+ with at least two dash-separated parts
// (eu-west-1, us-gov-west-1, cn-north-1).
bool validRegion(std::string_view region);

// The `dynamodb:` section's declaration (config/section.hpp): parsing, JSON Schema, reference.
const config::Section<Settings>& settingsSection();

// Parses `section` (may be absent: empty registry). Problems are reported to section.diag().
Settings parseSettings(const config::Node& section, const Limits& defaults);

// The built-in `dynamodb:` section for the demo data set (tables created by the loader;
// default_section.yaml).
std::string_view defaultSectionYaml();
// The same, as the document yaml-cpp would parse from it, built without parsing.
YAML::Node defaultSectionDocument();

inline constexpr const char* kDemoDocumentsTable = "mcp_demo_documents";
inline constexpr const char* kDemoEventsTable = "mcp_demo_events";

}  // namespace mcpdb::dynamodb
