// What `serve` refuses to start with (issue 30): a config file that declares tools for an engine
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
  const optional = await run(['serve', '--config', configFile(pgTools('  optional: true\n'))], serverEnv({}),
    { untilStderr: 'serving MCP on stdio', timeoutMs: 30000 });
  assert.match(optional.stderr, /the config declares postgres tools, but the environment does not set POSTGRES_DSN, so they are not served \(postgres\.optional is true/);
});
