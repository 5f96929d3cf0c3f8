// Shared helpers for end-to-end tests: the real binary driven by real MCP clients.
import { spawn, execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const bin = process.env.MCPDB_BIN;
if (!bin) throw new Error('MCPDB_BIN is not set: run the e2e tests through ctest (scripts/test.sh)');

const require = createRequire(path.join(repoRoot, 'tools', 'package.json'));
export const sdkClient = require.resolve('@modelcontextprotocol/sdk/client/index.js');
export const sdkStdio = require.resolve('@modelcontextprotocol/sdk/client/stdio.js');
export const inspectorCli = path.join(repoRoot, 'tools/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

// Environment for the server: only what the test names, plus PATH (no engine by accident).
export function serverEnv(extra = {}) {
  return { PATH: process.env.PATH, MCPDB_LOG_LEVEL: 'info', ...extra };
}

// An engine enabled with no database behind it: the server registers its tools without
// connecting (a call, or the background self-check, would fail to connect), so protocol tests that
// need a running server need no database. serve refuses to start with no tool at all.
export function offlineEnv() {
  return { POSTGRES_DSN: 'host=127.0.0.1 port=1 dbname=none user=none connect_timeout=1 sslmode=disable' };
}

// The engine variables exported by scripts/servers.sh, when present.
export function engineEnv() {
  const names = ['POSTGRES_DSN', 'AWS_REGION', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY', 'MONGODB_URI', 'MONGODB_DATABASE', 'MYSQL_DSN', 'MCPDB_EMBED_MODEL_DIR', 'MCPDB_CONFIG'];
  const env = {};
  for (const n of names) if (process.env[n]) env[n] = process.env[n];
  return env;
}

export async function connectSdk(env, args = []) {
  const { Client } = await import(sdkClient);
  const { StdioClientTransport } = await import(sdkStdio);
  const transport = new StdioClientTransport({ command: bin, args, env, stderr: 'pipe' });
  let stderr = '';
  const client = new Client({ name: 'mcp-dbserver-e2e', version: '1.0.0' });
  await client.connect(transport);
  transport.stderr?.on('data', (d) => { stderr += d.toString(); });
  return { client, transport, stderr: () => stderr };
}

// A raw line-oriented session with the binary, for inputs the SDK would never send.
// MCPDB_WRAP (e.g. "valgrind --leak-check=full") runs the binary under a wrapper (scripts/soak.sh).
export function rawServer(env, args = []) {
  const wrap = (process.env.MCPDB_WRAP ?? '').split(' ').filter(Boolean);
  const child = wrap.length
    ? spawn(wrap[0], [...wrap.slice(1), bin, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  let stderr = '';
  const waiting = [];
  const lines = [];
  child.stdout.on('data', (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      const w = waiting.shift();
      if (w) w();
    }
  });
  child.stderr.on('data', (d) => { stderr += d.toString(); });
  return {
    child,
    stderr: () => stderr,
    send(text) { child.stdin.write(text + '\n'); },
    async next(timeoutMs = 5000) {
      if (lines.length) return JSON.parse(lines.shift());
      await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no reply within ' + timeoutMs + ' ms; stderr: ' + stderr)), timeoutMs);
        waiting.push(() => { clearTimeout(t); resolve(); });
      });
      return JSON.parse(lines.shift());
    },
    exited() { return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))); },
  };
}

// `serve --http` on a free loopback port with the built-in allowlist and one client whose fresh
// API key (from `keys new`, scoped to `scope`, postgres by default) is returned with the server's
// URL. `env` is the server's engine environment (by default only POSTGRES_DSN); `rate` (requests
// per second, also the burst) replaces the default per-client rate limit for tests that send more
// requests at once than it allows.
export async function startHttpServer(name = 'e2e-agent', { scope = 'postgres', env, rate } = {}) {
  assert.ok(process.env.POSTGRES_DSN, 'POSTGRES_DSN missing: run through scripts/test.sh');
  const rateArgs = rate ? ['--rate', String(rate), '--burst', String(rate)] : [];
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', name, '--scope', scope, ...rateArgs]).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)?.[0];
  assert.ok(key, 'keys new printed a key');
  // The printed block starts at "  clients:" and is already indented for an `http:` section.
  const block = keyOut.slice(keyOut.indexOf('  clients:'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-http-'));
  const cfg = path.join(dir, 'http.yaml');
  // The built-in allowlist plus an http section with this one client.
  const builtIn = execFileSync(bin, ['check-config', '--print-default']).toString();
  fs.writeFileSync(cfg, builtIn + '\nhttp:\n' + block.trimEnd() + '\n');
  const server = await spawnHttpServer(cfg, env ?? { POSTGRES_DSN: process.env.POSTGRES_DSN });
  return { ...server, key, cfg };
}

// Starts `serve --http` on a free loopback port with config `cfg` and `env` (over serverEnv()),
// and resolves once it listens: its process, its /mcp URL and its log so far.
export async function spawnHttpServer(cfg, env) {
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--config', cfg],
    { env: serverEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server did not start: ' + log)), 30000);
    child.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/listening on (http:\/\/[^\s]+\/mcp)/);
      if (m) { clearTimeout(t); resolve(m[1]); }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${log}`)));
  });
  return { child, url, log: () => log };
}

// The ESM entry of a package under tools/node_modules (for packages whose exports map offers no
// ./package.json and no way to resolve `import` from here): the "import" condition of its exports.
export function resolveImport(specifier) {
  const parts = specifier.split('/');
  const pkg = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const sub = '.' + specifier.slice(pkg.length);
  let dir = path.dirname(require.resolve(specifier));
  while (!fs.existsSync(path.join(dir, 'package.json')) || JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name !== pkg) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the package folder of ${specifier}`);
    dir = up;
  }
  const entry = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).exports?.[sub]?.import;
  const file = typeof entry === 'string' ? entry : entry?.default;
  if (!file) throw new Error(`${pkg} exports no "import" entry for ${sub}`);
  return new URL('file://' + path.join(dir, file)).href;
}

// Records every JSON-RPC message a client transport sends and receives (works for the v1 and v2
// SDK transports: both deliver through `onmessage` and send through `send`). `resultsOf(method)`
// gives the raw results (as on the wire, before the SDK parses them) of the requests of that method.
export function recordMessages(transport) {
  const sent = [];
  const received = [];
  const send = transport.send.bind(transport);
  transport.send = (message, ...rest) => { sent.push(message); return send(message, ...rest); };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (handler ? (message, ...rest) => { received.push(message); return handler(message, ...rest); } : undefined),
    set: (h) => { handler = h; },
  });
  const responsesOf = (method) => {
    const ids = new Set(sent.filter((m) => m.method === method && m.id !== undefined).map((m) => m.id));
    return received.filter((m) => m.id !== undefined && ids.has(m.id) && m.method === undefined);
  };
  return {
    sent,
    received,
    responsesOf,
    resultsOf: (method) => responsesOf(method).filter((m) => m.result).map((m) => m.result),
    notifications: () => received.filter((m) => m.method?.startsWith('notifications/')),
  };
}

// Every demo tool of the three engines (built-in allowlist, demo data loaded by scripts/test.sh),
// each with arguments and a check of its structuredContent. `call(name, args)` returns the
// tools/call result (any SDK). Returns the names called, in order.
export async function callEveryDemoTool(call) {
  const called = [];
  const ok = async (name, args) => {
    const r = await call(name, args);
    called.push(name);
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r).slice(0, 500)}`);
    assert.ok(Array.isArray(r.content) && r.content.length > 0 && r.content[0].type === 'text' && r.content[0].text.length > 0,
      `${name}: a text content block`);
    assert.equal(typeof r.structuredContent, 'object', `${name}: structuredContent`);
    return r.structuredContent;
  };
  // PostgreSQL
  let s = await ok('list_document_categories', {});
  assert.ok(s.rows.some((row) => row.category === 'databases' && row.documents > 0), 'categories');
  s = await ok('get_document', { id: 'doc-01' });
  assert.equal(s.row_count, 1);
  assert.equal(s.rows[0].id, 'doc-01');
  s = await ok('list_recent_documents', { limit: 3 });
  assert.equal(s.rows.length, 3);
  s = await ok('search_documents_by_tag', { tag: 'sql' });
  assert.ok(s.rows.length > 0 && s.rows.every((row) => row.tags.includes('sql')), 'tag filter');
  s = await ok('list_documents_published_between', { from: '2024-01-01', to: '2024-01-31' });
  assert.ok(s.rows.length > 0 && s.rows.every((row) => row.published >= '2024-01-01' && row.published <= '2024-01-31'), 'date range');
  s = await ok('semantic_search_documents', { query: 'how to speed up slow SQL queries', k: 3 });
  assert.equal(s.results.length, 3);
  assert.equal(s.results[0].id, 'doc-01', 'nearest document (the loader verifies the same top-1)');
  // DynamoDB
  s = await ok('list_dynamodb_targets', {});
  assert.ok(s.targets.some((t) => t.name === 'demo_documents'));
  s = await ok('get_dynamodb_item', { target: 'demo_documents', partition_key: 'doc-01' });
  assert.equal(s.found, true);
  assert.equal(s.item.id, 'doc-01');
  s = await ok('scan_dynamodb_table', { target: 'demo_documents', limit: 3 });
  assert.equal(s.items.length, 3);
  s = await ok('count_dynamodb_items', { target: 'demo_documents', exact: true });
  assert.equal(s.exact_count.count, 30, 'the 30 demo documents');
  // MongoDB
  s = await ok('list_mongodb_targets', {});
  assert.ok(s.targets.some((t) => t.name === 'documents'));
  s = await ok('list_mongodb_documents', { target: 'documents', limit: 3 });
  assert.equal(s.documents.length, 3);
  const first = s.documents[0];
  s = await ok('get_mongodb_document', { target: 'documents', id: first._id.$oid });
  assert.equal(s.document.doc_id, first.doc_id, 'the document fetched by _id is the listed one');
  s = await ok('count_mongodb_documents', { target: 'documents' });
  assert.equal(s.count, 30);
  s = await ok('semantic_search_mongodb', { query: 'how to speed up slow SQL queries', k: 3 });
  assert.equal(s.results.length, 3);
  assert.equal(s.results[0].id, 'doc-01');
  // MySQL / MariaDB
  s = await ok('list_document_categories_mysql', {});
  assert.equal(s.rows.reduce((n, row) => n + row.documents, 0), 30, 'the 30 demo documents');
  s = await ok('get_document_mysql', { id: 'doc-01' });
  assert.equal(s.row_count, 1);
  assert.equal(s.rows[0].id, 'doc-01');
  s = await ok('search_documents_text_mysql', { words: 'index', limit: 3 });
  assert.ok(s.rows.length > 0 && s.rows.length <= 3, 'word search');
  return called;
}

// The demo tools callEveryDemoTool calls, per engine (a listing must offer at least these).
export const demoTools = {
  postgres: ['list_document_categories', 'get_document', 'list_recent_documents', 'search_documents_by_tag',
    'list_documents_published_between', 'semantic_search_documents'],
  dynamodb: ['list_dynamodb_targets', 'get_dynamodb_item', 'scan_dynamodb_table', 'count_dynamodb_items'],
  mongodb: ['list_mongodb_targets', 'list_mongodb_documents', 'get_mongodb_document', 'count_mongodb_documents',
    'semantic_search_mongodb'],
  mysql: ['list_document_categories_mysql', 'get_document_mysql', 'search_documents_text_mysql'],
};

// Schema resources: resources/list offers mcpdb:// URIs for every engine in `engines` (and none
// for another engine); reading one per engine gives one JSON text content with its URI.
// `list()` and `read(uri)` call the SDK. Returns the URIs read.
export async function checkSchemaResources(list, read, engines) {
  const { resources } = await list();
  assert.ok(Array.isArray(resources) && resources.length > 0, 'resources/list offers resources');
  for (const r of resources) {
    assert.match(r.uri, /^mcpdb:\/\/(postgres|dynamodb|mongodb|mysql)\/[^\s]+$/, `resource URI ${r.uri}`);
    assert.equal(typeof r.name, 'string');
  }
  const read1 = [];
  for (const engine of ['postgres', 'dynamodb', 'mongodb', 'mysql']) {
    const mine = resources.filter((r) => r.uri.startsWith(`mcpdb://${engine}/`));
    if (!engines.includes(engine)) {
      assert.equal(mine.length, 0, `no ${engine} resource for a client that may not see ${engine}`);
      continue;
    }
    assert.ok(mine.length > 0, `a resource for ${engine}`);
    const uri = mine[0].uri;
    const r = await read(uri);
    assert.ok(Array.isArray(r.contents) && r.contents.length > 0, `contents of ${uri}`);
    const c = r.contents[0];
    assert.equal(c.uri, uri);
    assert.equal(c.mimeType, 'application/json');
    assert.equal(typeof c.text, 'string');
    const described = JSON.parse(c.text);
    assert.equal(typeof described, 'object');
    assert.ok(described !== null && Object.keys(described).length > 0, `${uri} describes something`);
    read1.push(uri);
  }
  return read1;
}
