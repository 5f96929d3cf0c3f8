// Fault tests: each fault ends with a clear error for the affected call and the server still
// serving. Real servers where a real fault can be made; a bogus endpoint for DNS failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { connectSdk, engineEnv, rawServer, serverEnv, repoRoot } from './helpers.mjs';

function requireEnv(names) {
  const missing = names.filter((n) => !process.env[n]);
  assert.deepEqual(missing, [], `missing ${missing.join(', ')}: run scripts/servers.sh start and export its env (scripts/test.sh does)`);
}

function toolText(r) { return r.content?.[0]?.text ?? ''; }

test('embedding model missing: semantic search is a clear tool error, other tools keep working', async () => {
  requireEnv(['POSTGRES_DSN']);
  const { client } = await connectSdk(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN, MCPDB_EMBED_MODEL_DIR: '/nonexistent/model' }));
  try {
    const r = await client.callTool({ name: 'semantic_search_documents', arguments: { query: 'indexes', k: 3 } });
    assert.equal(r.isError, true);
    assert.match(toolText(r), /MCPDB_EMBED_MODEL_DIR/);
    const ok = await client.callTool({ name: 'list_document_categories', arguments: {} });
    assert.equal(ok.isError, false);
    assert.deepEqual(await client.ping(), {});
  } finally {
    await client.close();
  }
});

test('DNS failure for the AWS endpoint: Unavailable for the call, server still serving', async () => {
  requireEnv(['AWS_REGION']);
  const { client } = await connectSdk(serverEnv({
    AWS_REGION: process.env.AWS_REGION,
    AWS_ACCESS_KEY_ID: 'AKIDFAULTTEST0000000', AWS_SECRET_ACCESS_KEY: 'fault-test-secret-value',
    AWS_ENDPOINT_URL_DYNAMODB: 'http://dynamodb.nonexistent.invalid:8000',
  }));
  try {
    const r = await client.callTool({ name: 'get_dynamodb_item', arguments: { target: 'demo_documents', partition_key: 'doc-01' } });
    assert.equal(r.isError, true);
    assert.match(toolText(r), /unavailable/i);
    assert.doesNotMatch(toolText(r), /fault-test-secret-value/);
    assert.deepEqual(await client.ping(), {});
  } finally {
    await client.close();
  }
});

test('a query over its timeout is cancelled on the server and reported as timed out', async () => {
  requireEnv(['POSTGRES_DSN']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-fault-'));
  const cfg = path.join(dir, 'slow.yaml');
  fs.writeFileSync(cfg, [
    'postgres:',
    '  tools:',
    '    slow_count:',
    '      description: Counts a large cross join (a deliberately slow statement for the fault test).',
    '      statement: SELECT count(*) AS n FROM generate_series(1, 20000) a, generate_series(1, 20000) b',
    '      limits: {timeout_ms: 300}',
    '',
  ].join('\n'));
  const { client } = await connectSdk(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), ['serve', '--config', cfg]);
  try {
    const t0 = Date.now();
    const r = await client.callTool({ name: 'slow_count', arguments: {} });
    const ms = Date.now() - t0;
    assert.equal(r.isError, true);
    assert.match(toolText(r), /timed_out|timeout/i);
    assert.ok(ms < 10000, `timed out after ${ms} ms`);
    assert.deepEqual(await client.ping(), {});
  } finally {
    await client.close();
  }
});

test('a client that disconnects mid-call: the server cancels, exits 0 and writes nothing half', async () => {
  requireEnv(['POSTGRES_DSN']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-fault-'));
  const cfg = path.join(dir, 'slow.yaml');
  fs.writeFileSync(cfg, 'server: {drain_ms: 200}\nlimits: {timeout_ms: 60000}\npostgres:\n  tools:\n    slow_count:\n      description: Slow statement for the fault test.\n' +
    '      statement: SELECT count(*) AS n FROM generate_series(1, 30000) a, generate_series(1, 30000) b\n      limits: {timeout_ms: 60000}\n');
  const s = rawServer(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), ['serve', '--config', cfg]);
  s.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}');
  await s.next();
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_count","arguments":{}}}');
  await new Promise((r) => setTimeout(r, 300));
  const t0 = Date.now();
  s.child.stdin.end();
  const { code } = await s.exited();
  assert.equal(code, 0);
  assert.ok(Date.now() - t0 < 15000, 'shutdown did not wait for the 60 s statement');
  // The statement was cancelled on the server: nothing of ours is still running there.
  if (process.env.MCPDB_PG_ADMIN_DSN) {
    await new Promise((r) => setTimeout(r, 500));
    const running = execFileSync('psql', [process.env.MCPDB_PG_ADMIN_DSN, '-XAtqc',
      "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%generate_series(1, 30000)%' AND pid <> pg_backend_pid()"]).toString().trim();
    assert.equal(running, '0');
  }
});

// A PostgreSQL that accepts connections and never answers (a hung server, a black-holing proxy):
// calls waiting on it end when cancelled, and the server exits promptly when its input ends, not
// after the connection timeouts of its background work (the start-up self-check, the proof).
test('a silent database: cancelled calls end, and the server exits without waiting for it', async () => {
  const net = await import('node:net');
  const held = [];
  const silent = net.createServer((socket) => { held.push(socket); });
  await new Promise((r) => silent.listen(0, '127.0.0.1', r));
  const { port } = silent.address();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-fault-'));
  const cfg = path.join(dir, 'silent.yaml');
  fs.writeFileSync(cfg, 'postgres:\n  pool: {connect_timeout_ms: 20000}\n  tools:\n    one:\n' +
    '      description: One.\n      statement: SELECT 1 AS one\n');
  const s = rawServer(serverEnv({ POSTGRES_DSN: `host=127.0.0.1 port=${port} dbname=x user=x sslmode=disable` }),
    ['serve', '--config', cfg]);
  try {
    s.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}');
    await s.next();
    for (const id of [2, 3, 4]) s.send(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"one","arguments":{}}}`);
    // Past the self-check's start (200 ms after serving), with calls waiting on the silent server.
    await new Promise((r) => setTimeout(r, 700));
    for (const id of [2, 3, 4]) s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`);
    s.send('{"jsonrpc":"2.0","id":5,"method":"ping"}');
    // Cancelled calls get no answer (the MCP rule): the next line is the ping's, at once.
    const pong = await s.next(3000);
    assert.equal(pong.id, 5);
    const t0 = Date.now();
    s.child.stdin.end();
    const { code } = await s.exited();
    assert.equal(code, 0);
    assert.ok(Date.now() - t0 < 5000, `exit took ${Date.now() - t0} ms: it waited for the silent database`);
    assert.match(s.stderr(), /"outcome":"cancelled"/);
  } finally {
    for (const socket of held) socket.destroy();
    silent.close();
  }
});

test('a full worker pool answers busy instead of queueing without bound', async () => {
  requireEnv(['POSTGRES_DSN']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-fault-'));
  const cfg = path.join(dir, 'pool.yaml');
  fs.writeFileSync(cfg, 'server: {workers: 1, max_queue: 0}\npostgres:\n  tools:\n    slow_count:\n      description: Slow statement for the fault test.\n' +
    '      statement: SELECT count(*) AS n FROM generate_series(1, 20000) a, generate_series(1, 20000) b\n      limits: {timeout_ms: 2000}\n');
  const s = rawServer(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), ['serve', '--config', cfg]);
  s.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}');
  await s.next();
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_count","arguments":{}}}');
  await new Promise((r) => setTimeout(r, 200));
  s.send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow_count","arguments":{}}}');
  const busy = await s.next();
  assert.equal(busy.id, 3);
  assert.equal(busy.result.isError, true);
  assert.match(busy.result.content[0].text, /busy/);
  const first = await s.next(15000);
  assert.equal(first.id, 2);
  s.child.stdin.end();
  assert.equal((await s.exited()).code, 0);
});

test('the database restarted mid-session: the next calls reconnect (clear error at most once)', async () => {
  requireEnv(['POSTGRES_DSN']);
  const { client } = await connectSdk(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }));
  try {
    assert.equal((await client.callTool({ name: 'list_document_categories', arguments: {} })).isError, false);
    execFileSync('bash', [path.join(repoRoot, 'scripts/servers.sh'), 'restart', 'postgres'], { stdio: 'ignore' });
    const r1 = await client.callTool({ name: 'list_document_categories', arguments: {} });
    if (r1.isError) assert.match(toolText(r1), /unavailable/i);
    const r2 = await client.callTool({ name: 'list_document_categories', arguments: {} });
    assert.equal(r2.isError, false, toolText(r2));
  } finally {
    await client.close();
  }
});

// The operator's diagnostics (self-check findings, connection errors) name hosts, ports, roles and
// databases; a client that asked for every log message must get none of them (MCP: log messages
// must not carry internal system details). Every engine is pointed at names that exist nowhere,
// so each failure has something to leak; stderr, the operator's log, must still say what failed.
test('log notifications to a client carry no host, port, role or database', async () => {
  const secrets = {
    pgHost: 'pg-internal-7f3a.invalid', pgPort: '54329', pgRole: 'pgrole_7f3a', pgDb: 'pgdb_7f3a',
    myHost: 'my-internal-7f3a.invalid', myPort: '33069', myUser: 'myuser_7f3a', myDb: 'mydb_7f3a',
    mongoHost: 'mongo-internal-7f3a.invalid', mongoDb: 'mongodb_7f3a',
  };
  const s = rawServer(serverEnv({
    MCPDB_LOG_LEVEL: 'debug',
    POSTGRES_DSN: `postgresql://${secrets.pgRole}@${secrets.pgHost}:${secrets.pgPort}/${secrets.pgDb}?connect_timeout=2`,
    MYSQL_DSN: `mysql://${secrets.myUser}:pw@${secrets.myHost}:${secrets.myPort}/${secrets.myDb}`,
    MONGODB_URI: `mongodb://${secrets.mongoHost}:27999/?serverSelectionTimeoutMS=1000`,
    MONGODB_DATABASE: secrets.mongoDb,
  }));
  const messages = [];
  const replies = new Map();
  const pump = async (untilId, timeoutMs) => {
    while (!replies.has(untilId)) {
      const m = await s.next(timeoutMs);
      if (m.method === 'notifications/message') messages.push(m);
      else if (m.id !== undefined) replies.set(m.id, m);
    }
  };
  s.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}');
  await pump(1, 5000);
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  s.send('{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}');
  await pump(2, 5000);
  const calls = [['list_document_categories', {}], ['list_document_categories_mysql', {}],
    ['count_mongodb_documents', { target: 'demo_documents' }]];
  calls.forEach(([name, args], i) => s.send(JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name, arguments: args } })));
  for (let i = 0; i < calls.length; ++i) await pump(10 + i, 20000);
  // The background self-check starts 200 ms after the start; give it time to report.
  await new Promise((r) => setTimeout(r, 1500));
  s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}');
  await pump(3, 5000);
  s.child.stdin.end();
  await s.exited();
  for (const id of [10, 11, 12]) assert.equal(replies.get(id).result?.isError, true, `call ${id} should fail`);
  const sent = JSON.stringify([...messages, ...replies.values()]);
  for (const [what, value] of Object.entries(secrets)) {
    assert.ok(!sent.includes(value), `${what} reached the client: ${sent.slice(0, 2000)}`);
  }
  // The operator's log on stderr keeps the diagnosis (the same run had something to leak).
  assert.match(s.stderr(), new RegExp(secrets.pgHost.replace(/\./g, '\\.')));
});
