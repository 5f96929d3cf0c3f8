#pragma once
// An engine's demo-data loader: how the demo data set (data/demo_documents.jsonl) gets into the
// engine's local server. Each engine writes its own in src/engines/<name>/demo_loader.cpp, built
// into its own library (mcpdb_engine_<name>_demo) that only the loader executable
// (mcp-dbserver-load) links: it is the only code in this project that writes to a database, with
// admin credentials the server never reads. The serving binary links none of it.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"

namespace mcpdb::engines {

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

struct DemoLoadContext {
  const Env* env = nullptr;
  std::string model_id;  // Embedder::modelId(), stored with the vectors
  std::size_t dimension = 0;
  // Embeds a query for the verifier's semantic sanity check.
  std::function<Result<std::vector<float>>(const std::string&)> embed;
};

// Reads a JSON Lines file of demo documents; an error names the first bad line.
Result<std::vector<DemoDocument>> readDemoDocuments(const std::string& path);

// What an engine offers the loader executable. `load` is idempotent (re-running replaces the demo
// data), then verifies counts and a semantic sanity query; it returns a one-line summary.
struct DemoLoader {
  std::string_view engine;
  // The admin environment that enables it, for the "skipped" message.
  std::string_view admin_env;
  bool (*configured)(const Env& env) = nullptr;
  Result<std::string> (*load)(const std::vector<DemoDocument>& docs,
                              const DemoLoadContext& ctx) = nullptr;
};

// Every engine's loader in this build, one generated line per engine (all_demo_loaders.cpp).
std::vector<DemoLoader> allDemoLoaders();

}  // namespace mcpdb::engines
