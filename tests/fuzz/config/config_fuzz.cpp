// libFuzzer target: the allowlist config loader, including every engine's section parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "engines/engine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mcpdb;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto modules = engines::allEngineModules();
  std::vector<std::string> sections = {"embedding", "http", "audit"};
  for (const auto& m : modules) sections.emplace_back(m->name());
  config::Diagnostics diag("fuzz.yaml");
  config::Config cfg = config::parseConfig(text, "fuzz.yaml", sections, diag);
  if (!diag.ok()) return 0;
  config::Node root(cfg.root, "", diag);
  for (auto& m : modules) m->configure(root.child(m->name()), cfg.limits);
  return 0;
}
