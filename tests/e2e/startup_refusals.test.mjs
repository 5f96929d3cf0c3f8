// What `serve` (and `invoke`) refuses to start with (issue 30): a config file that declares tools for an engine
// whose environment is unset (unless its section says `optional: true`), and a server that would
// serve no tool. Each names why and how to fix it, exit 3. Needs no database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bin, serverEnv } from './helpers.mjs';

const EXIT = { ok: 0, config: 3, refused: 4, unusable: 7 };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-refusals-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
let files = 0;
function configFile(text) {
  const file = path.join(dir, `config-${files++}.yaml`);
  fs.writeFileSync(file, text);
  return file;
}

// Runs the binary; stops it (SIGTERM) once stderr shows `untilStderr`.
function run(args, env, { timeoutMs = 60000, untilStderr } = {}) {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (untilStderr && stderr.includes(untilStderr)) child.kill('SIGTERM');
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const pgTools = (extra = '') => `postgres:
  tools:
    count_documents:
      kind: postgres-sql
      description: How many demo documents there are.
      statement: SELECT count(*) AS n FROM demo.documents
${extra}`;

test('serve: a config declaring tools without their environment refuses to start, unless the section is optional', async () => {
  const refused = await run(['serve', '--config', configFile(pgTools())], serverEnv({}));
  assert.equal(refused.code, EXIT.config, refused.stderr);
  assert.match(refused.stderr, /refusing to start \(1 problem\):\n {2}\S+\.yaml:2: postgres: the config declares postgres tools, but the environment does not set POSTGRES_DSN: set POSTGRES_DSN/);
  assert.match(refused.stderr, /set postgres\.optional: true/);
  // server.require_environment (once the opt-in to this) changes nothing.
  const legacy = await run(['serve', '--config', configFile(`server: {require_environment: false}\n${pgTools()}`)], serverEnv({}));
  assert.equal(legacy.code, EXIT.config, legacy.stderr);
  for (const http of [false, true]) {
    const args = http ? ['serve', '--http', '127.0.0.1:0'] : ['serve'];
    const r = await run([...args, '--config', configFile(pgTools())], serverEnv({}));
    assert.equal(r.code, EXIT.config, r.stderr);
  }
  // Optional: no refusal for it, but then nothing is left to serve.
  const optional = await run(['serve', '--config', configFile(pgTools('  optional: true\n'))], serverEnv({}));
  assert.match(optional.stderr, /the config declares postgres tools, but the environment does not set POSTGRES_DSN, so they are not served \(postgres\.optional is true/);
  assert.equal(optional.code, EXIT.config, optional.stderr);
  assert.match(optional.stderr, /refusing to start: no tools to serve: every engine \S+ declares tools for is disabled \(postgres: optional/);
});

test('serve never starts with zero tools: it says why and how to enable an engine (exit 3)', async () => {
  for (const http of [false, true]) {
    const args = http ? ['serve', '--http', '127.0.0.1:0'] : ['serve'];
    // The built-in allowlist with no engine environment: every engine's variables, and .env.example.
    const builtIn = await run(args, serverEnv({}));
    assert.equal(builtIn.code, EXIT.config, builtIn.stderr);
    assert.match(builtIn.stderr, /refusing to start: no tools to serve: no engine is enabled by the environment\. Enable one \(see \.env\.example\)/);
    for (const v of ['POSTGRES_DSN', 'MYSQL_DSN', 'MONGODB_URI', 'AWS_REGION']) assert.match(builtIn.stderr, new RegExp(v));
    assert.doesNotMatch(builtIn.stderr, /serving MCP/);
    // A config file with no tools at all.
    const empty = await run([...args, '--config', configFile('server: {self_check: warn}\n')], serverEnv({}));
    assert.equal(empty.code, EXIT.config, empty.stderr);
    assert.match(empty.stderr, /no tools to serve: \S+\.yaml declares no tools/);
  }
  // With an engine enabled (no database needed to start), it serves.
  const on = await run(['serve'], serverEnv({ POSTGRES_DSN: 'host=127.0.0.1 port=1 dbname=x user=x connect_timeout=1' }),
    { untilStderr: 'serving MCP on stdio', timeoutMs: 30000 });
  assert.match(on.stderr, /serving MCP on stdio with \d+ tool/);
});

// invoke refuses what serve refuses, with the same reasons: one call from a config that cannot
// serve would otherwise fail as an unknown tool, hiding why.
test('invoke refuses a config that cannot serve, as serve does (exit 3)', async () => {
  const unset = await run(['invoke', 'count_documents', '--config', configFile(pgTools())], serverEnv({}));
  assert.equal(unset.code, EXIT.config, unset.stderr);
  assert.match(unset.stderr, /invoke: refused \(1 problem\):\n {2}\S+\.yaml:2: postgres: the config declares postgres tools, but the environment does not set POSTGRES_DSN/);
  const none = await run(['invoke', 'get_document'], serverEnv({}));
  assert.equal(none.code, EXIT.config, none.stderr);
  assert.match(none.stderr, /invoke: refused: no tools to serve: no engine is enabled by the environment/);
  assert.equal(none.stdout, '');
});

// A semantic-search tool whose embedding model is missing cannot run: doctor and the start-up
// self-check say so, with the fix, without loading any model (issue 30). PostgreSQL is enabled with
// an unreachable DSN: the model's check does not need the database.
test('doctor and the self-check report a semantic-search tool whose model is missing', async () => {
  const env = serverEnv({
    POSTGRES_DSN: 'host=127.0.0.1 port=1 dbname=x user=x connect_timeout=1 sslmode=disable',
    MCPDB_EMBED_MODEL_DIR: path.join(dir, 'no-model-here'),
  });
  const doctor = await run(['doctor', '--json'], env);
  const report = JSON.parse(doctor.stdout);
  const pg = report.engines.find((e) => e.name === 'postgres');
  const model = pg.findings.find((f) => f.check === 'pg.tool.semantic_search_documents.model');
  assert.ok(model, JSON.stringify(pg.findings));
  assert.equal(model.severity, 'unusable');
  assert.match(model.message, /tool 'semantic_search_documents' cannot run: it embeds its query, and embedding model directory \S+no-model-here has no readable model\.json/);
  assert.match(model.fix, /MCPDB_EMBED_MODEL_DIR/);
  assert.ok(report.tools.unusable >= 1);
  const served = await run(['serve'], env, { untilStderr: 'semantic_search_documents.model [unusable]', timeoutMs: 30000 });
  assert.match(served.stderr, /self-check pg\.tool\.semantic_search_documents\.model \[unusable\]: .*no-model-here.*\(fix: set MCPDB_EMBED_MODEL_DIR/);
});
