// OpenTelemetry traces end to end: the real server exports OTLP/HTTP JSON to a receiver inside
// this test (a node HTTP server on 127.0.0.1), which checks the wire format, the parent links
// (the caller's traceparent → the request span → each database round trip's span), that no
// argument value and no collector credential reaches a span or the log, and that a collector that
// is down or never answers holds no call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { bin, engineEnv, rawServer, serverEnv, spawnHttpServer } from './helpers.mjs';

const CANARY = 'zq-canary-8812';  // an argument value: must never appear in a span
const AUTH = 'Bearer e2e-otlp-secret-4471';  // the collector's credential: from the environment only
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

// A caller's traceparent with fresh random ids.
function traceparent() {
  const hex = (n) => [...Array(n)].map(() => Math.floor(Math.random() * 16).toString(16)).join('');
  const trace = hex(32);
  const span = hex(16);
  return { trace, span, header: `00-${trace}-${span}-01` };
}

// An OTLP/HTTP receiver: every export's path, content type, headers and parsed body. `hang`: it
// reads the request and never answers (a collector that is stuck).
async function startReceiver({ hang = false } = {}) {
  const exports = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => {
      let json = null;
      try { json = JSON.parse(data); } catch { /* recorded as invalid below */ }
      exports.push({ path: req.url, method: req.method, headers: req.headers, json, raw: data });
      if (hang) return;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/v1/traces`;
  const spans = () => exports.flatMap((e) => (e.json?.resourceSpans ?? [])
    .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  return {
    url,
    exports,
    spans,
    raw: () => exports.map((e) => e.raw).join('\n'),
    async waitFor(pred, ms = 15000) {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        if (pred(spans())) return spans();
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('the receiver did not get the expected spans; got: ' + JSON.stringify(spans().map((s) => s.name)));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// The built-in allowlist plus a telemetry section exporting to `endpoint`.
function configWith(endpoint, extra = '', http = '') {
  const builtIn = execFileSync(bin, ['check-config', '--print-default']).toString();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-otel-'));
  const cfg = path.join(dir, 'telemetry.yaml');
  fs.writeFileSync(cfg, `${builtIn}\n${http}telemetry:\n  enabled: true\n  otlp_endpoint: ${endpoint}\n` +
    '  service_name: mcpdb-e2e\n  export_interval_ms: 50\n  headers_env:\n    authorization: E2E_OTLP_AUTH\n' +
    extra);
  return cfg;
}

const attr = (span, key) => {
  const a = span.attributes.find((x) => x.key === key);
  return a ? (a.value.stringValue ?? a.value.intValue ?? a.value.boolValue) : undefined;
};

// The request span of the call made under `parent`, and the database spans below it.
function callSpans(spans, parent) {
  const request = spans.find((s) => s.traceId === parent.trace && s.parentSpanId === parent.span);
  const children = request ? spans.filter((s) => s.parentSpanId === request.spanId) : [];
  return { request, children };
}

function checkWireFormat(receiver) {
  assert.ok(receiver.exports.length > 0, 'at least one export');
  for (const e of receiver.exports) {
    assert.equal(e.method, 'POST');
    assert.equal(e.path, '/v1/traces');
    assert.match(e.headers['content-type'], /^application\/json/);
    assert.equal(e.headers.authorization, AUTH, 'the header from telemetry.headers_env');
    assert.ok(e.json, 'a JSON body');
    const rs = e.json.resourceSpans;
    assert.ok(Array.isArray(rs) && rs.length === 1);
    assert.deepEqual(rs[0].resource.attributes.find((a) => a.key === 'service.name').value, { stringValue: 'mcpdb-e2e' });
    assert.equal(rs[0].scopeSpans[0].scope.name, 'mcp-dbserver');
    for (const s of rs[0].scopeSpans[0].spans) {
      assert.match(s.traceId, HEX32);
      assert.match(s.spanId, HEX16);
      if ('parentSpanId' in s) assert.match(s.parentSpanId, HEX16);
      assert.ok([2, 3].includes(s.kind), `kind ${s.kind}`);
      assert.match(s.startTimeUnixNano, /^\d+$/);
      assert.match(s.endTimeUnixNano, /^\d+$/);
      assert.ok(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano));
      assert.ok([0, 2].includes(s.status.code));
    }
  }
  assert.ok(!receiver.raw().includes(CANARY), 'no argument value in any exported span');
}

test('stdio: the caller\'s _meta traceparent is the request span\'s parent, each round trip its child', async () => {
  const receiver = await startReceiver();
  const cfg = configWith(receiver.url, '  postgres_application_name: true\n');
  const s = rawServer(serverEnv({ ...engineEnv(), MCPDB_CONFIG: cfg, E2E_OTLP_AUTH: AUTH }));
  try {
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } }));
    assert.ok((await s.next(20000)).result);
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const calls = [
      ['get_document', { id: CANARY }, 'postgresql', 'postgresql SELECT'],
      ['get_document_mysql', { id: CANARY }, 'mysql', 'mysql SELECT'],
      ['get_dynamodb_item', { target: 'demo_documents', partition_key: CANARY }, 'aws.dynamodb', 'dynamodb GetItem'],
      ['list_mongodb_documents', { target: 'documents', limit: 2 }, 'mongodb', 'mongodb find'],
    ];
    const parents = [];
    let id = 1;
    for (const [name, args] of calls) {
      const parent = traceparent();
      parents.push(parent);
      s.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: { traceparent: parent.header, tracestate: 'e2e=on' } } }));
      const r = await s.next(20000);
      assert.equal(r.id, id);
      assert.notEqual(r.result?.isError, true, `${name}: ${JSON.stringify(r).slice(0, 300)}`);
      id++;
    }
    const spans = await receiver.waitFor((all) => parents.every((p) => callSpans(all, p).children.length > 0));
    calls.forEach(([name, , system, dbName], i) => {
      const { request, children } = callSpans(spans, parents[i]);
      assert.equal(request.name, `tools/call ${name}`);
      assert.equal(request.kind, 2);
      assert.equal(request.traceState, 'e2e=on');
      assert.equal(attr(request, 'gen_ai.tool.name'), name);
      assert.equal(attr(request, 'mcp.protocol.version'), '2025-11-25');
      assert.equal(attr(request, 'mcpdb.outcome'), 'ok');
      const db = children.find((c) => c.name === dbName);
      assert.ok(db, `${name}: a ${dbName} span under the request span (got ${children.map((c) => c.name)})`);
      assert.equal(db.kind, 3);
      assert.equal(db.traceId, parents[i].trace);
      assert.equal(attr(db, 'db.system.name'), system);
    });
    checkWireFormat(receiver);
    s.child.stdin.end();
    const exited = await s.exited();
    assert.equal(exited.code, 0);
    assert.ok(!s.stderr().includes('e2e-otlp-secret'), 'the collector credential is never logged');
  } finally {
    s.child.kill('SIGKILL');
    await receiver.close();
  }
});

test('http: the traceparent header is the parent; params._meta wins over it', async () => {
  const receiver = await startReceiver();
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', 'otel-e2e', '--scope', 'postgres']).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)[0];
  const clients = keyOut.slice(keyOut.indexOf('  clients:')).trimEnd();
  const cfg = configWith(receiver.url, '', `http:\n  stateless: true\n${clients}\n`);
  const server = await spawnHttpServer(cfg, { POSTGRES_DSN: process.env.POSTGRES_DSN, E2E_OTLP_AUTH: AUTH });
  const post = async (body, headers) => {
    const r = await fetch(server.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-11-25', Authorization: `Bearer ${key}`, ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    return JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: ')).slice(6));
  };
  try {
    const header = traceparent();
    let r = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_document', arguments: { id: CANARY } } },
      { traceparent: header.header, tracestate: 'congo=t61rcWkgMzE' });
    assert.notEqual(r.result.isError, true);
    const meta = traceparent();
    const ignored = traceparent();
    r = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_documents_by_tag', arguments: { tag: CANARY }, _meta: { traceparent: meta.header } } },
      { traceparent: ignored.header });
    assert.notEqual(r.result.isError, true);
    // A malformed header (uppercase hex) is ignored: the request starts a trace of its own.
    const bad = traceparent();
    r = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { traceparent: bad.header.toUpperCase() });
    assert.ok(r.result.tools.length > 0);
    const spans = await receiver.waitFor((all) => callSpans(all, header).children.length > 0 &&
      callSpans(all, meta).children.length > 0 && all.some((s) => s.name === 'tools/list'));
    const first = callSpans(spans, header);
    assert.equal(first.request.name, 'tools/call get_document');
    assert.equal(first.request.traceState, 'congo=t61rcWkgMzE');
    assert.equal(first.children[0].name, 'postgresql SELECT');
    assert.equal(callSpans(spans, meta).request.name, 'tools/call search_documents_by_tag');
    assert.equal(spans.filter((s) => s.traceId === ignored.trace).length, 0, 'the header lost to _meta');
    const list = spans.find((s) => s.name === 'tools/list');
    assert.ok(!('parentSpanId' in list), 'an invalid traceparent gives no parent');
    assert.notEqual(list.traceId, bad.trace);
    checkWireFormat(receiver);
    assert.ok(!server.log().includes('e2e-otlp-secret'), 'the collector credential is never logged');
  } finally {
    server.child.kill('SIGTERM');
    await receiver.close();
  }
});

test('a collector that is down holds no call; the failure is logged without the credential', async () => {
  // A port nothing listens on: bound, then closed.
  const probe = http.createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = probe.address().port;
  await new Promise((resolve) => probe.close(resolve));
  const cfg = configWith(`http://127.0.0.1:${port}/v1/traces`, '  export_timeout_ms: 500\n');
  const s = rawServer(serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN, MCPDB_CONFIG: cfg, E2E_OTLP_AUTH: AUTH }));
  try {
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } }));
    assert.ok((await s.next(20000)).result);
    const started = Date.now();
    for (let i = 1; i <= 20; i++) {
      s.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'get_document', arguments: { id: 'doc-01' } } }));
      const r = await s.next(10000);
      assert.equal(r.result.structuredContent.row_count, 1);
    }
    assert.ok(Date.now() - started < 15000, `20 calls took ${Date.now() - started} ms`);
    // The export thread has tried by now (every 50 ms).
    const until = Date.now() + 10000;
    while (!s.stderr().includes('telemetry: exporting') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.match(s.stderr(), /telemetry: exporting \d+ span\(s\) to http:\/\/127\.0\.0\.1:\d+ failed/);
    const t0 = Date.now();
    s.child.stdin.end();
    assert.equal((await s.exited()).code, 0);
    assert.ok(Date.now() - t0 < 10000, 'shutdown is not held by the collector');
    assert.ok(!s.stderr().includes('e2e-otlp-secret'));
  } finally {
    s.child.kill('SIGKILL');
  }
});

test('a collector that never answers holds no call; spans beyond the queue are dropped and counted', async () => {
  const receiver = await startReceiver({ hang: true });
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', 'otel-slow', '--scope', 'postgres', '--rate', '1000', '--burst', '1000']).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)[0];
  const clients = keyOut.slice(keyOut.indexOf('  clients:')).trimEnd();
  const cfg = configWith(receiver.url, '  export_timeout_ms: 2000\n  batch_size: 2\n  max_queue: 4\n',
    `http:\n  stateless: true\n${clients}\n`);
  const server = await spawnHttpServer(cfg, { POSTGRES_DSN: process.env.POSTGRES_DSN, E2E_OTLP_AUTH: AUTH });
  try {
    const started = Date.now();
    for (let i = 1; i <= 30; i++) {
      const r = await fetch(server.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-11-25', Authorization: `Bearer ${key}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'get_document', arguments: { id: 'doc-01' } } }),
      });
      const text = await r.text();
      assert.equal(r.status, 200);
      assert.match(text, /"row_count":1/);
    }
    const took = Date.now() - started;
    assert.ok(took < 15000, `30 calls took ${took} ms with a stuck collector`);
    assert.ok(receiver.exports.length >= 1, 'the exporter reached the collector');
    const metrics = await (await fetch(server.url.replace(/\/mcp$/, '/metrics'))).text();
    const dropped = Number(metrics.match(/^mcpdb_telemetry_spans_dropped_total (\S+)$/m)?.[1]);
    assert.ok(dropped > 0, `spans dropped under pressure are counted (${dropped})`);
    assert.match(metrics, /^mcpdb_telemetry_queue_spans \d+/m);
    const t0 = Date.now();
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.on('exit', resolve));
    assert.ok(Date.now() - t0 < 15000, 'shutdown waits at most for the export timeout');
  } finally {
    server.child.kill('SIGKILL');
    await receiver.close();
  }
});
