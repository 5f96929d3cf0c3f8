#include "config/sources.hpp"

#include <algorithm>

namespace mcpdb::config {

std::string sourceNameProblem(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 63 &&
                  ((name.front() >= 'a' && name.front() <= 'z') || name.front() == '_') &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                  });
  return ok ? "" : "invalid source name (a lower-case identifier: [a-z_][a-z0-9_]*)";
}

std::string envNameProblem(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 128 &&
                  std::all_of(name.begin(), name.end(),
                              [](char c) {
                                return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
                              }) &&
                  !(name.front() >= '0' && name.front() <= '9');
  return ok ? "" : "must be an environment variable name (A-Z, 0-9, _; not starting with a digit)";
}

void reportUnknownSource(const Node& at, std::string_view wanted,
                         const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  const std::string message = wanted.empty()
                                  ? "must name one of the sources (" + list + "): there are several"
                                  : "names no source (sources: " + list + ")";
  at.errorAt("source", message);
}

}  // namespace mcpdb::config
