// An MCP client for the package test: the official SDK's Streamable HTTP client calls the
// installed server, as an agent would, with the key the test made.
// Usage: node call.mjs URL KEY
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRequire } from 'node:module';

const [url, key] = process.argv.slice(2);
const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(path.join(repoRoot, 'tools', 'package.json'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StreamableHTTPClientTransport } = await import(
  require.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js'));

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: 'mcp-dbserver-package-test', version: '1.0.0' });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes('get_document'), `tools: ${names.join(', ')}`);

  const doc = await client.callTool({ name: 'get_document', arguments: { id: 'doc-01' } });
  assert.equal(doc.isError, false, JSON.stringify(doc));
  assert.match(JSON.stringify(doc.content), /doc-01/);

  // Semantic search embeds the query with the model the package installed
  // (/usr/share/mcp-dbserver/model, named by the unit's Environment=).
  const found = await client.callTool({ name: 'semantic_search_documents',
    arguments: { query: 'how to speed up slow SQL queries', k: 3 } });
  assert.equal(found.isError, false, JSON.stringify(found));
  assert.match(JSON.stringify(found.content), /doc-\d+/);
  console.log(`package test: ${names.length} tools; get_document and semantic_search_documents answered`);
} finally {
  await transport.terminateSession?.();
  await client.close();
}
