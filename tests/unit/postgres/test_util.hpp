#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "engines/postgres/config.hpp"

namespace mcpdb::postgres::test {

inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Parsed {
  Settings section;
  std::vector<std::string> errors;
  Limits limits;
};

// Parses a whole config text the way the application does, then the postgres section.
inline Parsed parse(const std::string& text, const std::string& file = "test.yaml") {
  config::Diagnostics diag(file);
  config::Config cfg = config::parseConfig(text, file, {"postgres"}, diag);
  Parsed p;
  p.limits = cfg.limits;
  if (diag.ok()) {
    config::Node root(cfg.root, "", diag);
    p.section = parseSettings(root.child("postgres"), cfg.limits);
  }
  p.errors = diag.errors();
  return p;
}

}  // namespace mcpdb::postgres::test
