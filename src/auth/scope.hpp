#pragma once
// What a client may see and call: whole engines and/or single tools of an engine.
// Text form (CLI and config): comma-separated entries, each `*`, `ENGINE` or
// `ENGINE:TOOL[:TOOL...]`, e.g. "postgres,mongodb:get_mongodb_document:count_mongodb_documents".

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace mcpdb::auth {

class Scope {
 public:
  static Result<Scope> parse(std::string_view text);
  static Scope everything();

  bool allows(std::string_view engine, std::string_view tool) const;
  bool empty() const { return !all_ && engines_.empty() && tools_.empty(); }
  // Canonical text form (sorted), parseable again.
  std::string toString() const;
  // What it names, for checking it against a server's engines and tools.
  bool all() const { return all_; }
  const std::set<std::string, std::less<>>& engines() const { return engines_; }
  const std::map<std::string, std::set<std::string, std::less<>>, std::less<>>& tools() const {
    return tools_;
  }

 private:
  bool all_ = false;
  std::set<std::string, std::less<>> engines_;  // every tool of these
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> tools_;  // engine -> tools
};

}  // namespace mcpdb::auth
