#pragma once
// The MongoDB tool surface: list_mongodb_targets, get_mongodb_document, list_mongodb_documents,
// count_mongodb_documents, and one semantic-search tool per target with `vector_search`
// (semantic_search_mongodb by default). No tool takes a filter, a pipeline or a field name.

#include <atomic>
#include <memory>
#include <vector>

#include "common/cursor.hpp"
#include "engines/engine.hpp"
#include "engines/mongodb/client.hpp"
#include "engines/mongodb/runtime.hpp"
#include "engines/mongodb/config.hpp"
#include "protocol/tool.hpp"

namespace mcpdb::mongodb {

// The names of the tools that serve every target (a semantic-search tool serves one target and is
// named by its config).
inline constexpr const char* kListTargetsTool = "list_mongodb_targets";
inline constexpr const char* kGetDocumentTool = "get_mongodb_document";
inline constexpr const char* kListDocumentsTool = "list_mongodb_documents";
inline constexpr const char* kCountDocumentsTool = "count_mongodb_documents";

// State shared by the tool handlers of one engine instance.
class EngineState {
 public:
  EngineState(Settings settings, const engines::EngineServices& services);

  const Settings& settings() const { return settings_; }
  const CursorCodec& cursors() const { return codec_; }
  Runtime& runtime() { return runtime_; }
  const Runtime& runtime() const { return runtime_; }
  // The client slot of `target` (one of settings().targets), resolved when the state was made;
  // nullptr only for a target of another Settings.
  SourceClient* sourceOf(const Target& target) const;
  // The only source's name, or "" when there are several: what a call reads before its target
  // is known.
  const std::string& soleSource() const { return sole_source_; }
  Result<std::shared_ptr<embed::Embedder>> embedder() const;

  // Whether $vectorSearch works on this server: learned once, on the first semantic search.
  enum class Atlas { Unknown, Available, Unavailable };
  Atlas atlas() const { return atlas_.load(); }
  void setAtlas(Atlas a) { atlas_.store(a); }

 private:
  Settings settings_;
  Runtime runtime_;
  std::vector<SourceClient*> target_sources_;  // by target, in settings_.targets order
  std::string sole_source_;
  std::function<Result<std::shared_ptr<embed::Embedder>>()> embedder_;
  CursorCodec codec_;
  std::atomic<Atlas> atlas_{Atlas::Unknown};
};

// The tools for the configured targets (every one read-only).
std::vector<protocol::Tool> buildTools(const std::shared_ptr<EngineState>& state);

}  // namespace mcpdb::mongodb
