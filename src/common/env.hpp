#pragma once
// Environment lookups go through this seam so tests never mutate the process environment.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mcpdb {

class Env {
 public:
  using Lookup = std::function<std::optional<std::string>(std::string_view)>;

  // The real process environment.
  static Env process();
  // A fixed map, for tests.
  static Env fromMap(std::map<std::string, std::string, std::less<>> vars);

  explicit Env(Lookup lookup) : lookup_(std::move(lookup)) {}

  // The value, or nullopt when unset or empty.
  std::optional<std::string> get(std::string_view name) const { return lookup_(name); }
  bool has(std::string_view name) const { return get(name).has_value(); }

 private:
  Lookup lookup_;
};

}  // namespace mcpdb
