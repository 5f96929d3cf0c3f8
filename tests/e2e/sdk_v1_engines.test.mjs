// The v1 TypeScript SDK (@modelcontextprotocol/sdk, protocol 2025-11-25) against the real binary
// with all four engines, over stdio and Streamable HTTP: it calls every demo tool of every engine
// and lists and reads the schema resources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRequire } from 'node:module';
import {
  bin, callEveryDemoTool, checkSchemaResources, demoTools, engineEnv, recordMessages, repoRoot, sdkClient, sdkStdio,
  serverEnv, startHttpServer,
} from './helpers.mjs';

const require = createRequire(path.join(repoRoot, 'tools', 'package.json'));
const sdkHttp = require.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js');
const V = '2025-11-25';
const allEngines = ['postgres', 'dynamodb', 'mongodb', 'mysql'];

function enginesOrFail() {
  const env = engineEnv();
  for (const n of ['POSTGRES_DSN', 'AWS_REGION', 'MONGODB_URI', 'MYSQL_DSN', 'MCPDB_EMBED_MODEL_DIR']) {
    assert.ok(env[n], `${n} missing: run through scripts/test.sh`);
  }
  return env;
}

// What both transports must show: the 2025-11-25 handshake, every demo tool, the resources.
async function exercise(client, wire) {
  const init = wire.resultsOf('initialize')[0];
  assert.equal(init?.protocolVersion, V, 'negotiated 2025-11-25');
  assert.equal(init.serverInfo.name, 'mcp-dbserver');
  assert.ok(init.capabilities.tools, 'tools capability');
  assert.ok(init.capabilities.resources, 'resources capability');

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of Object.values(demoTools).flat()) assert.ok(names.includes(n), `tools/list offers ${n}`);

  const called = await callEveryDemoTool((name, args) => client.callTool({ name, arguments: args }));
  assert.deepEqual([...called].sort(), Object.values(demoTools).flat().sort());

  await checkSchemaResources(() => client.listResources(), (uri) => client.readResource({ uri }), allEngines);
  // An unknown resource at 2025-11-25: -32002 (resource not found).
  await assert.rejects(client.readResource({ uri: 'mcpdb://postgres/tools/no_such_tool' }), (e) => {
    assert.equal(e.code, -32002, e.message);
    return true;
  });
  assert.deepEqual(await client.ping(), {});
}

test('v1 SDK at 2025-11-25 over stdio: every engine\'s demo tools and the schema resources', async () => {
  const { Client } = await import(sdkClient);
  const { StdioClientTransport } = await import(sdkStdio);
  const transport = new StdioClientTransport({
    command: bin, args: [], env: serverEnv({ ...enginesOrFail(), MCPDB_LOG_LEVEL: 'warn' }), stderr: 'pipe',
  });
  const wire = recordMessages(transport);
  const client = new Client({ name: 'mcp-dbserver-e2e-v1', version: '1.0.0' });
  await client.connect(transport);
  try {
    await exercise(client, wire);
  } finally {
    await client.close();
  }
});

test('v1 SDK at 2025-11-25 over Streamable HTTP: every engine\'s demo tools and the schema resources', async () => {
  // About 25 requests back to back: above the default rate limit (10/s, burst 20) on a fast machine.
  const s = await startHttpServer('e2e-v1-all', { scope: 'postgres,dynamodb,mongodb,mysql', env: enginesOrFail(), rate: 1000 });
  try {
    const { Client } = await import(sdkClient);
    const { StreamableHTTPClientTransport } = await import(sdkHttp);
    const transport = new StreamableHTTPClientTransport(new URL(s.url), {
      requestInit: { headers: { Authorization: `Bearer ${s.key}` } },
    });
    const wire = recordMessages(transport);
    const client = new Client({ name: 'mcp-dbserver-e2e-v1-http', version: '1.0.0' });
    await client.connect(transport);
    assert.ok(transport.sessionId, '2025-11-25 over HTTP has a session');
    try {
      await exercise(client, wire);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
    assert.ok(!s.log().includes(s.key), 'the key never reaches the logs');
  } finally {
    s.child.kill('SIGTERM');
  }
});
