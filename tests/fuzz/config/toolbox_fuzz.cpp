// libFuzzer target: import-toolbox's reading and conversion of a Toolbox tools file (both forms).
#include <cstddef>
#include <cstdint>
#include <string>

#include "app/import_toolbox.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto made = mcpdb::app::convertToolbox(text, "fuzz.yaml");
  // A conversion never copies a literal password into the config.
  if (made && text.find("password: fuzz-secret-value") != std::string::npos &&
      made->config.find("fuzz-secret-value") != std::string::npos) {
    __builtin_trap();
  }
  return 0;
}
