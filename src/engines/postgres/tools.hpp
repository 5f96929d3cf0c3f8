#pragma once
// The PostgreSQL engine's tools: one per allowlisted statement, and the semantic search.

#include <memory>
#include <string>

#include "common/result.hpp"
#include "engines/postgres/config.hpp"
#include "engines/postgres/runtime.hpp"
#include "protocol/tool.hpp"

namespace mcpdb::postgres {

// The query tool `t`, served by `rt`, the runtime of its source `source` (never connects).
Result<protocol::Tool> queryTool(const QueryTool& t, const std::string& source,
                                 std::shared_ptr<Runtime> rt);
// The semantic search tool `s`, served by `rt`, embedding queries with `embedder`.
Result<protocol::Tool> searchTool(const SemanticSearch& s, const std::string& source,
                                  std::shared_ptr<Runtime> rt, EmbedderFn embedder);

}  // namespace mcpdb::postgres
