#include "engines/postgres/schema_gen.hpp"

namespace mcpdb::postgres {

Json inputSchema(const QueryTool& tool) {
  return sql::paramsInputSchema(tool.parameters);
}

namespace {

Json resultEnvelope(Json rows_schema, const std::string& rows_key) {
  Json props{
      {rows_key, std::move(rows_schema)},
      {"row_count", {{"type", "integer"}, {"description", "Number of rows returned."}}},
      {"truncated",
       {{"type", "boolean"},
        {"description", "True when a row or byte cap cut the result; see note."}}},
      {"note", {{"type", "string"}, {"description", "Present when truncated: which cap applied."}}},
      {"cut",
       {{"type", "array"},
        {"description",
         "Present when values longer than the byte cap were left in the database: each is null "
         "in its row (" +
             rows_key + "[row][column]); truncated is true."},
        {"items",
         {{"type", "object"},
          {"properties", {{"row", {{"type", "integer"}}}, {"column", {{"type", "string"}}}}},
          {"required", {"row", "column"}}}}}},
  };
  return Json{{"type", "object"},
              {"properties", props},
              {"required", Json::array({rows_key, "row_count", "truncated"})}};
}

}  // namespace

Json queryOutputSchema() {
  Json rows{
      {"type", "array"},
      {"description",
       "One object per row, keyed by column name. int8 values beyond +/-(2^53-1) and numeric "
       "values "
       "are strings (lossless); timestamps are ISO 8601; bytea is base64; json/jsonb is JSON; "
       "arrays and pgvector vectors are arrays."},
      {"items", {{"type", "object"}}}};
  Json s = resultEnvelope(rows, "rows");
  s["properties"]["columns"] =
      Json{{"type", "array"},
           {"description", "Result columns in order, with their PostgreSQL type names."},
           {"items",
            {{"type", "object"},
             {"properties", {{"name", {{"type", "string"}}}, {"type", {{"type", "string"}}}}},
             {"required", {"name", "type"}}}}};
  s["required"].push_back("columns");
  return s;
}

Json searchInputSchema(const SemanticSearch& search) {
  Json props = Json::object();
  props["query"] =
      Json{{"type", "string"},
           {"minLength", 1},
           {"maxLength", search.max_query_length},
           {"description",
            "Natural-language text to search for; it is embedded and compared by meaning."}};
  props["k"] = Json{{"type", "integer"},
                    {"minimum", 1},
                    {"maximum", search.k_max},
                    {"default", search.k_default},
                    {"description", "How many nearest documents to return."}};
  for (const auto& f : search.filters) {
    Json fs = scalarSchema(f.scalar);
    fs["description"] = f.description;
    props[f.name] = fs;
  }
  return Json{{"type", "object"},
              {"properties", props},
              {"required", {"query"}},
              {"additionalProperties", false}};
}

Json searchOutputSchema(const SemanticSearch& search) {
  // A value longer than the byte cap is left in the database (source_cap.hpp): null, and listed
  // in `cut`. Only the score is bounded.
  const Json cuttable = "null when longer than the byte cap (see cut)";
  Json item_props{
      {"id", {{"type", {"string", "null"}}, {"description", cuttable}}},
      {"text", {{"type", {"string", "null"}}, {"description", cuttable}}},
      {"metadata", {{"type", {"object", "null"}}, {"description", cuttable}}},
      {"score",
       {{"type", "number"},
        {"description",
         search.distance == Distance::Cosine ? "1 - cosine distance (higher is more similar)"
         : search.distance == Distance::L2   ? "negative L2 distance (higher is closer)"
                                             : "inner product (higher is more similar)"}}}};
  Json required{"id", "text", "metadata", "score"};
  if (!search.title_column.empty()) {
    item_props["title"] = Json{{"type", {"string", "null"}}, {"description", cuttable}};
  }
  Json rows{{"type", "array"},
            {"description", "Nearest documents, most similar first."},
            {"items", {{"type", "object"}, {"properties", item_props}, {"required", required}}}};
  Json s = resultEnvelope(rows, "results");
  s["properties"]["model"] =
      Json{{"type", "string"}, {"description", "Embedding model id used for the query."}};
  s["properties"]["distance"] = Json{{"type", "string"}};
  s["required"].push_back("model");
  return s;
}

}  // namespace mcpdb::postgres
