// mcp-dbserver-load: embeds data/demo_documents.jsonl with the same local model the server uses
// and loads it into every engine whose admin environment is set, then verifies each load.
// A separate executable on purpose: it is the only code that writes, and it uses admin
// credentials the server never sees.
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>

#include "common/json.hpp"
#include "embed/embedder.hpp"
#include "engines/demo.hpp"

namespace {

using mcpdb::Json;
using mcpdb::engines::DemoDocument;

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "mcp-dbserver-load: load the demo data set (admin credentials; never used by the server)"};
  std::string data = "data/demo_documents.jsonl";
  std::string engines = "auto";
  cli.add_option("--data", data, "JSON Lines file of demo documents");
  cli.add_option(
      "--engines", engines,
      "Comma-separated engines to load, or auto (every engine whose admin environment is set)");
  CLI11_PARSE(cli, argc, argv);

  const mcpdb::Env env = mcpdb::Env::process();
  auto read = mcpdb::engines::readDemoDocuments(data);
  if (!read) {
    std::cerr << "[load] " << read.error().message << "\n";
    return 2;
  }
  std::vector<DemoDocument>& docs = *read;
  std::cerr << "[load] " << docs.size() << " documents from " << data << "\n";

  mcpdb::embed::EmbedConfig cfg;
  const auto t0 = std::chrono::steady_clock::now();
  auto embedder = mcpdb::embed::makeEmbedder(cfg, env);
  if (!embedder) {
    std::cerr << "[load] embedding model: " << embedder.error().message << "\n";
    return 3;
  }
  std::vector<std::string> texts;
  texts.reserve(docs.size());
  // The stored vector embeds title and body together; queries are embedded alone.
  for (const auto& d : docs) texts.push_back(d.title.empty() ? d.body : d.title + ". " + d.body);
  auto vectors = (*embedder)->embed(texts);
  if (!vectors) {
    std::cerr << "[load] embedding failed: " << vectors.error().message << "\n";
    return 3;
  }
  for (std::size_t i = 0; i < docs.size(); ++i) docs[i].embedding = std::move((*vectors)[i]);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::cerr << "[load] embedded with " << (*embedder)->modelId() << " (" << (*embedder)->dimension()
            << "-d) in " << ms << " ms\n";

  mcpdb::engines::DemoLoadContext ctx;
  ctx.env = &env;
  ctx.model_id = (*embedder)->modelId();
  ctx.dimension = (*embedder)->dimension();
  const mcpdb::embed::Embedder* e = embedder->get();
  ctx.embed = [e](const std::string& text) { return e->embedOne(text); };

  int failures = 0;
  int loaded = 0;
  for (const auto& l : mcpdb::engines::allDemoLoaders()) {
    const std::string name(l.engine);
    const bool wanted = engines == "auto"
                            ? l.configured(env)
                            : ("," + engines + ",").find("," + name + ",") != std::string::npos;
    if (!wanted) {
      std::cerr << "[load] " << name << ": skipped (" << l.admin_env << " not set)\n";
      continue;
    }
    auto r = l.load(docs, ctx);
    if (r) {
      ++loaded;
      std::cerr << "[load] " << name << ": " << *r << "\n";
    } else {
      ++failures;
      std::cerr << "[load] " << name << ": FAILED: " << r.error().message << "\n";
    }
  }
  if (loaded == 0 && failures == 0)
    std::cerr << "[load] nothing to load: no engine's admin environment is set\n";
  return failures == 0 ? 0 : 1;
}
