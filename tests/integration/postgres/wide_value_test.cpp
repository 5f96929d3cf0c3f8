// The byte cap at the source (source_cap.hpp): a value whose text form is longer than the tool's
// byte cap is left in the database. Its row comes back with the value null, the value listed in
// `cut` by row and column, the result marked truncated with a note; a NULL of the statement stays
// a plain NULL; a value exactly at the cap is not cut (its row then meets the row budget as any
// row does); a call narrower than the tool's cap cuts at its own cap; and every result that has
// nothing to cut is the same, byte for byte, as the statement run without the wrapper.
#include <gtest/gtest.h>

#include "engines/postgres/schema_gen.hpp"
#include "integration/postgres/fixture.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::postgres::itest {
namespace {

// Made once and kept (each test is its own process under ctest -j: one that dropped the table at
// its end would pull it from under another); the same rows every time, so the suite's canary
// fingerprints it the same, and the admin role it runs as may read it.
constexpr const char* kSetup = R"(
SET client_min_messages = warning;
BEGIN;
SELECT pg_advisory_xact_lock(2802803);
CREATE SCHEMA IF NOT EXISTS wide_value;
CREATE TABLE IF NOT EXISTS wide_value.t (id int PRIMARY KEY, t text, b bytea, j jsonb, a text[],
  n text);
INSERT INTO wide_value.t VALUES
  (1, 'small', '\x0102', '{"k": [1, 2]}', ARRAY['p', 'q'], NULL),
  (2, repeat('x', 5000), decode(repeat('ab', 3000), 'hex'),
   jsonb_build_object('k', repeat('y', 5000)), array_fill('abcdef'::text, ARRAY[1000]), NULL),
  (3, NULL, NULL, NULL, NULL, NULL),
  (4, repeat('z', 1500), decode(repeat('cd', 500), 'hex'), '[true, null]', ARRAY[NULL, 'r'], 'n')
  ON CONFLICT (id) DO NOTHING;
GRANT USAGE ON SCHEMA wide_value TO mcp_reader, mcp_admin;
GRANT SELECT ON wide_value.t TO mcp_reader, mcp_admin;
COMMIT;
)";

constexpr const char* kYaml = R"(
postgres:
  pool: {size: 1}
  tools:
    wide:
      description: Values of every kind, some over the cap.
      statement: SELECT id, t, b, j, a, n FROM wide_value.t ORDER BY id
      limits: {max_bytes: 4096}
    twice:
      description: The same column twice.
      statement: SELECT id, t, t FROM wide_value.t WHERE id = $1
      parameters: [{name: id, type: integer, description: Row.}]
      limits: {max_bytes: 4096}
    at_cap:
      description: One text value of the given length.
      statement: SELECT repeat('v', $1::int) AS v
      parameters: [{name: n, type: integer, description: Length.}]
      limits: {max_bytes: 4096}
    mixed:
      description: Cut values and NULLs side by side, between passed-through columns.
      statement: >-
        SELECT NULL::text AS a, 1 AS i, repeat('x', $1::int) AS b, NULL::text[] AS c, 2 AS j,
        ARRAY[repeat('y', $1::int)] AS d, 'e'::text AS e, NULL::jsonb AS f
      parameters: [{name: n, type: integer, description: Length.}]
      limits: {max_bytes: 4096}
    prepared:
      description: The connection's prepared statements.
      statement: SELECT statement FROM pg_prepared_statements ORDER BY statement
      limits: {max_bytes: 262144}
    types:
      description: Every type the fixture has.
      statement: SELECT * FROM pgtest.types
    items:
      description: Ordered rows.
      statement: SELECT id, name, tag, created FROM pgtest.items ORDER BY name DESC, id
      limits: {max_rows: 100, max_bytes: 262144}
)";

class PostgresWideValue : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(superuserExec(kSetup), ""); }
};

Json cutOf(const Result<protocol::ToolOutput>& r) {
  return r->structured.contains("cut") ? r->structured["cut"] : Json::array();
}

// The connection holds a prepared wrapper (its NULL map) around a statement containing `inner`:
// what ran is the wrapper (the tool `prepared` lists pg_prepared_statements).
void expectPreparedWrapper(Runtime& rt, const std::string& inner) {
  auto prepared = call(rt, "prepared", Json::object());
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  bool wrapped = false;
  for (const Json& row : prepared->structured["rows"]) {
    const std::string text = row["statement"].get<std::string>();
    wrapped = wrapped || (text.find("mcpdb_nulls") != std::string::npos &&
                          text.find(inner) != std::string::npos);
  }
  EXPECT_TRUE(wrapped) << prepared->structured.dump();
}

TEST_F(PostgresWideValue, AValueOverTheCapIsLeftInTheDatabaseAndListed) {
  auto rt = makeRuntime(kYaml);
  auto r = call(*rt, "wide", Json::object());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Json& rows = r->structured["rows"];
  ASSERT_EQ(rows.size(), 4U) << r->structured.dump().substr(0, 2000);
  // Row 1: small values of each kind, whole.
  EXPECT_EQ(rows[0], Json::parse(R"({"id": 1, "t": "small", "b": "AQI=", "j": {"k": [1, 2]},
                                     "a": ["p", "q"], "n": null})"));
  // Row 2: text, bytea (hex longer than the cap), jsonb and an array over the cap: null.
  EXPECT_EQ(rows[1], Json::parse(R"({"id": 2, "t": null, "b": null, "j": null, "a": null,
                                     "n": null})"));
  // Row 3: NULLs of the statement are NULLs, not cuts.
  EXPECT_EQ(rows[2], Json::parse(R"({"id": 3, "t": null, "b": null, "j": null, "a": null,
                                     "n": null})"));
  // Row 4: under the cap (bytea's hex is 1,002 characters), whole.
  EXPECT_EQ(rows[3]["t"], std::string(1500, 'z'));
  EXPECT_EQ(rows[3]["j"], Json::parse("[true, null]"));
  EXPECT_EQ(rows[3]["a"], Json::parse(R"([null, "r"])"));
  EXPECT_EQ(cutOf(r), Json::parse(R"([{"row": 1, "column": "t"}, {"row": 1, "column": "b"},
                                      {"row": 1, "column": "j"}, {"row": 1, "column": "a"}])"));
  EXPECT_EQ(r->structured["truncated"], true);
  const std::string note = r->structured["note"].get<std::string>();
  EXPECT_NE(note.find("4 values longer than the byte cap (max_bytes, 4096 bytes)"),
            std::string::npos)
      << note;
  // The columns are the statement's own, with their own types; the NULL map is not among them.
  EXPECT_EQ(r->structured["columns"].size(), 6U) << r->structured["columns"].dump();
  EXPECT_EQ(r->structured["columns"][3]["type"], "jsonb");
  // What ran is the wrapper, prepared on the connection under its own text.
  expectPreparedWrapper(*rt, "FROM wide_value.t ORDER BY id");
}

TEST_F(PostgresWideValue, DuplicateColumnNamesAreCutByTheirOwnKeys) {
  auto rt = makeRuntime(kYaml);
  auto big = call(*rt, "twice", Json{{"id", 2}});
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_EQ(big->structured["rows"], Json::parse(R"([{"id": 2, "t": null, "t_2": null}])"));
  EXPECT_EQ(cutOf(big), Json::parse(R"([{"row": 0, "column": "t"}, {"row": 0, "column": "t_2"}])"));
  auto small = call(*rt, "twice", Json{{"id", 1}});
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_EQ(small->structured["rows"], Json::parse(R"([{"id": 1, "t": "small", "t_2": "small"}])"));
  EXPECT_FALSE(small->structured.contains("cut"));
  EXPECT_EQ(small->structured["truncated"], false);
}

// The NULL map tells each guarded column's cut from its NULL by the column's own place: cut
// values and NULLs of the statement alternate, with passed-through columns between them.
TEST_F(PostgresWideValue, CutsAndNullsInOneRowAreToldApartColumnByColumn) {
  auto rt = makeRuntime(kYaml);
  auto over = call(*rt, "mixed", Json{{"n", 5000}});
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(over->structured["rows"],
            Json::parse(R"([{"a": null, "i": 1, "b": null, "c": null, "j": 2, "d": null,
                             "e": "e", "f": null}])"));
  EXPECT_EQ(cutOf(over), Json::parse(R"([{"row": 0, "column": "b"}, {"row": 0, "column": "d"}])"));
  EXPECT_EQ(over->structured["truncated"], true);
  auto under = call(*rt, "mixed", Json{{"n", 10}});
  ASSERT_TRUE(under.ok()) << under.error().message;
  EXPECT_EQ(under->structured["rows"],
            Json::parse(R"([{"a": null, "i": 1, "b": "xxxxxxxxxx", "c": null, "j": 2,
                             "d": ["yyyyyyyyyy"], "e": "e", "f": null}])"));
  EXPECT_FALSE(under->structured.contains("cut"));
  EXPECT_EQ(under->structured["truncated"], false);
  expectPreparedWrapper(*rt, "ARRAY[repeat('y', $1::int)] AS d");
}

// Exactly at the cap: not cut (its row, a few bytes more as JSON, meets the row budget and
// truncates the result as before); one byte over: cut.
TEST_F(PostgresWideValue, AValueExactlyAtTheCapIsNotCut) {
  auto rt = makeRuntime(kYaml);
  auto at = call(*rt, "at_cap", Json{{"n", 4096}});
  ASSERT_TRUE(at.ok()) << at.error().message;
  EXPECT_EQ(at->structured["row_count"], 0);
  EXPECT_FALSE(at->structured.contains("cut"));
  EXPECT_EQ(at->structured["truncated"], true);
  auto over = call(*rt, "at_cap", Json{{"n", 4097}});
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(over->structured["rows"], Json::parse(R"([{"v": null}])"));
  EXPECT_EQ(cutOf(over), Json::parse(R"([{"row": 0, "column": "v"}])"));
  auto under = call(*rt, "at_cap", Json{{"n", 4000}});
  ASSERT_TRUE(under.ok()) << under.error().message;
  EXPECT_EQ(under->structured["rows"][0]["v"], std::string(4000, 'v'));
  EXPECT_EQ(under->structured["truncated"], false);
}

// The wrapper holds the tool's cap; a call with a narrower one is cut here, by the same rule.
TEST_F(PostgresWideValue, ANarrowerCallCapCutsByTheSameRule) {
  auto rt = makeRuntime(kYaml);
  auto r = call(*rt, "at_cap", Json{{"n", 3000}}, {},
                Limits{.max_rows = 10, .max_bytes = 2048, .timeout = std::chrono::seconds(5)});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["rows"], Json::parse(R"([{"v": null}])"));
  EXPECT_EQ(cutOf(r), Json::parse(R"([{"row": 0, "column": "v"}])"));
  EXPECT_NE(r->structured["note"].get<std::string>().find("2048 bytes"), std::string::npos);
}

// Nothing to cut: the wrapped result is the statement's own result, byte for byte (every type of
// the fixture, and an ordered result whose order must survive the wrapper).
TEST_F(PostgresWideValue, OrdinaryResultsAreUnchanged) {
  auto rt = makeRuntime(kYaml);
  for (const char* tool : {"types", "items"}) {
    SCOPED_TRACE(tool);
    const QueryTool* t = nullptr;
    for (const QueryTool& q : rt->section().tools) t = q.name == tool ? &q : t;
    ASSERT_NE(t, nullptr);
    auto wrapped = call(*rt, tool, Json::object());
    ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
    std::stop_source never;
    auto plain = rt->run(t->statement, BoundParams{}, t->limits, never.get_token(),
                         Clock::now() + t->limits.timeout);
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    EXPECT_EQ(wrapped->structured["rows"].dump(), plain->rows.dump());
    EXPECT_EQ(wrapped->structured["columns"].dump(), plain->columns.dump());
    EXPECT_EQ(wrapped->structured["truncated"], plain->truncated);
    EXPECT_FALSE(wrapped->structured.contains("cut"));
    EXPECT_GT(plain->rows.size(), 0U);
  }
}

// A varchar(n) column whose n characters fit the cap is passed through unmeasured; widened under
// the tool (ALTER TABLE ... TYPE varchar(100000)), it is measured again before any value longer
// than the cap can leave the database. The table is this test's own and made afresh each run.
TEST(PostgresWideVarchar, AWidenedVarcharIsMeasuredAgain) {
  ASSERT_EQ(superuserExec(R"(
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS wide_varchar CASCADE;
CREATE SCHEMA wide_varchar;
CREATE TABLE wide_varchar.t (id int PRIMARY KEY, v varchar(3));
INSERT INTO wide_varchar.t VALUES (1, 'abc');
GRANT USAGE ON SCHEMA wide_varchar TO mcp_reader, mcp_admin;
GRANT SELECT ON wide_varchar.t TO mcp_reader, mcp_admin;
)"),
            "");
  auto rt = makeRuntime(R"(
postgres:
  pool: {size: 1}
  tools:
    narrow:
      description: A short varchar.
      statement: SELECT id, v FROM wide_varchar.t ORDER BY id
      limits: {max_bytes: 4096}
    prepared:
      description: The connection's prepared statements.
      statement: SELECT statement FROM pg_prepared_statements ORDER BY statement
      limits: {max_bytes: 262144}
)");
  auto r = call(*rt, "narrow", Json::object());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["rows"], Json::parse(R"([{"id": 1, "v": "abc"}])"));
  // The wrapper passes v through: no measure of the second column.
  auto prepared = call(*rt, "prepared", Json::object());
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  bool passed_through = false;
  for (const Json& row : prepared->structured["rows"]) {
    const std::string text = row["statement"].get<std::string>();
    if (text.find("FROM wide_varchar.t") != std::string::npos &&
        text.find("mcpdb_nulls") != std::string::npos)
      passed_through = text.find("octet_length(q.c2)") == std::string::npos;
  }
  EXPECT_TRUE(passed_through) << prepared->structured.dump();

  ASSERT_EQ(superuserExec(R"(
ALTER TABLE wide_varchar.t ALTER COLUMN v TYPE varchar(100000);
INSERT INTO wide_varchar.t VALUES (2, repeat('w', 5000));
)"),
            "");
  // The first call after the change may fail (the statement is described again for the next).
  r = call(*rt, "narrow", Json::object());
  if (!r.ok()) r = call(*rt, "narrow", Json::object());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["rows"], Json::parse(R"([{"id": 1, "v": "abc"}, {"id": 2, "v": null}])"));
  EXPECT_EQ(cutOf(r), Json::parse(R"([{"row": 1, "column": "v"}])"));
  EXPECT_EQ(superuserExec("DROP SCHEMA wide_varchar CASCADE;"), "");
}

// The semantic-search tool goes through the same wrapper: a matched document whose text is far
// over the cap (20 MB here) is left in the database, null in its result and listed in `cut`;
// the other results are whole, in the order of their scores.
constexpr const char* kSearchSetup = R"(
SET client_min_messages = warning;
BEGIN;
SELECT pg_advisory_xact_lock(2802804);
CREATE SCHEMA IF NOT EXISTS wide_search;
CREATE TABLE IF NOT EXISTS wide_search.documents (id text PRIMARY KEY, title text, body text,
  category text, tags text[], published date, embedding vector(4));
INSERT INTO wide_search.documents VALUES
  ('doc-big', 'Big', repeat('k', 20000000), 'infrastructure', ARRAY['kubernetes'], '2024-03-05',
   '[0,1,0,0]'),
  ('doc-small', 'Small', 'Pods.', 'infrastructure', ARRAY['kubernetes'], '2024-03-06',
   '[0.7,0.7,0,0]')
  ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS wide_search.embedding_model (model_id text, dimension int);
INSERT INTO wide_search.embedding_model SELECT 'fake-4@test', 4
  WHERE NOT EXISTS (SELECT FROM wide_search.embedding_model);
GRANT USAGE ON SCHEMA wide_search TO mcp_reader, mcp_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA wide_search TO mcp_reader, mcp_admin;
COMMIT;
)";

constexpr const char* kSearchYaml = R"(
postgres:
  pool: {size: 1}
  tools:
    prepared:
      description: The connection's prepared statements.
      statement: SELECT statement FROM pg_prepared_statements ORDER BY statement
      limits: {max_bytes: 262144}
  semantic_search:
    tool: wide_search
    description: Documents, one of them far over the cap.
    table: wide_search.documents
    id_column: id
    title_column: title
    text_column: body
    metadata_columns: [category]
    vector_column: embedding
    model_table: wide_search.embedding_model
    limits: {max_bytes: 4096}
)";

TEST(PostgresWideSearch, AMatchedDocumentsTextOverTheCapIsLeftInTheDatabase) {
  ASSERT_EQ(superuserExec(kSearchSetup), "");
  auto rt = makeRuntime(kSearchYaml);
  protocol::CallContext ctx;
  ctx.limits = rt->section().search.limits;
  auto r = rt->callSearch(Json{{"query", "kubernetes"}, {"k", 2}}, ctx, fakeEmbedder());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Json& res = r->structured["results"];
  ASSERT_EQ(res.size(), 2U) << r->structured.dump().substr(0, 2000);
  EXPECT_EQ(res[0]["id"], "doc-big");
  EXPECT_TRUE(res[0]["text"].is_null());
  EXPECT_EQ(res[0]["title"], "Big");
  EXPECT_EQ(res[1]["id"], "doc-small");
  EXPECT_EQ(res[1]["text"], "Pods.");
  EXPECT_EQ(cutOf(r), Json::parse(R"([{"row": 0, "column": "text"}])"));
  EXPECT_EQ(r->structured["truncated"], true);
  EXPECT_NE(r->structured["note"].get<std::string>().find("left in the database"),
            std::string::npos);
  EXPECT_TRUE(ctx.audit.truncated);
  // The tool's output schema admits the cut (a client validates structuredContent against it).
  const Status valid = protocol::validateJson(searchOutputSchema(rt->section().search),
                                              r->structured, "structuredContent");
  EXPECT_TRUE(valid.ok()) << valid.error().message;
  // What ran is the wrapper around the search statement.
  expectPreparedWrapper(*rt, R"(FROM "wide_search"."documents")");
}

}  // namespace
}  // namespace mcpdb::postgres::itest
