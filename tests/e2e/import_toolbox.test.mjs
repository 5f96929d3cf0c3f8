// import-toolbox round trip, as a Toolbox user moving over does it: import the file (both of
// Toolbox's forms), check the config, serve it with the variables the .env template names, and
// call the converted tools with an MCP client on the real PostgreSQL and MariaDB servers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { bin, connectSdk, repoRoot, serverEnv } from './helpers.mjs';

const secret = 'Literal-Secret-In-Toolbox-File-91';

for (const form of ['docs_maps.yaml', 'docs_documents.yaml']) {
  test(`import-toolbox ${form}: import, check-config, serve, call`, async (t) => {
    if (!process.env.POSTGRES_DSN || !process.env.MYSQL_DSN) { t.skip('needs POSTGRES_DSN and MYSQL_DSN'); return; }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-import-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const out = path.join(dir, 'config.yaml');
    const imported = spawnSync(bin, ['import-toolbox', path.join(repoRoot, 'tests/fixtures/toolbox', form), '-o', out],
      { env: serverEnv(), encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    assert.match(imported.stderr, /refused: tool run-any-sql/);
    assert.match(imported.stderr, /refused: tool archive-document: .*SQL guard/);
    for (const text of [imported.stderr, imported.stdout, fs.readFileSync(out, 'utf8'), fs.readFileSync(`${out}.env`, 'utf8')]) {
      assert.ok(!text.includes(secret));
    }
    // The variables the .env template names, set to the test servers' DSNs.
    const envTemplate = fs.readFileSync(`${out}.env`, 'utf8');
    assert.match(envTemplate, /^POSTGRES_DSN_DOCS_PG=/m);
    assert.match(envTemplate, /^MYSQL_DSN_DOCS_MYSQL=/m);
    const env = serverEnv({ POSTGRES_DSN_DOCS_PG: process.env.POSTGRES_DSN, MYSQL_DSN_DOCS_MYSQL: process.env.MYSQL_DSN });

    const checked = spawnSync(bin, ['check-config', '--config', out], { env, encoding: 'utf8' });
    assert.equal(checked.status, 0, checked.stderr);
    assert.match(checked.stdout, /4 tools served now with this environment/);

    const { client, transport } = await connectSdk(env, ['serve', '--config', out]);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(),
        ['documents-with-tags', 'get-document', 'get-document-mysql', 'list-recent-documents']);
      const doc = await client.callTool({ name: 'get-document', arguments: { doc_id: 'doc-01' } });
      assert.equal(doc.isError, false, JSON.stringify(doc));
      assert.equal(doc.structuredContent.rows[0].id, 'doc-01');
      const recent = await client.callTool({ name: 'list-recent-documents', arguments: { category: 'databases' } });
      assert.equal(recent.isError, false, JSON.stringify(recent));
      assert.ok(recent.structuredContent.rows.length >= 1 && recent.structuredContent.rows.length <= 5);
      const tagged = await client.callTool({ name: 'documents-with-tags', arguments: { tags: ['sql', 'security'] } });
      assert.equal(tagged.isError, false, JSON.stringify(tagged));
      assert.ok(tagged.structuredContent.rows.length >= 1);
      const my = await client.callTool({ name: 'get-document-mysql', arguments: { id: 'doc-02' } });
      assert.equal(my.isError, false, JSON.stringify(my));
      assert.equal(my.structuredContent.rows[0].id, 'doc-02');
      // Refused by the schema the converted parameters give: not one of allowedValues.
      const bad = await client.callTool({ name: 'list-recent-documents', arguments: { category: 'nope' } });
      assert.equal(bad.isError, true);
    } finally {
      await transport.close();
    }
  });
}
