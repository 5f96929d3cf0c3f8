#pragma once
// The `mongodb:` allowlist section: a fixed registry of logical targets (collection, id type,
// allowed fields, count and vector-search policy), declared once (config/section.hpp). Parsed and
// validated completely at startup; identifiers used in commands come only from here, never from
// tool arguments.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fence.hpp"
#include "common/limits.hpp"
#include "config/node.hpp"
#include "config/section.hpp"
#include "config/sources.hpp"

namespace mcpdb::mongodb {

inline constexpr std::string_view kDefaultUriEnv = "MONGODB_URI";
inline constexpr std::string_view kDefaultDatabaseEnv = "MONGODB_DATABASE";

// A MongoDB deployment and database the targets read, by the name they use (`sources:`; without
// it, one source `default` from MONGODB_URI and MONGODB_DATABASE). The URI (credentials, TLS
// options) comes only from an environment variable, never from the file.
struct Source {
  std::string name;
  std::string uri_env;
  std::string database_env;  // the variable holding the database name, or
  std::string database;      // the name itself (one of the two)
};

// How `_id` values given by an agent are converted before they reach a filter.
enum class IdType { ObjectId, String, Int };
std::string_view idTypeName(IdType type);

// Which semantic-search implementation runs: Atlas `$vectorSearch`, the exact cosine scan, or
// `$vectorSearch` with a fallback once the server proves it has no Atlas Search.
enum class SearchMethod { Auto, Atlas, Exact };

// The JSON type an agent gives for a filter value; converted to one BSON type.
enum class FilterType { String, Integer, Number, Boolean };
std::string_view filterTypeName(FilterType type);

struct FilterField {
  std::string path;
  FilterType type = FilterType::String;
  std::string description;
};

struct VectorSearch {
  std::string tool = "semantic_search_mongodb";
  std::string description;
  std::string index;  // Atlas Vector Search index name
  std::string path;   // the vector field
  std::string id_field = "_id";
  std::string title_field;
  std::string text_field;
  std::vector<std::string> metadata_fields;
  // numCandidates = min(max(k * multiplier, k), max): Atlas recommends 10-20x k.
  std::uint32_t num_candidates_multiplier = 10;
  std::uint32_t num_candidates_max = 1000;
  std::uint32_t max_k = 20;
  std::uint32_t default_k = 5;
  std::vector<FilterField> filter_fields;
  SearchMethod method = SearchMethod::Auto;
  std::uint32_t dimensions = 0;  // 0: taken from the embedder
  std::uint32_t exact_scan_max_docs = 10000;
  std::string source;  // the source it searches; after parsing, always a declared source's name
};

struct Target {
  std::string name;
  std::string collection;
  std::string description;
  IdType id_type = IdType::ObjectId;
  std::vector<std::string> projection;  // the only fields ever returned (plus _id)
  bool sort_descending = false;         // default sort is on _id (the cursor is an _id position)
  std::uint64_t count_exact_max = 100000;
  std::optional<VectorSearch> vector_search;
  Fence fence = Fence::Inherit;  // untrusted-data fencing of its documents (`fence:`)
  std::string source;            // after parsing, always a declared source's name
};

struct Settings {
  bool optional =
      false;  // `optional: true`: start without this engine when its environment is unset
  std::string read_preference =
      "primary";             // primary|primaryPreferred|secondary|secondaryPreferred|nearest
  std::string read_concern;  // empty: the server's default; else local|available|majority
  Limits limits;
  std::vector<Source> sources;  // at least one after parsing
  std::vector<Target> targets;

  const Target* find(std::string_view name) const;
};

// The section's declaration: parsing, JSON Schema and reference from one place.
const config::Section<Settings>& settingsSection();

// Parses and validates the section (absent: no targets, the default source); problems go to
// `section.diag()`.
Settings parseSettings(const config::Node& section, const Limits& defaults);

// Why `path` is not an acceptable field path ("" when it is): non-empty dot-separated segments of
// letters, digits, '_' and '-', none starting with '$'.
std::string fieldPathProblem(std::string_view path);
// Why `name` is not an acceptable database name ("" when it is).
std::string databaseNameProblem(std::string_view name);
// Why `name` is not an acceptable collection name ("" when it is).
std::string collectionNameProblem(std::string_view name);

// The environment variables a source reads (its URI's, and its database's unless the file names
// the database).
std::vector<std::string> sourceVariables(const Source& source);

// The built-in section for the demo data set (YAML, starting with "mongodb:";
// default_section.yaml).
std::string_view defaultSectionYaml();
// The same, as the document yaml-cpp would parse from it, built without parsing.
YAML::Node defaultSectionDocument();

}  // namespace mcpdb::mongodb
