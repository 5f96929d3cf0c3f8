// Hostile input to validation and config text (issue #18), against the real binary over stdio:
// a 1 MiB argument against a backtracking-hostile pattern is answered quickly and the process
// keeps serving; a request with an escaped lone surrogate is answered with its own id; a config
// whose text is not UTF-8, an alias bomb, a pattern RE2 cannot compile, tool names that differ
// only in case and a credential inside a description are refused by check-config (exit 3, plain
// and --json), naming the field and never echoing the bytes or the secret.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { bin, offlineEnv, rawServer, serverEnv, startHttpServer } from './helpers.mjs';

const EXIT_CONFIG = 3;
let tmp;
let n = 0;
before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-hostile-')); });
after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

function configFile(content) {
  const file = path.join(tmp, `config-${n++}.yaml`);
  fs.writeFileSync(file, content);
  return file;
}

function run(args, env, timeoutMs = 30000) {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }); });
  });
}

const init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}';

test('a lone surrogate in a request is answered with the request id, not a parse error with id null', async () => {
  const s = rawServer(serverEnv(offlineEnv()));
  s.send(init);
  await s.next();
  s.send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"q":"\\ud800"}}}');
  const reply = await s.next();
  assert.equal(reply.id, 7);
  assert.equal(reply.error.code, -32602);  // unknown tool: the request itself was read
  s.send('{"jsonrpc":"2.0","id":8,"method":"ping","params":{"note":"\\udc00 \\ud83d\\ude00 \\\\ud800"}}');
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 8, result: {} });
  s.child.stdin.end();
  assert.equal((await s.exited()).code, 0);
});

// The same over Streamable HTTP: both transports parse through one entry (protocol::parseMessage).
test('over HTTP too, a lone surrogate is answered with the request id', async (t) => {
  if (!process.env.POSTGRES_DSN) { t.skip('POSTGRES_DSN is not set: run through scripts/test.sh'); return; }
  const { child, url, key } = await startHttpServer('hostile-agent');
  try {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${key}` };
    const post = async (body, sid) => {
      const r = await fetch(url, { method: 'POST', body, headers: sid ? { ...headers, 'Mcp-Session-Id': sid } : headers });
      const text = await r.text();
      // A JSON body, or one SSE event carrying it.
      const json = text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
      return { status: r.status, sid: r.headers.get('mcp-session-id'), body: json ? JSON.parse(json) : null };
    };
    const init = await post('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}');
    assert.equal(init.status, 200);
    await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', init.sid);
    const r = await post('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"q":"\\ud800"}}}', init.sid);
    assert.equal(r.body.id, 7, JSON.stringify(r.body));
    assert.equal(r.body.error.code, -32602);
  } finally {
    child.kill('SIGTERM');
  }
});

test('a 1 MiB argument against a nested-quantifier pattern is answered in milliseconds; the server keeps serving', async (t) => {
  if (!process.env.POSTGRES_DSN) { t.skip('POSTGRES_DSN is not set: run through scripts/test.sh'); return; }
  const config = configFile(`postgres:
  tools:
    echo_text:
      description: Echoes a text that must be all a's.
      statement: SELECT length($1::text) AS n
      parameters:
        - {name: q, type: string, description: Letters a., max_length: 1048576, pattern: "^(a+)+$"}
`);
  const s = rawServer(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), ['serve', '--config', config]);
  s.send(init);
  await s.next(30000);
  const call = (id, q) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
    params: { name: 'echo_text', arguments: { q } } });
  const t0 = Date.now();
  s.send(call(1, 'a'.repeat((1 << 20) - 1) + '!'));
  const refused = await s.next(10000);
  const ms = Date.now() - t0;
  assert.equal(refused.id, 1);
  assert.equal(refused.result.isError, true);
  assert.match(refused.result.content[0].text, /arguments\.q: does not match the required pattern/);
  assert.ok(ms < 3000, `answered in ${ms} ms`);  // std::regex: SIGSEGV (stack) or seconds per call
  s.send('{"jsonrpc":"2.0","id":2,"method":"ping"}');
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 2, result: {} });
  s.send(call(3, 'a'.repeat(1 << 20)));
  const ok = await s.next(30000);
  assert.equal(ok.result.isError, false, JSON.stringify(ok).slice(0, 300));
  assert.match(JSON.stringify(ok.result.structuredContent), /1048576/);
  s.child.stdin.end();
  assert.equal((await s.exited()).code, 0);
});

// Each bad config: check-config and check-config --json both exit 3 (no abort), name the place,
// and never print the offending bytes or secret.
const badConfigs = [
  {
    name: 'config text that is not UTF-8 (an enum value)',
    text: Buffer.concat([Buffer.from('postgres:\n  tools:\n    t:\n      description: Colors.\n      statement: SELECT $1::text\n      parameters:\n        - {name: c, type: string, description: Color., enum: [red, "bl'),
      Buffer.from([0xff, 0xfe]), Buffer.from('ue"]}\n')]),
    expect: /:7: postgres\.tools\.t\.parameters\[0\]\.enum\[1\]: is not valid UTF-8/,
    never: [Buffer.from([0xff, 0xfe]).toString('latin1')],
  },
  {
    name: 'an alias bomb',
    text: 'a: &a [x,x,x,x,x,x,x,x,x]\n' + 'bcdefghij'.split('').map((c, i) =>
      `${c}: &${c} [${Array(9).fill('*' + 'abcdefghij'[i]).join(',')}]`).join('\n') + '\n',
    expect: /expands to more than 200000 nodes through its aliases/,
    maxMs: 3000,
  },
  {
    name: 'a pattern RE2 cannot compile',
    text: 'postgres:\n  tools:\n    t:\n      description: X.\n      statement: SELECT $1::text\n      parameters:\n        - {name: pin, type: string, description: P., pattern: "^(?=.*[0-9]).{4}$"}\n',
    expect: /:7: postgres\.tools\.t\.parameters\[0\]\.pattern: parameter 'pin': pattern uses syntax RE2 does not support/,
  },
  {
    name: 'tool names that differ only in case',
    text: 'postgres:\n  tools:\n    find_user: {description: A., statement: SELECT 1}\n    Find_User: {description: B., statement: SELECT 1}\n',
    expect: /:4: postgres\.tools\.Find_User: tool names 'find_user' and 'Find_User' differ only in case/,
  },
  {
    name: 'a credential inside a description',
    text: 'postgres:\n  tools:\n    t:\n      description: "Fallback: postgres://app:Hunter2x@db/app, or PGPASSWORD=Hunter2x"\n      statement: SELECT 1\n',
    expect: /:4: postgres\.tools\.t\.description: value looks like a connection string with credentials/,
    never: ['Hunter2x'],
  },
];

for (const c of badConfigs) {
  test(`check-config refuses ${c.name} (exit 3, also with --json)`, async () => {
    const file = configFile(c.text);
    for (const args of [['check-config', '--config', file], ['check-config', '--json', '--config', file]]) {
      const t0 = Date.now();
      const r = await run(args, serverEnv());
      const ms = Date.now() - t0;
      assert.equal(r.signal, null, `${args.join(' ')}: killed by ${r.signal}; stderr: ${r.stderr}`);
      assert.equal(r.code, EXIT_CONFIG, r.stderr);
      assert.match(r.stderr, c.expect);
      for (const s of c.never ?? []) {
        assert.ok(!r.stderr.includes(s) && !r.stdout.includes(s), 'the bytes or secret were echoed');
      }
      if (c.maxMs) assert.ok(ms < c.maxMs, `took ${ms} ms`);
    }
  });
}
