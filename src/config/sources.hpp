#pragma once
// Named sources, the same for every engine: the databases (or accounts, regions, clusters) an
// engine reads, by the name its tools use.
//
//   <engine>:
//     sources:                 # optional; without it one source `default` with the engine's
//       default: {...}         # usual environment variables
//       reports: {dsn_env: REPORTS_DSN}
//     tools:
//       t: {source: reports, ...}   # `source:` may be left out when there is only one
//
// Each engine declares its own source settings (a DSN's environment variable, a region, IAM);
// what is shared is here: the name rules, how a tool's `source:` is resolved, and its errors. A
// source's secrets are always read from the environment, never from the file.

#include <string>
#include <string_view>
#include <vector>

#include "config/node.hpp"

namespace mcpdb::config {

// The name of the source used when a section declares no `sources:`.
inline constexpr std::string_view kDefaultSourceName = "default";

// "" when `name` is a source name (a lower-case identifier, 1-63 of [a-z0-9_], not starting with a
// digit), else the message.
std::string sourceNameProblem(std::string_view name);
// "" when `name` is an environment variable name (1-128 of [A-Z0-9_], not starting with a digit),
// else the message.
std::string envNameProblem(std::string_view name);

// The source a tool's `source:` names among `sources` (each with a `name` member); an empty
// `wanted` is the only source. nullptr when there is none such.
template <class S>
const S* findSource(const std::vector<S>& sources, std::string_view wanted) {
  if (wanted.empty()) return sources.size() == 1 ? &sources.front() : nullptr;
  for (const auto& s : sources) {
    if (s.name == wanted) return &s;
  }
  return nullptr;
}

// The error at a tool's `source:` (`at` is the tool's node) when `wanted` resolves to no source.
void reportUnknownSource(const Node& at, std::string_view wanted,
                         const std::vector<std::string>& names);

// Resolves a tool's `source:`; reports at `at` and returns nullptr when it names none.
template <class S>
const S* resolveSource(const std::vector<S>& sources, std::string_view wanted, const Node& at) {
  if (const S* found = findSource(sources, wanted)) return found;
  std::vector<std::string> names;
  for (const auto& s : sources) names.push_back(s.name);
  reportUnknownSource(at, wanted, names);
  return nullptr;
}

}  // namespace mcpdb::config
