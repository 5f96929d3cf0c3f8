#pragma once
// The MongoDB tool surface: list_mongodb_targets, get_mongodb_document, list_mongodb_documents,
// count_mongodb_documents, and one semantic-search tool per target with `vector_search`
// (semantic_search_mongodb by default). No tool takes a filter, a pipeline or a field name.

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "common/cursor.hpp"
#include "engines/engine.hpp"
#include "engines/mongodb/client.hpp"
#include "engines/mongodb/settings.hpp"
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
  // The client pool, created on first use from MONGODB_URI / MONGODB_DATABASE.
  Result<Client*> client();
  // The client pool if a call already created it (metrics: sampling never connects).
  Client* clientIfCreated();
  Result<std::shared_ptr<embed::Embedder>> embedder() const;

  // Whether $vectorSearch works on this server: learned once, on the first semantic search.
  enum class Atlas { Unknown, Available, Unavailable };
  Atlas atlas() const { return atlas_.load(); }
  void setAtlas(Atlas a) { atlas_.store(a); }

 private:
  Settings settings_;
  Env env_;
  std::function<Result<std::shared_ptr<embed::Embedder>>()> embedder_;
  CursorCodec codec_;
  std::mutex mu_;
  std::unique_ptr<Client> client_;
  std::atomic<Atlas> atlas_{Atlas::Unknown};
};

// The tools for the configured targets (every one read-only).
std::vector<protocol::Tool> buildTools(const std::shared_ptr<EngineState>& state);

}  // namespace mcpdb::mongodb
