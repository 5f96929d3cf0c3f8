// Bounded soak: a few thousand mixed calls across all three engines at concurrency 8 over stdio,
// then a clean exit. Under the asan preset (the test command's build), AddressSanitizer and
// LeakSanitizer make the process exit non-zero on any memory error or leak, so "exit code 0" is
// the assertion. scripts/soak.sh runs the same load under valgrind memcheck.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engineEnv, rawServer, serverEnv } from './helpers.mjs';

const CALLS = Number(process.env.MCPDB_SOAK_CALLS ?? 1500);
const CONCURRENCY = 8;

const mix = [
  { name: 'get_document', arguments: { id: 'doc-03' } },
  { name: 'list_recent_documents', arguments: { limit: 5 } },
  { name: 'semantic_search_documents', arguments: { query: 'rotate credentials', k: 3 } },
  { name: 'get_dynamodb_item', arguments: { target: 'demo_documents', partition_key: 'doc-07' } },
  { name: 'scan_dynamodb_table', arguments: { target: 'demo_documents', limit: 5 } },
  { name: 'list_mongodb_documents', arguments: { target: 'documents', limit: 5 } },
  { name: 'semantic_search_mongodb', arguments: { query: 'kubernetes autoscaling', k: 3 } },
  { name: 'get_document', arguments: { id: "bad' OR 1=1" } },           // refused
  { name: 'no_such_tool', arguments: {} },                             // protocol error
];

test(`soak: ${CALLS} mixed calls at concurrency ${CONCURRENCY}, then a clean exit`, { timeout: 600000 }, async () => {
  const env = engineEnv();
  for (const n of ['POSTGRES_DSN', 'AWS_REGION', 'MONGODB_URI']) assert.ok(env[n], `${n} missing: run through scripts/test.sh`);
  const s = rawServer(serverEnv({ ...env, MCPDB_LOG_LEVEL: 'warn', ASAN_OPTIONS: process.env.ASAN_OPTIONS ?? '' }));
  // Whatever fails, the server does not outlive the test (the runner would wait for it).
  let exited = false;
  s.child.on('exit', () => { exited = true; });
  try {
    s.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}');
    const slow = process.env.MCPDB_WRAP ? 10 : 1;  // valgrind runs ~10-50x slower
    assert.equal((await s.next(30000 * slow)).id, 0);
    // Replies can come back out of order: match them by id.
    const waiting = new Map();
    let received = 0;
    const pump = (async () => {
      while (received < CALLS) {
        const m = await s.next(60000 * slow);
        received++;
        waiting.get(m.id)?.(m);
        waiting.delete(m.id);
      }
    })();
    let next = 1;
    let errors = 0;
    const mismatches = [];
    async function worker() {
      while (next <= CALLS) {
        const id = next++;
        const call = mix[id % mix.length];
        const reply = new Promise((resolve) => waiting.set(id, resolve));
        s.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: call }));
        const m = await reply;
        const expectedError = call.name === 'no_such_tool' || Boolean(call.arguments.id?.includes("'"));
        const isError = !!m.error || m.result?.isError === true;
        if (isError !== expectedError) {
          errors++;
          if (mismatches.length < 3) mismatches.push(`${call.name}: ${JSON.stringify(m).slice(0, 300)}`);
        }
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await pump;
    assert.equal(errors, 0, 'unexpected outcomes:\n' + mismatches.join('\n'));
    s.child.stdin.end();
    const { code, signal } = await s.exited();
    assert.equal(signal, null);
    assert.equal(code, 0, 'non-zero exit: a sanitizer report? stderr tail:\n' + s.stderr().slice(-3000));
  } finally {
    if (!exited) s.child.kill('SIGKILL');
  }
});
