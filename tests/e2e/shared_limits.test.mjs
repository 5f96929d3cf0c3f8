// Several replicas share their limits (issue #31): two real server processes behind no balancer,
// one Redis (scripts/servers.sh's, reached through a TCP proxy this test owns, so that the store
// can go away and come back). One key's rate limit and one source's failed-key backoff hold across
// both; with the store gone, fail_closed refuses (503) and per_replica falls back to each
// replica's own limits (counted and logged); when it returns, the limits are shared again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { bin, serverEnv, spawnHttpServer } from './helpers.mjs';

const redisPort = Number(process.env.MCPDB_REDIS_PORT);

// A TCP proxy to the store that can be stopped (every connection cut, the port closed) and
// started again on the same port.
function tcpProxy(targetPort) {
  let server;
  let port = 0;
  const sockets = new Set();
  const start = () => new Promise((resolve, reject) => {
    server = net.createServer((client) => {
      const upstream = net.connect(targetPort, '127.0.0.1');
      const end = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
      for (const s of [client, upstream]) { sockets.add(s); s.on('error', end); s.on('close', end); }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => { port = server.address().port; resolve(port); });
  });
  const stop = () => new Promise((resolve) => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    server.close(() => resolve());
  });
  return { start, stop, get port() { return port; } };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Two replicas with one config: one client key (rate, burst) and the shared store behind `proxy`.
async function startReplicas(proxyPort, { rate = 0.5, burst = 6, onStoreDown = 'fail_closed', throttle = '' } = {}) {
  const name = 'shared-agent';
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', name, '--scope', 'postgres',
    '--rate', String(rate), '--burst', String(burst)]).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)[0];
  const block = keyOut.slice(keyOut.indexOf('  clients:')).trimEnd();
  const prefix = `mcpdb-e2e-${crypto.randomBytes(6).toString('hex')}:`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-shared-'));
  const cfg = path.join(dir, 'http.yaml');
  const builtIn = execFileSync(bin, ['check-config', '--print-default']).toString();
  fs.writeFileSync(cfg, `${builtIn}\nhttp:\n  stateless: true\n${throttle}` +
    `  shared_limits:\n    store: redis://127.0.0.1:${proxyPort}/0\n    key_prefix: "${prefix}"\n` +
    `    local_cache_ms: 200\n    lease_tokens: 2\n    on_store_down: ${onStoreDown}\n` +
    `    connect_timeout_ms: 200\n    command_timeout_ms: 200\n${block}\n`);
  const replicas = [];
  for (let i = 0; i < 2; i++) replicas.push(await startServer(cfg));
  return { replicas, key, prefix, name, stop: () => replicas.forEach((r) => r.child.kill('SIGTERM')) };
}

const startServer = (cfg) => startServerWith(cfg, {});

function startServerWith(cfg, extraEnv) {
  return spawnHttpServer(cfg, { POSTGRES_DSN: process.env.POSTGRES_DSN, ...extraEnv });
}

// One request (tools/list, stateless); its HTTP status.
async function call(replica, key) {
  const r = await fetch(replica.url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25', ...(key ? { Authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await r.text();
  return r.status;
}

async function metric(replica, name) {
  const text = await (await fetch(replica.url.replace(/\/mcp$/, '/metrics'))).text();
  const m = text.match(new RegExp(`^${name} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

function storeKeys(pattern) {
  return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(redisPort), '--scan', '--pattern', pattern])
    .toString().split('\n').filter(Boolean);
}

// Sends `n` requests alternately to the two replicas; the statuses.
async function alternate(replicas, key, n) {
  const statuses = [];
  for (let i = 0; i < n; i++) statuses.push(await call(replicas[i % 2], key));
  return statuses;
}

test('one key\'s rate limit holds across two replicas sharing one store', async () => {
  assert.ok(redisPort > 0, 'MCPDB_REDIS_PORT missing: run through scripts/test.sh (scripts/servers.sh starts redis)');
  const proxy = tcpProxy(redisPort);
  await proxy.start();
  const rate = 0.5;
  const burst = 6;
  const s = await startReplicas(proxy.port, { rate, burst });
  try {
    const t0 = Date.now();
    const statuses = await alternate(s.replicas, s.key, 24);
    const seconds = (Date.now() - t0) / 1000;
    const admitted = statuses.filter((c) => c === 200).length;
    assert.deepEqual([...new Set(statuses)].sort(), [200, 429], statuses.join(' '));
    // The burst once (plus what the bucket refilled meanwhile, plus one lease's time shift), not
    // once per replica (12): leases are taken from the shared bucket before they are spent.
    assert.ok(admitted <= burst + Math.ceil(rate * (seconds + 0.2)) + 1, `admitted ${admitted} in ${seconds}s: ${statuses}`);
    // Every lease (2 tokens) admits at least its first request, however slow the machine (a
    // lease's second token lapses after local_cache_ms unspent).
    assert.ok(admitted >= Math.ceil(burst / 2), `admitted ${admitted}: ${statuses}`);
    // Both replicas answered 429 for the key: each saw the other's spending.
    assert.ok(statuses.some((c, i) => c === 429 && i % 2 === 0) && statuses.some((c, i) => c === 429 && i % 2 === 1));
    // The bucket is in the store, under the configured prefix.
    assert.deepEqual(storeKeys(`${s.prefix}*`), [`${s.prefix}rate:${s.name}`]);
    assert.equal(await metric(s.replicas[0], 'mcpdb_shared_limits_store_up'), 1);
    for (const r of s.replicas) assert.ok(!r.log().includes(s.key), 'the key is never logged');
  } finally {
    s.stop();
    await proxy.stop();
  }
});

test('the failed-key backoff holds across replicas: wrong keys spread over both add up', async () => {
  const proxy = tcpProxy(redisPort);
  await proxy.start();
  const s = await startReplicas(proxy.port, {
    throttle: '  auth_throttle: {free_failures: 3, base_backoff_ms: 5000, max_backoff_ms: 60000}\n',
  });
  try {
    const wrong = 'mcpdb_' + 'x'.repeat(43);
    const statuses = await alternate(s.replicas, wrong, 6);
    // Per replica, each would have seen 3 wrong keys at most: 401 throughout.
    assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429]);
    // A valid key from the same source is never throttled.
    assert.equal(await call(s.replicas[0], s.key), 200);
    assert.equal(storeKeys(`${s.prefix}authfail:*`).length, 1);
  } finally {
    s.stop();
    await proxy.stop();
  }
});

// Polls until `f` is true (or fails after `ms`).
async function eventually(f, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await f()) return;
    await sleep(100);
  }
  assert.fail(`not within ${ms} ms: ${what}`);
}

test('store down, fail_closed: requests refused with 503 (valid and wrong keys alike); shared again when it returns', async () => {
  const proxy = tcpProxy(redisPort);
  await proxy.start();
  const s = await startReplicas(proxy.port, { rate: 0.5, burst: 4, onStoreDown: 'fail_closed' });
  try {
    assert.equal(await call(s.replicas[0], s.key), 200);
    await proxy.stop();
    await sleep(300);  // past local_cache_ms: the lease taken above has expired
    for (const r of s.replicas) {
      assert.equal(await call(r, s.key), 503);
      assert.equal(await call(r, 'mcpdb_' + 'y'.repeat(43)), 503);
      assert.equal(await call(r, s.key), 503);  // within the reconnect backoff: at once, still 503
      assert.ok((await metric(r, 'mcpdb_shared_limits_unavailable_total')) >= 3);
      assert.equal(await metric(r, 'mcpdb_shared_limits_store_up'), 0);
      assert.match(r.log(), /shared limits: the shared limits store is unavailable .*fail_closed/);
    }
    await proxy.start();
    await eventually(async () => (await call(s.replicas[1], s.key)) === 200, 10000, 'replica 1 admits again');
    await eventually(async () => (await call(s.replicas[0], s.key)) === 200, 10000, 'replica 0 admits again');
    assert.match(s.replicas[1].log(), /the store answers again/);
    // Shared again: the bucket (burst 4, partly spent above) runs dry across both; with
    // fail_closed a 429 can only come from the shared bucket.
    const t0 = Date.now();
    const statuses = await alternate(s.replicas, s.key, 8);
    const refilled = Math.ceil(0.5 * (Date.now() - t0) / 1000);
    assert.ok(statuses.filter((c) => c === 200).length <= 4 + refilled, statuses.join(' '));
    assert.ok(statuses.includes(429), statuses.join(' '));
  } finally {
    s.stop();
    await proxy.stop();
  }
});

test('store down, per_replica: each replica applies its own limits, counted and logged once; shared again after', async () => {
  const proxy = tcpProxy(redisPort);
  await proxy.start();
  const burst = 3;
  const s = await startReplicas(proxy.port, { rate: 0.2, burst, onStoreDown: 'per_replica' });
  try {
    assert.equal(await call(s.replicas[0], s.key), 200);
    await proxy.stop();
    await sleep(300);
    // Each replica's own bucket (burst 3): 3 admitted by each, 6 in all (plus what 0.2/s refills
    // in each while the requests are sent).
    const t0 = Date.now();
    const statuses = await alternate(s.replicas, s.key, 12);
    const refilled = 2 * Math.floor(0.2 * (Date.now() - t0) / 1000);
    const admitted = statuses.filter((c) => c === 200).length;
    assert.ok(admitted >= 2 * burst && admitted <= 2 * burst + refilled, statuses.join(' '));
    assert.ok(!statuses.includes(503));
    for (const r of s.replicas) {
      assert.ok((await metric(r, 'mcpdb_shared_limits_fallbacks_total')) >= 6);
      // One warning for the outage, not one per request.
      assert.equal(r.log().match(/shared limits: the shared limits store is unavailable/g)?.length, 1, r.log());
      assert.match(r.log(), /per_replica/);
    }
    await proxy.start();
    // The shared bucket is the one that decides again: its key is written afresh (deleted here).
    execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(redisPort), 'DEL', `${s.prefix}rate:${s.name}`]);
    await sleep(6000);  // past the longest reconnect backoff (5 s)
    assert.equal(await call(s.replicas[0], s.key), 200);
    assert.equal(await metric(s.replicas[0], 'mcpdb_shared_limits_store_up'), 1);
    assert.match(s.replicas[0].log(), /the store answers again/);
    assert.deepEqual(storeKeys(`${s.prefix}*`), [`${s.prefix}rate:${s.name}`]);
  } finally {
    s.stop();
    await proxy.stop();
  }
});

test('the store\'s password comes from the environment, an ACL user reaches only its prefix, and neither is logged', async () => {
  const proxy = tcpProxy(redisPort);
  await proxy.start();
  const user = `mcpdb-e2e-${crypto.randomBytes(4).toString('hex')}`;
  const password = crypto.randomBytes(16).toString('hex');
  const cli = (...args) => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(redisPort), ...args]).toString();
  const name = 'acl-agent';
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', name, '--scope', 'postgres', '--rate', '1', '--burst', '2']).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)[0];
  const prefix = `${user}:`;
  // The ACL SECURITY.md recommends: the prefix and the scripts' commands only.
  cli('ACL', 'SETUSER', user, 'on', `>${password}`, `~${prefix}*`, '-@all', '+evalsha', '+eval', '+hmget', '+hset', '+pexpire', '+time', '+hgetall', '+hdel', '+pexpireat');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-shared-'));
  const cfg = path.join(dir, 'http.yaml');
  const builtIn = execFileSync(bin, ['check-config', '--print-default']).toString();
  fs.writeFileSync(cfg, `${builtIn}\nhttp:\n  stateless: true\n  shared_limits:\n` +
    `    store: redis://${user}@127.0.0.1:${proxy.port}/0\n    key_prefix: "${prefix}"\n` +
    `${keyOut.slice(keyOut.indexOf('  clients:')).trimEnd()}\n`);
  const started = [];
  try {
    const good = await startServerWith(cfg, { MCPDB_SHARED_LIMITS_PASSWORD: password });
    started.push(good);
    assert.deepEqual([await call(good, key), await call(good, key), await call(good, key)], [200, 200, 429]);
    assert.deepEqual(storeKeys(`${prefix}*`), [`${prefix}rate:${name}`]);
    assert.match(good.log(), /password from the environment/);
    // A wrong password: fail_closed refuses, and the log names the store's error class only.
    const bad = await startServerWith(cfg, { MCPDB_SHARED_LIMITS_PASSWORD: 'not-the-password' });
    started.push(bad);
    assert.equal(await call(bad, key), 503);
    assert.match(bad.log(), /AUTH refused \(WRONGPASS\)/);
    for (const s of started) {
      assert.ok(!s.log().includes(password) && !s.log().includes('not-the-password'), 'no password in the log');
    }
    // A password in the URL refuses the config, without echoing it.
    const inUrl = path.join(dir, 'in-url.yaml');
    fs.writeFileSync(inUrl, fs.readFileSync(cfg, 'utf8').replace(`redis://${user}@`, `redis://${user}:${password}@`));
    const r = spawnSync(bin, ['check-config', '--config', inUrl], { encoding: 'utf8', env: serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }) });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout + r.stderr, /MCPDB_SHARED_LIMITS_PASSWORD/);
    assert.ok(!(r.stdout + r.stderr).includes(password), 'the password is not echoed');
  } finally {
    for (const s of started) s.child.kill('SIGTERM');
    cli('ACL', 'DELUSER', user);
    await proxy.stop();
  }
});

// Two replicas, one key with max_concurrent_calls 1 and a slow tool (a cross join ended by its
// 1.5 s timeout): a call on one replica holds the key's only slot for both.
async function startCapReplicas(proxyPort, onStoreDown = 'fail_closed') {
  const name = 'cap-agent';
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', name, '--scope', 'postgres',
    '--rate', '50', '--burst', '50', '--max-concurrent', '1']).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)[0];
  const prefix = `mcpdb-e2e-${crypto.randomBytes(6).toString('hex')}:`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-shared-'));
  const cfg = path.join(dir, 'http.yaml');
  fs.writeFileSync(cfg, 'postgres:\n  tools:\n    slow_count:\n      description: A deliberately slow statement for the concurrency test.\n' +
    '      statement: SELECT count(*) AS n FROM generate_series(1, 30000) a, generate_series(1, 30000) b\n' +
    '      limits: {timeout_ms: 1500}\n' +
    `http:\n  stateless: true\n  shared_limits:\n    store: redis://127.0.0.1:${proxyPort}/0\n    key_prefix: "${prefix}"\n` +
    `    on_store_down: ${onStoreDown}\n    connect_timeout_ms: 1000\n    command_timeout_ms: 1000\n` +
    `${keyOut.slice(keyOut.indexOf('  clients:')).trimEnd()}\n`);
  const replicas = [];
  for (let i = 0; i < 2; i++) replicas.push(await startServer(cfg));
  return { replicas, key, prefix, name, stop: () => replicas.forEach((r) => r.child.kill('SIGTERM')) };
}

// One slow tools/call; its HTTP status and body.
async function slowCall(replica, key, signal) {
  const r = await fetch(replica.url, {
    method: 'POST',
    signal,
    headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25', Authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow_count', arguments: {} } }),
  });
  return { status: r.status, body: await r.text() };
}

test('one key\'s concurrency cap holds across two replicas: the second slow call is refused until the first ends', async () => {
  const proxy = tcpProxy(redisPort);
  await proxy.start();
  const s = await startCapReplicas(proxy.port);
  try {
    const first = slowCall(s.replicas[0], s.key);
    // The first call is running on replica 0: its slot is in the store.
    await eventually(async () => storeKeys(`${s.prefix}conc:*`).length === 1, 3000, 'the first call holds its slot');
    // Replica 1 has no call of its own (its own cap of 1 would admit): the shared cap refuses.
    const second = await slowCall(s.replicas[1], s.key);
    assert.equal(second.status, 429, second.body);
    assert.match(second.body, /too many concurrent tool calls/);
    // The slot is in the store under the prefix, named by the client, never by its key.
    assert.deepEqual(storeKeys(`${s.prefix}conc:*`), [`${s.prefix}conc:${s.name}`]);
    assert.ok(!storeKeys(`*${s.key}*`).length);
    assert.equal((await first).status, 200);
    // The first call ended: its slot is released (sent after the answer, not before).
    await eventually(async () => storeKeys(`${s.prefix}conc:*`).length === 0, 3000, 'the slot is released');
    const third = await slowCall(s.replicas[1], s.key);
    assert.equal(third.status, 200, third.body);
    // A client that disconnects mid-call holds nothing once the call ends (cancelled or timed out).
    const abort = new AbortController();
    const gone = slowCall(s.replicas[0], s.key, abort.signal).catch(() => null);
    // Aborted only once its slot is in the store (else the abort may come before the call does).
    await eventually(async () => storeKeys(`${s.prefix}conc:*`).length === 1, 3000, 'the call holds its slot');
    abort.abort();
    await gone;
    await eventually(async () => storeKeys(`${s.prefix}conc:*`).length === 0, 4000, 'the disconnected call\'s slot is released');
    assert.equal((await slowCall(s.replicas[1], s.key)).status, 200);
  } finally {
    s.stop();
    await proxy.stop();
  }
});

test('concurrency cap with the store down: fail_closed refuses; when it returns the cap is shared again', async () => {
  const proxy = tcpProxy(redisPort);
  await proxy.start();
  const s = await startCapReplicas(proxy.port);
  try {
    await proxy.stop();
    await sleep(300);  // past the rate lease
    // The rate check asks the store first (503); the cap would refuse too (it never admits blind).
    const down = await slowCall(s.replicas[1], s.key);
    assert.equal(down.status, 503, down.body);
    await proxy.start();
    await eventually(async () => (await call(s.replicas[0], s.key)) === 200, 10000, 'replica 0 admits again');
    await eventually(async () => (await call(s.replicas[1], s.key)) === 200, 10000, 'replica 1 admits again');
    const first = slowCall(s.replicas[0], s.key);
    await sleep(400);
    assert.equal((await slowCall(s.replicas[1], s.key)).status, 429);
    assert.equal((await first).status, 200);
  } finally {
    s.stop();
    await proxy.stop();
  }
});
