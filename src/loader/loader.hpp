#pragma once
// The demo-data loader: a separate executable (mcp-dbserver-load) with admin credentials. It is
// the only code in this project that writes to a database; the serving binary links none of it.

#include <functional>
#include <string>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"

namespace mcpdb::loader {

// One line of data/demo_documents.jsonl plus its embedding.
struct DemoDocument {
  std::string id;
  std::string title;
  std::string body;
  std::string category;
  std::vector<std::string> tags;
  std::string published;  // YYYY-MM-DD
  std::vector<float> embedding;
};

struct LoadContext {
  const Env* env = nullptr;
  std::string model_id;  // Embedder::modelId(), stored with the vectors
  std::size_t dimension = 0;
  // Embeds a query for the verifier's semantic sanity check.
  std::function<Result<std::vector<float>>(const std::string&)> embed;
};

// Reads a JSON Lines file of demo documents; an error names the first bad line.
Result<std::vector<DemoDocument>> readDemoDocuments(const std::string& path);

// Each engine's loader lives in its own file (src/loader/<engine>_loader.cpp). Each is idempotent
// (re-running replaces the demo data), then verifies counts and a semantic sanity query.
// They return a one-line summary on success.
Result<std::string> loadPostgres(const std::vector<DemoDocument>& docs, const LoadContext& ctx);
Result<std::string> loadDynamoDb(const std::vector<DemoDocument>& docs, const LoadContext& ctx);
Result<std::string> loadMongoDb(const std::vector<DemoDocument>& docs, const LoadContext& ctx);

}  // namespace mcpdb::loader
