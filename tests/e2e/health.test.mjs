// /healthz and /readyz on the operations listener (SECURITY.md "The operations listener"): the
// real binary with a PostgreSQL and a MySQL source, each reached through a TCP proxy this test
// stops, starts and black-holes. Readiness follows the sources (503 → 200 → 503 → 200) while
// liveness stays 200; a flood of /readyz costs the databases at most one probe per source per
// interval (counted at the proxies); a probe of a silent database answers not-ready within its
// bound; and the endpoints answer an orchestrator's probe (a pod IP as Host, no key) while
// /metrics keeps its access rule and nothing names a source, a host or an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { bin, serverEnv } from './helpers.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A TCP proxy to host:port that can be stopped (listener closed, every connection reset),
// started again on the same port, or made silent (accepts, forwards nothing). It counts the
// connections it accepted and the writes clients sent through it.
async function tcpProxy(host, port) {
  const sockets = new Set();
  const stats = { connections: 0, writes: 0 };
  let server = null;
  let silent = false;
  let listenPort = 0;
  const pipe = (client) => {
    stats.connections++;
    sockets.add(client);
    const upstream = net.connect(port, host);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (d) => { stats.writes++; if (!silent) upstream.write(d); });
    upstream.on('data', (d) => { if (!silent) client.write(d); });
    for (const s of [client, upstream]) { s.on('error', end); s.on('close', end); }
  };
  const proxy = {
    stats,
    get port() { return listenPort; },
    async start() {
      server = net.createServer(pipe);
      await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(listenPort, '127.0.0.1', resolve);
      });
      listenPort = server.address().port;
    },
    async stop() {
      const closed = new Promise((r) => server.close(r));
      for (const s of sockets) s.destroy();
      sockets.clear();
      await closed;
    },
    silence(on) { silent = on; },
  };
  await proxy.start();
  return proxy;
}

// One GET with exact headers (fetch would not let a test set Host); { status, body, json }.
function get(port, urlPath, headers = {}, agent = undefined) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, method: 'GET', headers, agent }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => {
        let json;
        try { json = JSON.parse(body); } catch { json = undefined; }
        resolve({ status: res.statusCode, body, json, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${urlPath} took over 5 s`)));
    req.end();
  });
}

// Asks until `status` or `within` ms; the last answer.
async function until(port, urlPath, status, within = 15000) {
  const end = Date.now() + within;
  let r = await get(port, urlPath);
  while (r.status !== status && Date.now() < end) {
    await sleep(100);
    r = await get(port, urlPath);
  }
  return r;
}

// Source names, hosts and ports that an unauthenticated answer must never carry.
function assertNothingNamed(body, secrets) {
  for (const s of secrets) assert.ok(!body.includes(s), `the answer names '${s}': ${body}`);
}

function dsnVia(urlText, port) {
  const u = new URL(urlText);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

async function startServer({ pgPort, myPort, access }) {
  assert.ok(process.env.POSTGRES_DSN && process.env.MYSQL_DSN,
    'POSTGRES_DSN and MYSQL_DSN: run through scripts/test.sh');
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', 'ops-reader', '--scope', 'postgres']).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)?.[0];
  const block = keyOut.slice(keyOut.indexOf('  clients:'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-health-'));
  const cfg = path.join(dir, 'health.yaml');
  fs.writeFileSync(cfg, [
    'postgres:',
    '  sources:',
    '    pgsrc_b7f3: {dsn_env: HEALTH_PG_DSN}',
    '  pool: {connect_timeout_ms: 1500}',
    '  tools:',
    '    pg_one: {source: pgsrc_b7f3, description: One row., statement: SELECT 1 AS one}',
    'mysql:',
    '  sources:',
    '    mysrc_9c2e: {dsn_env: HEALTH_MY_DSN}',
    '  tools:',
    '    my_one: {source: mysrc_9c2e, description: One row., statement: SELECT 1 AS one}',
    'http:',
    `  metrics: {listen: "127.0.0.1:0", access: ${access}}`,
    block.trimEnd(),
    '',
  ].join('\n'));
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--config', cfg], {
    env: serverEnv({
      HEALTH_PG_DSN: dsnVia(process.env.POSTGRES_DSN, pgPort),
      HEALTH_MY_DSN: dsnVia(process.env.MYSQL_DSN, myPort),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const ports = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server did not start: ' + log)), 30000);
    child.stderr.on('data', (d) => {
      log += d.toString();
      const main = log.match(/listening on http:\/\/[^\s]+:(\d+)\/mcp/);
      const ops = log.match(/metrics on port (\d+)/);
      if (main && ops) { clearTimeout(t); resolve({ main: Number(main[1]), ops: Number(ops[1]) }); }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${log}`)));
  });
  return { child, key, ...ports, log: () => log };
}

async function stopServer(s) {
  const exited = new Promise((r) => s.child.on('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

test('readiness follows the sources through a proxy; liveness stays up; probes stay bounded', async (t) => {
  const pgUrl = new URL(process.env.POSTGRES_DSN);
  const myUrl = new URL(process.env.MYSQL_DSN);
  const pg = await tcpProxy(pgUrl.hostname, Number(pgUrl.port));
  const my = await tcpProxy(myUrl.hostname, Number(myUrl.port));
  const s = await startServer({ pgPort: pg.port, myPort: my.port, access: 'loopback' });
  const secrets = ['pgsrc_b7f3', 'mysrc_9c2e', String(pg.port), String(my.port), pgUrl.port, myUrl.port, 'postgres', 'mysql'];
  try {
    // Nothing probed before the first ask: not ready (and not the MCP listener's business).
    const first = await get(s.ops, '/readyz');
    assert.equal(first.status, 503, first.body);
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.equal((await get(s.ops, '/healthz')).status, 200);
    assert.equal((await get(s.main, '/readyz')).status, 404, 'the ops listener serves health, not the MCP one');

    // 200 once both sources answered and the self-check passed.
    let r = await until(s.ops, '/readyz', 200);
    assert.equal(r.status, 200, r.body + '\n' + s.log());
    assert.deepEqual(r.json, { status: 'ready', sources_ready: 2, sources_total: 2, self_check: 'passed' });
    assertNothingNamed(r.body, secrets);

    // PostgreSQL goes away: 503 with one source of two, liveness still 200.
    await pg.stop();
    r = await until(s.ops, '/readyz', 503, 10000);
    assert.equal(r.status, 503, r.body);
    assert.equal(r.json.sources_ready, 1);
    assertNothingNamed(r.body, secrets);
    assert.ok(!/refused|connect|timeout|error/i.test(r.body), `no error text: ${r.body}`);
    assert.equal((await get(s.ops, '/healthz')).status, 200);

    // Back: 200 again.
    await pg.start();
    r = await until(s.ops, '/readyz', 200);
    assert.equal(r.status, 200, r.body);

    // A silent MySQL (accepts, never answers): not ready within the probe's bound, and every
    // /readyz answer meanwhile is immediate (the ask never waits for the probe).
    my.silence(true);
    const t0 = Date.now();
    let slowest = 0;
    do {
      const a = Date.now();
      r = await get(s.ops, '/readyz');
      slowest = Math.max(slowest, Date.now() - a);
      if (r.status === 503) break;
      await sleep(100);
    } while (Date.now() - t0 < 15000);
    assert.equal(r.status, 503, 'a silent source makes it not ready');
    t.diagnostic(`silent MySQL: not ready after ${Date.now() - t0} ms; slowest /readyz ${slowest} ms`);
    assert.ok(Date.now() - t0 < 8000, `not ready after ${Date.now() - t0} ms (interval 2 s + timeout 2 s)`);
    assert.ok(slowest < 500, `a /readyz answer took ${slowest} ms`);
    assert.equal((await get(s.ops, '/healthz')).status, 200);
    my.silence(false);
    await my.stop();  // reset the connections the silence left half-open
    await my.start();
    r = await until(s.ops, '/readyz', 200, 20000);
    assert.equal(r.status, 200, r.body);

    // A flood of /readyz: each source probed at most once per 2 s interval.
    const before = { pg: { ...pg.stats }, my: { ...my.stats } };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    let asks = 0;
    const floodEnd = Date.now() + 3000;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (Date.now() < floodEnd) {
        const a = await get(s.ops, '/readyz', {}, agent);
        assert.ok(a.status === 200 || a.status === 503);
        asks++;
      }
    }));
    agent.destroy();
    assert.ok(asks > 300, `only ${asks} asks in 3 s`);
    const pgWrites = pg.stats.writes - before.pg.writes;
    const myWrites = my.stats.writes - before.my.writes;
    const newConnections = pg.stats.connections - before.pg.connections + my.stats.connections - before.my.connections;
    // At most 3 probes per source in 3 s; a probe is one write to PostgreSQL (one pipeline) and
    // a few to MySQL (statement, then the session reset). Unbounded, each ask would be a probe.
    t.diagnostic(`flood: ${asks} asks; ${pgWrites} writes to PostgreSQL, ${myWrites} to MySQL, ${newConnections} new connections`);
    assert.ok(pgWrites <= 8, `${pgWrites} writes to PostgreSQL for ${asks} asks`);
    assert.ok(myWrites <= 40, `${myWrites} writes to MySQL for ${asks} asks`);
    assert.ok(newConnections <= 4, `${newConnections} new connections for ${asks} asks`);
  } finally {
    await stopServer(s);
    await pg.stop().catch(() => {});
    await my.stop().catch(() => {});
  }
});

test('an orchestrator probe (pod IP as Host, no key) reaches health; /metrics keeps its rule; no names leak', async () => {
  const pgUrl = new URL(process.env.POSTGRES_DSN);
  const myUrl = new URL(process.env.MYSQL_DSN);
  const pg = await tcpProxy(pgUrl.hostname, Number(pgUrl.port));
  const my = await tcpProxy(myUrl.hostname, Number(myUrl.port));
  const s = await startServer({ pgPort: pg.port, myPort: my.port, access: 'key' });
  const secrets = ['pgsrc_b7f3', 'mysrc_9c2e', String(pg.port), String(my.port), 'postgres', 'mysql'];
  try {
    const pod = { Host: `10.244.3.17:${s.ops}` };
    assert.equal((await get(s.ops, '/healthz', pod)).status, 200);
    let r = await until(s.ops, '/readyz', 200);
    assert.equal(r.status, 200, r.body + '\n' + s.log());
    r = await get(s.ops, '/readyz', pod);
    assert.equal(r.status, 200);
    assertNothingNamed(r.body, secrets);
    r = await get(s.ops, '/readyz', { Host: `[fd00::17]:${s.ops}` });
    assert.equal(r.status, 200, 'an IPv6 pod address');

    // DNS rebinding: a page on another site reaches the port under its own name. Refused.
    for (const host of ['evil.example', `evil.example:${s.ops}`, '10.244.3.17.evil.example', 'localhost.evil.example']) {
      r = await get(s.ops, '/readyz', { Host: host });
      assert.equal(r.status, 403, `Host ${host}`);
      assertNothingNamed(r.body, secrets);
    }
    r = await get(s.ops, '/healthz', { Host: '10.244.3.17', Origin: 'http://evil.example' });
    assert.equal(r.status, 403, 'a foreign Origin');

    // /metrics: not for a pod-IP Host, not without the key (access: key), and with it as before.
    assert.equal((await get(s.ops, '/metrics', pod)).status, 403);
    assert.equal((await get(s.ops, '/metrics')).status, 401);
    assert.equal((await get(s.ops, '/metrics', { Authorization: `Bearer ${s.key}` })).status, 200);

    // The detail (sources by name) under the same rule as /metrics; still no host, port or error.
    r = await get(s.ops, '/readyz?verbose');
    assert.equal(r.status, 401);
    assertNothingNamed(r.body, secrets);
    r = await get(s.ops, '/readyz?verbose', { Authorization: `Bearer ${s.key}` });
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(r.json.sources, [
      { engine: 'postgres', source: 'pgsrc_b7f3', ready: true },
      { engine: 'mysql', source: 'mysrc_9c2e', ready: true },
    ]);
    assertNothingNamed(r.body, [String(pg.port), String(my.port), '127.0.0.1']);

    // Only GET; the MCP endpoint is not on the ops listener.
    const post = await new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: s.ops, path: '/readyz', method: 'POST' }, (res) => { res.resume(); resolve(res.statusCode); });
      req.on('error', reject);
      req.end();
    });
    assert.equal(post, 405);
    assert.equal((await get(s.ops, '/mcp', pod)).status, 403, 'the pod-IP Host opens nothing else');
  } finally {
    await stopServer(s);
    await pg.stop().catch(() => {});
    await my.stop().catch(() => {});
  }
});

// One DynamoDB API call as the tests' local server takes it (it checks the form of the
// signature, not the signature): the table a DynamoDB source's probe describes, made and dropped.
async function dynamoCall(endpoint, operation, body) {
  const r = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': `DynamoDB_20120810.${operation}`,
      'X-Amz-Date': '20260101T000000Z',
      Authorization: 'AWS4-HMAC-SHA256 Credential=AKIDHEALTHE2E/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00',
    },
    body: JSON.stringify(body),
  });
  return { status: r.status, text: await r.text() };
}

async function createDynamoTable(endpoint, table) {
  const r = await dynamoCall(endpoint, 'CreateTable', {
    TableName: table,
    AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  assert.ok(r.status === 200 || /ResourceInUseException/.test(r.text), `CreateTable: ${r.status} ${r.text}`);
}

test('MongoDB and DynamoDB sources: ready, not ready while one is down, ready again (self_check: off)', async (t) => {
  assert.ok(process.env.MONGODB_URI && process.env.AWS_ENDPOINT_URL_DYNAMODB,
    'MONGODB_URI and AWS_ENDPOINT_URL_DYNAMODB: run through scripts/test.sh');
  const mongoUrl = new URL(process.env.MONGODB_URI);
  const ddbUrl = new URL(process.env.AWS_ENDPOINT_URL_DYNAMODB);
  await createDynamoTable(ddbUrl.toString(), 'health_e2e_items');
  const mongo = await tcpProxy(mongoUrl.hostname, Number(mongoUrl.port));
  const ddb = await tcpProxy(ddbUrl.hostname, Number(ddbUrl.port));
  const mongoVia = new URL(process.env.MONGODB_URI);
  mongoVia.hostname = '127.0.0.1';
  mongoVia.port = String(mongo.port);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-health-'));
  const cfg = path.join(dir, 'health.yaml');
  fs.writeFileSync(cfg, [
    'server: {self_check: off}',
    'dynamodb:',
    '  sources:',
    '    ddbsrc_41a7: {endpoint_env: HEALTH_DDB_URL}',
    '  targets:',
    '    items: {source: ddbsrc_41a7, table: health_e2e_items, description: Items., partition_key: {name: id, type: S}}',
    'mongodb:',
    '  sources:',
    '    mgsrc_5d08: {uri_env: HEALTH_MONGO_URI, database: health_e2e}',
    '  targets:',
    '    docs: {source: mgsrc_5d08, collection: docs, description: Docs., projection: [title]}',
    'http:',
    '  auth: none',
    '  metrics: {listen: "127.0.0.1:0"}',
    '',
  ].join('\n'));
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--config', cfg], {
    env: serverEnv({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDHEALTHE2E0000000',
      AWS_SECRET_ACCESS_KEY: 'health-e2e-not-a-secret',
      HEALTH_DDB_URL: `http://127.0.0.1:${ddb.port}`,
      HEALTH_MONGO_URI: mongoVia.toString(),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const s = { child, log: () => log };
  s.ops = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start: ' + log)), 30000);
    child.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/metrics on port (\d+)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${log}`)));
  });
  try {
    let r = await until(s.ops, '/readyz', 200);
    assert.equal(r.status, 200, r.body + '\n' + log);
    assert.deepEqual(r.json, { status: 'ready', sources_ready: 2, sources_total: 2, self_check: 'off' });
    r = await get(s.ops, '/readyz?verbose');  // a loopback peer: the metrics rule admits it
    assert.deepEqual(r.json.sources, [
      { engine: 'dynamodb', source: 'ddbsrc_41a7', ready: true },
      { engine: 'mongodb', source: 'mgsrc_5d08', ready: true },
    ]);
    for (const [name, proxy, index] of [['MongoDB', mongo, 1], ['DynamoDB', ddb, 0]]) {
      await proxy.stop();
      const t0 = Date.now();
      r = await until(s.ops, '/readyz', 503, 10000);
      assert.equal(r.status, 503, `${name} down: ${r.body}`);
      t.diagnostic(`${name} stopped: not ready after ${Date.now() - t0} ms`);
      assert.equal(r.json.sources_ready, 1);
      assert.equal((await get(s.ops, '/readyz?verbose')).json.sources[index].ready, false);
      assert.equal((await get(s.ops, '/healthz')).status, 200);
      await proxy.start();
      r = await until(s.ops, '/readyz', 200, 40000);
      assert.equal(r.status, 200, `${name} back: ${r.body}`);
    }
  } finally {
    await stopServer(s);
    await mongo.stop().catch(() => {});
    await ddb.stop().catch(() => {});
    await dynamoCall(ddbUrl.toString(), 'DeleteTable', { TableName: 'health_e2e_items' });
  }
});
