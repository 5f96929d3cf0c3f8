#pragma once
// JSON Schemas of the Postgres tools, generated from the config. They stay inside the keyword
// subset that protocol::validateSchemaSubset accepts, so argument validation is never partial.

#include "common/json.hpp"
#include "engines/postgres/config.hpp"

namespace mcpdb::postgres {

// Scalar and parameter schemas come from the SQL engines' kit (engines/sql/param_spec.hpp).
using sql::paramSchema;
using sql::scalarSchema;
// {type: object, properties, required, additionalProperties: false}
Json inputSchema(const QueryTool& tool);
// columns + rows + row_count + truncated (+ note)
Json queryOutputSchema();

Json searchInputSchema(const SemanticSearch& search);
Json searchOutputSchema(const SemanticSearch& search);

}  // namespace mcpdb::postgres
