// The built-in allowlist for the demo data set (data/demo_documents.jsonl, loaded into
// demo.documents by mcp-dbserver-load), so that POSTGRES_DSN alone gives working tools.

#include "engines/postgres/module.hpp"

namespace mcpdb::postgres {

std::string_view defaultSectionText() {
  static constexpr std::string_view kText = R"yaml(postgres:
  pool:
    size: 4
    connect_timeout_ms: 5000
  tools:
    list_document_categories:
      kind: postgres-sql
      title: List document categories
      description: >-
        Lists the categories of the demo documents with how many documents each has and the latest
        publication date. Use it first to learn the category values other tools accept.
      statement: >-
        SELECT category, count(*) AS documents, max(published) AS latest_published
        FROM demo.documents GROUP BY category ORDER BY category
    get_document:
      kind: postgres-sql
      title: Get a document by id
      description: >-
        Returns one demo document by its id (e.g. doc-01): title, full body, category, tags and
        publication date. Returns no rows when the id does not exist.
      statement: >-
        SELECT id, title, body, category, tags, published FROM demo.documents WHERE id = $1
      parameters:
        - name: id
          type: string
          description: The document id, e.g. doc-01.
          max_length: 64
          pattern: "^[A-Za-z0-9_.-]+$"
    list_recent_documents:
      kind: postgres-sql
      title: List recent documents
      description: >-
        Lists the most recently published demo documents, newest first (id, title, category, tags,
        date; no body), optionally only those of one category.
      statement: >-
        SELECT id, title, category, tags, published FROM demo.documents
        WHERE ($1::text IS NULL OR category = $1) ORDER BY published DESC, id LIMIT $2
      parameters:
        - name: category
          type: string
          description: Only documents of this category (see list_document_categories); omit for all.
          required: false
          max_length: 64
        - name: limit
          type: integer
          description: How many documents to return.
          min: 1
          max: 50
          default: 10
    search_documents_by_tag:
      kind: postgres-sql
      title: Search documents by tag
      description: >-
        Lists the demo documents that carry a tag (exact match, e.g. sql, kubernetes, security),
        newest first, without their body.
      statement: >-
        SELECT id, title, category, tags, published FROM demo.documents
        WHERE $1 = ANY(tags) ORDER BY published DESC, id
      parameters:
        - name: tag
          type: string
          description: The tag to look for, e.g. sql.
          max_length: 64
    list_documents_published_between:
      kind: postgres-sql
      title: List documents published in a date range
      description: >-
        Lists the demo documents published between two dates (inclusive), oldest first, without
        their body.
      statement: >-
        SELECT id, title, category, published FROM demo.documents
        WHERE published BETWEEN $1 AND $2 ORDER BY published, id
      parameters:
        - name: from
          type: date
          description: First publication date to include (YYYY-MM-DD).
        - name: to
          type: date
          description: Last publication date to include (YYYY-MM-DD).
  semantic_search:
    tool: semantic_search_documents
    title: Semantic search over the demo documents
    description: >-
      Finds the demo documents closest in meaning to a natural-language query (pgvector cosine
      distance over locally computed embeddings, HNSW index). Returns id, title, text, metadata
      (category, tags, published) and a score (1 - cosine distance; higher is closer).
    table: demo.documents
    id_column: id
    title_column: title
    text_column: body
    metadata_columns: [category, tags, published]
    vector_column: embedding
    distance: cosine
    k_default: 5
    k_max: 20
    max_query_length: 1000
    model_table: demo.embedding_model
    filters:
      - name: category
        column: category
        type: string
        max_length: 64
        description: Only search documents of this category (see list_document_categories).
      - name: tag
        column: tags
        op: contains
        type: string
        max_length: 64
        description: Only search documents carrying this tag.
)yaml";
  return kText;
}

}  // namespace mcpdb::postgres
