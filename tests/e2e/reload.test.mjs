// Config reload without dropping calls (SIGHUP), on both transports, against the real Postgres:
// a slow call started before the reload finishes on the old config with the right result; the
// new tool appears and clients are told (notifications/tools/list_changed); a removed key's
// session is closed; a broken config is refused and the old tools keep working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bin, rawServer, serverEnv, spawnHttpServer } from './helpers.mjs';

// 6000 x 6000 rows: a second or more on the test machine, so the reload lands while it runs.
const slowTool = [
  '    slow_count:',
  '      description: Counts a large cross join (deliberately slow, for the reload test).',
  '      statement: SELECT count(*) AS n FROM generate_series(1, 6000) a, generate_series(1, 6000) b',
  '      limits: {timeout_ms: 60000}',
];
const oneTool = ['    one:', '      description: Returns one.', '      statement: SELECT 1 AS one'];
const twoTool = ['    two:', '      description: Returns two (added by the reload).', '      statement: SELECT 2 AS two'];

function configText(tools, httpBlock = '') {
  return ['limits: {timeout_ms: 60000}', 'postgres:', '  tools:', ...tools.flat(), ''].join('\n') + httpBlock;
}

// Writes `text` as an editor that saves by renaming does (the file is never seen half written).
function save(cfg, text) {
  fs.writeFileSync(cfg + '.tmp', text);
  fs.renameSync(cfg + '.tmp', cfg);
}

function requirePostgres(t) {
  if (!process.env.POSTGRES_DSN) {
    t.skip('POSTGRES_DSN missing: run through scripts/test.sh');
    return false;
  }
  return true;
}

async function until(what, pred, ms = 15000) {
  const t0 = Date.now();
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('stdio: SIGHUP adds a tool without dropping the call in flight, refuses a broken config', async (t) => {
  if (!requirePostgres(t)) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-reload-'));
  const cfg = path.join(dir, 'reload.yaml');
  save(cfg, configText([slowTool, oneTool]));
  const s = rawServer(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), ['serve', '--config', cfg]);
  const seen = [];
  const read = async (pred, ms = 20000) => {
    const found = seen.find(pred);
    if (found) return found;
    const t0 = Date.now();
    for (;;) {
      const m = await s.next(Math.max(100, ms - (Date.now() - t0)));
      seen.push(m);
      if (pred(m)) return m;
    }
  };
  try {
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } }));
    const init = await read((m) => m.id === 1);
    assert.equal(init.result.capabilities.tools.listChanged, true, 'stdio can send list changes, so it says so');
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_count', arguments: {} } }));
    await new Promise((r) => setTimeout(r, 300));

    save(cfg, configText([slowTool, oneTool, twoTool]));
    s.child.kill('SIGHUP');
    await read((m) => m.method === 'notifications/tools/list_changed');
    const slow = await read((m) => m.id === 2, 60000);
    assert.ok(seen.findIndex((m) => m.method === 'notifications/tools/list_changed') < seen.indexOf(slow),
      'the slow call was still running when the reload was applied');
    assert.equal(slow.result?.isError, false, JSON.stringify(slow));
    assert.equal(Number(slow.result.structuredContent.rows[0].n), 36000000, 'the slow call finished on its config with the right count');

    s.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }));
    const list = await read((m) => m.id === 3);
    assert.deepEqual(list.result.tools.map((x) => x.name).sort(), ['one', 'slow_count', 'two']);
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'two', arguments: {} } }));
    const two = await read((m) => m.id === 4);
    assert.equal(two.result.structuredContent.rows[0].two, 2);

    // A broken config (half a file): refused, the reason logged, the running tools unchanged.
    const whole = configText([slowTool, oneTool]);
    save(cfg, whole.slice(0, whole.length - 25));
    s.child.kill('SIGHUP');
    await until('the refusal in the log', () => /reload \(SIGHUP\): refused/.test(s.stderr()));
    assert.match(s.stderr(), /reload\.yaml:\d+/, 'the reason names the file and line');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'two', arguments: {} } }));
    const still = await read((m) => m.id === 5);
    assert.equal(still.result.structuredContent.rows[0].two, 2, 'the old config still serves');
    assert.equal(seen.filter((m) => m.method === 'notifications/tools/list_changed').length, 1,
      'a refused reload tells clients nothing');
  } finally {
    s.child.stdin.end();
    await s.exited();
  }
});

// --- HTTP

function newKey(name, extra = []) {
  const out = execFileSync(bin, ['keys', 'new', '--name', name, '--scope', 'postgres', ...extra]).toString();
  const key = out.match(/mcpdb_[A-Za-z0-9_-]+/)?.[0];
  assert.ok(key);
  // The printed block's entry for this client (after "  clients:"), already indented.
  const entry = out.slice(out.indexOf('  clients:') + '  clients:\n'.length).trimEnd();
  return { key, entry };
}

async function readBody(r) {
  const text = await r.text();
  if ((r.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
    return data.find((m) => 'id' in m) ?? data[0];
  }
  return text ? JSON.parse(text) : null;
}

async function rpc(url, key, body, session) {
  const headers = {
    'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${key}`,
  };
  if (session) { headers['Mcp-Session-Id'] = session; headers['MCP-Protocol-Version'] = '2025-11-25'; }
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, session: r.headers.get('mcp-session-id'), body: r.status === 202 ? null : await readBody(r) };
}

async function openSession(url, key) {
  const init = await rpc(url, key, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } });
  assert.equal(init.status, 200, JSON.stringify(init));
  assert.ok(init.session);
  await rpc(url, key, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
  return { id: init.session, capabilities: init.body.result.capabilities };
}

// Reads an event stream response into `stream.text` as it comes.
function collect(r, controller) {
  const stream = { text: '', close: () => controller.abort() };
  (async () => {
    const decoder = new TextDecoder();
    try { for await (const chunk of r.body) stream.text += decoder.decode(chunk); } catch { /* aborted */ }
  })();
  return stream;
}

// A 2025-11-25 session's GET stream (unsolicited messages).
async function getStream(url, key, session) {
  const controller = new AbortController();
  const r = await fetch(url, {
    method: 'GET', signal: controller.signal,
    headers: { Accept: 'text/event-stream', Authorization: `Bearer ${key}`, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' },
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  return collect(r, controller);
}

// A 2026-07-28 subscriptions/listen stream asking for tool list changes: what it has received.
async function listen(url, key) {
  const controller = new AbortController();
  const r = await fetch(url, {
    method: 'POST', signal: controller.signal,
    headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}`,
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'subscriptions/listen',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: {
      notifications: { toolsListChanged: true },
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1' } },
    } }),
  });
  assert.equal(r.status, 200);
  return collect(r, controller);
}

test('HTTP: SIGHUP adds a tool, tells listeners, keeps the call in flight, closes a removed key', async (t) => {
  if (!requirePostgres(t)) return;
  const a = newKey('reload-a');
  const b = newKey('reload-b');
  const c = newKey('reload-c');
  // c's scope narrowed by the reload: no longer the new tool `two`.
  const cNarrowed = { entry: c.entry.replace(/scope:.*/, 'scope: "postgres:one:slow_count"') };
  assert.notEqual(cNarrowed.entry, c.entry);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-reload-http-'));
  const cfg = path.join(dir, 'reload.yaml');
  const http = (entries) => 'http:\n  clients:\n' + entries.map((e) => e.entry + '\n').join('');
  save(cfg, configText([slowTool, oneTool], http([a, b, c])));
  const s = await spawnHttpServer(cfg, { POSTGRES_DSN: process.env.POSTGRES_DSN });
  const listener = await listen(s.url, a.key);
  let legacy;
  let revoked;
  try {
    const sa = await openSession(s.url, a.key);
    assert.equal(sa.capabilities.tools.listChanged, true, 'a session can open a GET stream, so it is promised');
    legacy = await getStream(s.url, a.key, sa.id);
    const sb = await openSession(s.url, b.key);
    revoked = await getStream(s.url, b.key, sb.id);
    const sc = await openSession(s.url, c.key);
    await until('the listen acknowledgment', () => listener.text.includes('subscriptions/acknowledged'));
    assert.match(listener.text, /"toolsListChanged":true/);

    let slowDone = false;
    const slow = rpc(s.url, a.key, { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'slow_count', arguments: {} } }, sa.id)
      .finally(() => { slowDone = true; });
    await new Promise((r) => setTimeout(r, 300));

    // Add a tool, remove client b, narrow client c: one SIGHUP.
    save(cfg, configText([slowTool, oneTool, twoTool], http([a, cNarrowed])));
    s.child.kill('SIGHUP');
    await until('notifications/tools/list_changed on the listen stream', () => listener.text.includes('notifications/tools/list_changed'));
    assert.equal(slowDone, false, 'the slow call was still running when the reload was applied');
    await until('notifications/tools/list_changed on the GET stream', () => legacy.text.includes('notifications/tools/list_changed'));
    await until('the reload in the log', () => /reload \(SIGHUP\): applied/.test(s.log()));
    assert.match(s.log(), /ended 2 session\(s\) of removed, rotated or narrowed client key/);

    const list = await rpc(s.url, a.key, { jsonrpc: '2.0', id: 11, method: 'tools/list' }, sa.id);
    assert.deepEqual(list.body.result.tools.map((x) => x.name).sort(), ['one', 'slow_count', 'two']);
    const two = await rpc(s.url, a.key, { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'two', arguments: {} } }, sa.id);
    assert.equal(two.body.result.structuredContent.rows[0].two, 2);

    const done = await slow;
    assert.equal(done.status, 200);
    assert.equal(done.body.result.isError, false, JSON.stringify(done.body));
    assert.equal(Number(done.body.result.structuredContent.rows[0].n), 36000000, 'the call in flight finished with the right count');

    // The removed key's session is gone: its next request is refused.
    const gone = await rpc(s.url, b.key, { jsonrpc: '2.0', id: 13, method: 'tools/list' }, sb.id);
    assert.ok([401, 404].includes(gone.status), `removed key's session answered ${gone.status}`);
    assert.ok(!revoked.text.includes('list_changed'), 'a revoked key hears nothing of the new tools');
    // The narrowed key's session is closed; a new one sees exactly its new scope.
    const closed = await rpc(s.url, c.key, { jsonrpc: '2.0', id: 15, method: 'tools/list' }, sc.id);
    assert.equal(closed.status, 404);
    const sc2 = await openSession(s.url, c.key);
    const narrowList = await rpc(s.url, c.key, { jsonrpc: '2.0', id: 16, method: 'tools/list' }, sc2.id);
    assert.deepEqual(narrowList.body.result.tools.map((x) => x.name).sort(), ['one', 'slow_count']);

    // A broken config: refused with the reason, the running config keeps serving.
    save(cfg, 'postgres:\n  tools:\n    three:\n      description: Deletes.\n      statement: DELETE FROM documents\n' + http([a, cNarrowed]));
    s.child.kill('SIGHUP');
    await until('the refusal in the log', () => /reload \(SIGHUP\): refused/.test(s.log()));
    assert.match(s.log(), /reload\.yaml:\d+/, 'the reason names the file and line');
    const still = await rpc(s.url, a.key, { jsonrpc: '2.0', id: 14, method: 'tools/call', params: { name: 'two', arguments: {} } }, sa.id);
    assert.equal(still.body.result.structuredContent.rows[0].two, 2);
    assert.equal(listener.text.split('notifications/tools/list_changed').length - 1, 1, 'a refused reload tells nobody');
    assert.equal(legacy.text.split('notifications/tools/list_changed').length - 1, 1);
  } catch (e) {
    console.error('server log (last lines):\n' + s.log().split('\n').slice(-40).join('\n'));
    throw e;
  } finally {
    listener.close();
    legacy?.close();
    revoked?.close();
    s.child.kill('SIGTERM');
  }
});

// --- Reload under load: clients keep calling while the config is reloaded again and again, each
// reload swapping the tool list and the Postgres pool (its size changes, so the engine is built
// anew and the old pool drained). Not one call may fail or go unanswered.

const reloads = 4;
const poolOf = (size) => `  pool: {size: ${size}}\n`;
function loadConfig(i, httpBlock = '') {
  const tools = i % 2 ? [oneTool, twoTool] : [oneTool];
  return ['limits: {timeout_ms: 60000}', 'postgres:', poolOf(2 + (i % 2)).trimEnd(), '  tools:', ...tools.flat(), ''].join('\n') + httpBlock;
}

// Reloads `reloads` times, each past the coalescing window (one reload a second at most), and
// waits until the log says each was applied.
async function reloadRepeatedly(cfg, child, log, httpBlock = '') {
  for (let i = 1; i <= reloads; i++) {
    await new Promise((r) => setTimeout(r, 1100));
    save(cfg, loadConfig(i, httpBlock));
    child.kill('SIGHUP');
    await until(`reload ${i} applied`, () => (log().match(/reload \(SIGHUP\): applied/g) ?? []).length >= i, 20000);
  }
  await new Promise((r) => setTimeout(r, 500));  // calls after the last reload too
}

test('stdio under load: 8 pipelined clients call through repeated reloads, every call answered', async (t) => {
  if (!requirePostgres(t)) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-reload-load-'));
  const cfg = path.join(dir, 'reload.yaml');
  save(cfg, loadConfig(0));
  const s = rawServer(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), ['serve', '--config', cfg]);
  try {
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e-load', version: '1' } } }));
    assert.ok((await s.next(20000)).result);
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    let running = true;
    let nextId = 1;
    let answered = 0;
    const outstanding = new Set();
    const failures = [];
    const send = () => {
      const id = nextId++;
      outstanding.add(id);
      s.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'one', arguments: {} } }));
    };
    for (let i = 0; i < 8; i++) send();
    const reader = (async () => {
      while (running || outstanding.size) {
        const m = await s.next(30000);
        if (m.id === undefined) continue;  // notifications/tools/list_changed
        outstanding.delete(m.id);
        answered++;
        if (m.error || m.result?.isError || m.result?.structuredContent?.rows?.[0]?.one !== 1) failures.push(m);
        if (running) send();
      }
    })();
    await reloadRepeatedly(cfg, s.child, s.stderr);
    running = false;
    await reader;
    assert.deepEqual(failures, [], 'every call during the reloads succeeded');
    assert.ok(answered >= 100, `the clients kept calling through the reloads (${answered} calls)`);
  } finally {
    s.child.stdin.end();
    await s.exited();
  }
});

test('HTTP under load: 8 clients (sessions and stateless) call through repeated reloads, none refused', async (t) => {
  if (!requirePostgres(t)) return;
  // The key's rate limit and cap well above what the clients send (the test is about reloads).
  const a = newKey('reload-load', ['--rate', '10000', '--burst', '10000', '--max-concurrent', '64']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-reload-load-http-'));
  const cfg = path.join(dir, 'reload.yaml');
  const httpBlock = `http:\n  clients:\n${a.entry}\n`;
  save(cfg, loadConfig(0, httpBlock));
  const s = await spawnHttpServer(cfg, { POSTGRES_DSN: process.env.POSTGRES_DSN });
  let running = true;
  let answered = 0;
  const failures = [];
  const one = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'one', arguments: {} } };
  const check = (r) => {
    answered++;
    if (r.status !== 200 || r.body?.error || r.body?.result?.isError || r.body?.result?.structuredContent?.rows?.[0]?.one !== 1) failures.push(r);
  };
  // Four 2025-11-25 sessions, four 2026-07-28 stateless clients.
  const sessionClient = async (n) => {
    const session = await openSession(s.url, a.key);
    for (let id = 1; running; id++) check(await rpc(s.url, a.key, { ...one, id: `${n}-${id}` }, session.id));
  };
  const statelessClient = async (n) => {
    for (let id = 1; running; id++) {
      const r = await fetch(s.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${a.key}`,
          'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'one',
        },
        body: JSON.stringify({ ...one, id: `s${n}-${id}`, params: { ...one.params, _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-load', version: '1' } } } }),
      });
      check({ status: r.status, body: await readBody(r) });
    }
  };
  try {
    const clients = [0, 1, 2, 3].map(sessionClient).concat([0, 1, 2, 3].map(statelessClient));
    await reloadRepeatedly(cfg, s.child, s.log, httpBlock);
    running = false;
    await Promise.all(clients);
    assert.deepEqual(failures.slice(0, 3), [], `every call during the reloads succeeded (${failures.length} did not)`);
    assert.ok(answered >= 100, `the clients kept calling through the reloads (${answered} calls)`);
  } catch (e) {
    console.error('server log (last lines):\n' + s.log().split('\n').slice(-40).join('\n'));
    throw e;
  } finally {
    s.child.kill('SIGTERM');
  }
});
