// libFuzzer target: import-toolbox's reading and conversion of a Toolbox tools file (both forms).
//
// Oracles: (1) what the conversion writes outside the YAML emitter stays in its place: the
// config's comments are one leading block of printable lines, and the .env template is comment
// lines and NAME=VALUE lines of printable ASCII without spaces (a line break in a name would add
// a config key or an environment variable). (2) A password written in the file is never copied
// into anything the conversion writes.
// The file may legitimately hold the same text elsewhere (a description, a tool name, a toolset
// name), which the conversion copies as it should; so the oracle holds only when, as the YAML
// parser reads the file, the one scalar holding the secret is the value of a `password` key.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "app/import_toolbox.hpp"

namespace {

constexpr const char* kSecret = "fuzz-secret-value";

struct Count {
  int holding = 0;    // scalars (keys and values) whose text contains the secret
  int passwords = 0;  // of which: the value of a `password` key, exactly the secret
};

void walk(const YAML::Node& n, Count& c, int depth) {
  if (depth > 64) return;
  if (n.IsScalar()) {
    if (n.Scalar().find(kSecret) != std::string::npos) ++c.holding;
  } else if (n.IsSequence()) {
    for (const auto& x : n) walk(x, c, depth + 1);
  } else if (n.IsMap()) {
    for (const auto& kv : n) {
      walk(kv.first, c, depth + 1);
      walk(kv.second, c, depth + 1);
      if (kv.first.IsScalar() && kv.first.Scalar() == "password" && kv.second.IsScalar() &&
          kv.second.Scalar() == kSecret)
        ++c.passwords;
    }
  }
}

bool printable(const std::string& line, bool spaces) {
  for (const char ch : line) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || (c == ' ' && !spaces)) return false;
  }
  return true;
}

bool inPlace(const mcpdb::app::ToolboxImport& made) {
  std::istringstream config(made.config);
  std::string line;
  bool in_yaml = false;
  while (std::getline(config, line)) {
    if (line.rfind('#', 0) != 0) {
      in_yaml = true;
    } else if (in_yaml || !printable(line, true)) {
      return false;
    }
  }
  std::istringstream env(made.env_template);
  while (std::getline(env, line)) {
    if (line.rfind("# ", 0) == 0 ? !printable(line, true) : !printable(line, false)) return false;
    if (line.rfind("# ", 0) != 0) {
      const auto eq = line.find('=');
      if (eq == std::string::npos || eq == 0) return false;
      for (std::size_t i = 0; i < eq; ++i) {
        const char c = line[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
      }
    }
  }
  return true;
}

// Whether the only place the file holds the secret is a password.
bool onlyAsPassword(const std::string& text) {
  if (text.find(kSecret) == std::string::npos) return false;
  Count c;
  try {
    for (const auto& doc : YAML::LoadAll(text)) walk(doc, c, 0);
  } catch (const YAML::Exception&) {
    return false;
  }
  return c.holding == 1 && c.passwords == 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto made = mcpdb::app::convertToolbox(text, "fuzz.yaml");
  if (!made) return 0;
  if (!inPlace(*made)) __builtin_trap();
  if (!onlyAsPassword(text)) return 0;
  std::string written = made->config + made->env_template;
  for (const auto* list : {&made->converted, &made->refused, &made->notes}) {
    for (const auto& s : *list) written += s;
  }
  if (written.find(kSecret) != std::string::npos) __builtin_trap();
  return 0;
}
