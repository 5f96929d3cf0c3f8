// The real binary over Streamable HTTP, driven by the official SDK's Streamable HTTP client and
// by the MCP inspector CLI, with a per-client API key scoped to one engine (tools and schema
// resources of that engine only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { checkSchemaResources, inspectorCli, sdkClient, repoRoot, startHttpServer } from './helpers.mjs';
import { createRequire } from 'node:module';

const run = promisify(execFile);
const require = createRequire(path.join(repoRoot, 'tools', 'package.json'));
const sdkHttp = require.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js');

test('SDK Streamable HTTP client and inspector CLI against serve --http with an API key', async () => {
  const s = await startHttpServer();
  try {
    const { Client } = await import(sdkClient);
    const { StreamableHTTPClientTransport } = await import(sdkHttp);
    const transport = new StreamableHTTPClientTransport(new URL(s.url), {
      requestInit: { headers: { Authorization: `Bearer ${s.key}` } },
    });
    const client = new Client({ name: 'mcp-dbserver-e2e-http', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.ok(tools.length > 0);
    assert.ok(tools.every((t) => !t.name.includes('dynamodb') && !t.name.includes('mongodb')), 'scope: postgres only');
    const r = await client.callTool({ name: 'get_document', arguments: { id: 'doc-01' } });
    assert.equal(r.isError, false, JSON.stringify(r));
    // Schema resources follow the key's scope exactly like tools: postgres ones only.
    await checkSchemaResources(() => client.listResources(), (uri) => client.readResource({ uri }), ['postgres']);
    assert.deepEqual(await client.ping(), {});
    await transport.terminateSession?.();
    await client.close();

    // Without the key: refused.
    const bad = new Client({ name: 'nokey', version: '1' });
    await assert.rejects(bad.connect(new StreamableHTTPClientTransport(new URL(s.url))));

    // The inspector CLI over HTTP, with the key as a header.
    const { stdout } = await run('node', [inspectorCli, '--cli', s.url, '--transport', 'http', '--method', 'tools/list',
      '--header', `Authorization: Bearer ${s.key}`],
      { env: { ...process.env, MCP_CATALOG_PATH: path.join(os.tmpdir(), 'mcpdb-inspector-catalog') }, timeout: 60000 });
    const listed = JSON.parse(stdout.slice(stdout.indexOf('{')));
    assert.deepEqual(listed.tools.map((t) => t.name).sort(), tools.map((t) => t.name).sort());
    // The key never reaches the logs.
    assert.ok(!s.log().includes(s.key));
  } finally {
    s.child.kill('SIGTERM');
  }
});
