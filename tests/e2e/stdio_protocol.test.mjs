// The real binary over stdio, driven by the official MCP TypeScript SDK client, the MCP inspector
// CLI, and raw lines for malformed input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bin, connectSdk, rawServer, serverEnv, inspectorCli, offlineEnv } from './helpers.mjs';

const run = promisify(execFile);

test('SDK client: initialize, ping, tools/list (an engine enabled, no database needed)', async () => {
  const { client } = await connectSdk(serverEnv(offlineEnv()));
  try {
    const info = client.getServerVersion();
    assert.equal(info.name, 'mcp-dbserver');
    assert.ok(client.getServerCapabilities().tools, 'tools capability advertised');
    assert.deepEqual(await client.ping(), {});
    const { tools } = await client.listTools();
    assert.ok(tools.length > 0 && tools.every((t) => t.annotations.readOnlyHint === true));
  } finally {
    await client.close();
  }
});

test('SDK client: unknown tool is a JSON-RPC invalid-params error', async () => {
  const { client } = await connectSdk(serverEnv(offlineEnv()));
  try {
    await assert.rejects(client.callTool({ name: 'drop_all_tables', arguments: {} }), (err) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /Unknown tool/);
      return true;
    });
    // Still serving afterwards.
    assert.deepEqual(await client.ping(), {});
  } finally {
    await client.close();
  }
});

test('raw stdio: malformed, oversized and deeply nested input is refused and the server keeps serving', async () => {
  const s = rawServer(serverEnv(offlineEnv()));
  s.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}');
  assert.equal((await s.next()).result.protocolVersion, '2025-11-25');
  s.send('this is not json');
  assert.equal((await s.next()).error.code, -32700);
  s.send('['.repeat(100000) + ']'.repeat(100000));
  assert.equal((await s.next()).error.code, -32600);
  s.send('{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"' + 'x'.repeat(5 * 1024 * 1024) + '"}}');
  const big = await s.next();
  assert.equal(big.error.code, -32600);
  assert.match(big.error.message, /limit/);
  s.send('{"jsonrpc":"2.0","id":3,"method":"nope"}');
  assert.equal((await s.next()).error.code, -32601);
  s.send('{"jsonrpc":"2.0","id":4,"method":"ping"}');
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 4, result: {} });
  // stdout carries only protocol lines: every reply above parsed as JSON. Logs are on stderr.
  assert.match(s.stderr(), /serving MCP on stdio/);
  s.child.stdin.end();
  const { code } = await s.exited();
  assert.equal(code, 0, 'clean exit on EOF');
});

test('SIGTERM ends the server cleanly', async () => {
  const s = rawServer(serverEnv(offlineEnv()));
  s.send('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  await s.next();
  s.child.kill('SIGTERM');
  const { code } = await s.exited();
  assert.equal(code, 0);
  assert.match(s.stderr(), /stopping \(signal\)/);
});

test('MCP inspector CLI lists tools from the binary', async () => {
  const { stdout } = await run('node', [inspectorCli, '--cli', '-e', `POSTGRES_DSN=${offlineEnv().POSTGRES_DSN}`, bin, '--method', 'tools/list'], {
    env: { ...serverEnv(offlineEnv()), MCP_CATALOG_PATH: '/tmp/mcpdb-inspector-catalog' },
    timeout: 60000,
  });
  const parsed = JSON.parse(stdout.slice(stdout.indexOf('{')));
  assert.ok(Array.isArray(parsed.tools));
});

test('CLI: --version, --help, check-config and a usage error exit as documented', async () => {
  const v = await run(bin, ['--version']);
  // The version and the commit the binary was built from (a build outside git says "unknown").
  assert.match(v.stdout, /^mcp-dbserver \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)$/m);
  const h = await run(bin, ['--help']);
  // The first line names every engine.
  assert.match(h.stdout.split('\n')[0], /PostgreSQL.*MySQL\/MariaDB.*DynamoDB.*MongoDB/);
  assert.match(h.stdout, /check-config/);
  assert.match(h.stdout, /Exit codes/);
  const c = await run(bin, ['check-config'], { env: serverEnv() });
  assert.match(c.stdout, /\(valid\)/);
  await assert.rejects(run(bin, ['--no-such-flag']), (e) => e.code === 2);
  await assert.rejects(run(bin, ['check-config', '--config', '/nonexistent.yaml']), (e) => {
    assert.equal(e.code, 3);
    assert.match(e.stderr, /nonexistent\.yaml: cannot read the config file/);
    return true;
  });
});
