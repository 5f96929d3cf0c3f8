// The demo's MCP client: the official MCP TypeScript SDK drives the real mcp-dbserver binary over
// stdio, lists the tools per engine, runs the same semantic queries on pgvector and on MongoDB
// side by side, reads DynamoDB, and shows that hostile arguments stay inert.
// Usage: node scripts/demo-client.mjs BINARY
import path from 'node:path';
import fs from 'node:fs';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const require = createRequire(path.join(root, 'tools', 'package.json'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));

const bin = process.argv[2];
const env = { ...process.env, MCPDB_LOG_LEVEL: 'warn' };
const transport = new StdioClientTransport({ command: bin, args: ['serve'], env, stderr: 'pipe' });
let serverLog = '';
transport.stderr?.on('data', (d) => { serverLog += d.toString(); });
const client = new Client({ name: 'mcp-dbserver-demo', version: '1.0.0' });
const t0 = performance.now();
await client.connect(transport);
const connectMs = performance.now() - t0;

const width = Math.min(process.stdout.columns || 120, 160);
const rule = (c = '─') => console.log(c.repeat(width));
const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s.padEnd(n));

rule('═');
const info = client.getServerVersion();
console.log(`Connected to ${info.name} ${info.version} over stdio in ${connectMs.toFixed(0)} ms (MCP SDK client)`);
const { tools } = await client.listTools();
const byEngine = {};
for (const t of tools) {
  const engine = ['dynamodb', 'mongodb', 'mysql'].find((e) => t.name.includes(e)) ?? 'postgres';
  (byEngine[engine] ??= []).push(t.name);
}
for (const [engine, names] of Object.entries(byEngine)) console.log(`  ${engine.padEnd(9)} ${names.join(', ')}`);
console.log(`  every tool: readOnlyHint=${tools.every((t) => t.annotations?.readOnlyHint === true)}, ` +
  `destructiveHint=${tools.some((t) => t.annotations?.destructiveHint) ? 'some' : 'false'}`);

const has = (n) => tools.some((t) => t.name === n);
async function call(name, args) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) return { error: r.content?.[0]?.text ?? 'error' };
  return r.structuredContent;
}
const items = (r) => r?.results ?? r?.rows ?? r?.documents ?? r?.items ?? [];

if (has('semantic_search_documents') && has('semantic_search_mongodb')) {
  const queries = fs.readFileSync(path.join(root, 'data/demo_queries.txt'), 'utf8').split('\n').filter(Boolean);
  const col = Math.floor((width - 4) / 2);
  rule('═');
  console.log('Semantic search, same data and same local model (USE-Lite 512-d): pgvector vs MongoDB');
  for (const q of queries) {
    const [pg, mg] = await Promise.all([
      call('semantic_search_documents', { query: q, k: 3 }),
      call('semantic_search_mongodb', { query: q, k: 3 }),
    ]);
    rule();
    console.log(`query: "${q}"`);
    console.log(cut('  pgvector (HNSW, cosine)', col) + '  ' + cut(`  MongoDB (${mg?.method ?? '?'})`, col));
    if (pg?.error || mg?.error) {
      console.log(cut('  ' + (pg?.error ?? ''), col) + '  ' + cut('  ' + (mg?.error ?? ''), col));
      continue;
    }
    const a = items(pg);
    const b = items(mg);
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const fmt = (r) => (r ? `${Number(r.score).toFixed(3)} ${r.id} ${r.title ?? ''}` : '');
      console.log(cut('  ' + fmt(a[i]), col) + '  ' + cut('  ' + fmt(b[i]), col));
    }
    const same = a.map((r) => r.id).join() === b.map((r) => r.id).join();
    console.log(`  same ranking on both engines: ${same ? 'yes' : 'no'}`);
  }
}

if (has('list_dynamodb_targets')) {
  rule('═');
  console.log('DynamoDB (fixed target registry, typed keys, signed cursors)');
  const targets = await call('list_dynamodb_targets', {});
  for (const t of targets?.targets ?? []) console.log(`  target ${t.name}: table ${t.table ?? '?'}`);
  const first = targets?.targets?.[0]?.name;
  if (first && has('get_dynamodb_item')) {
    const r = await call('get_dynamodb_item', { target: first, partition_key: 'doc-05' });
    console.log(`  get ${first} id=doc-05 → found=${r?.found} title="${r?.item?.title ?? ''}"`);
  }
  if (first && has('scan_dynamodb_table')) {
    let cursor;
    let pages = 0;
    let total = 0;
    do {
      const page = await call('scan_dynamodb_table', { target: first, limit: 10, ...(cursor ? { cursor } : {}) });
      total += items(page).length;
      cursor = page?.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    console.log(`  scan ${first} 10 at a time → ${total} items in ${pages} pages (each cursor signed and bound to this target)`);
  }
  if (first && has('count_dynamodb_items')) {
    const c = await call('count_dynamodb_items', { target: first, exact: true });
    console.log(`  count ${first}: approximate ${c?.approximate_count} (DescribeTable), exact ${c?.exact_count?.count ?? JSON.stringify(c?.exact_count)}`);
  }
}

if (has('list_mongodb_documents')) {
  rule('═');
  console.log('MongoDB (fixed collection registry, typed ids)');
  const c = await call('count_mongodb_documents', { target: 'documents' });
  const page = await call('list_mongodb_documents', { target: 'documents', limit: 2 });
  console.log(`  count documents: ${c?.count} (${c?.method}); first page of 2: ${items(page).map((d) => d.doc_id ?? d._id).join(', ')}`);
}

if (has('get_document_mysql')) {
  rule('═');
  console.log('MySQL/MariaDB (allowlisted statements, MySQL-dialect guard, READ ONLY transactions)');
  const d = await call('get_document_mysql', { id: 'doc-05' });
  console.log(`  get_document_mysql id=doc-05 → ${d?.row_count} row: "${d?.rows?.[0]?.title ?? ''}"`);
  const f = await call('search_documents_text_mysql', { words: 'index', limit: 3 });
  console.log(`  search_documents_text_mysql words="index" → ${(f?.rows ?? []).map((r) => r.id).join(', ')}` +
    ' (substring match: MariaDB 10.11 has no vector type)');
}

rule('═');
console.log('Hostile arguments are values, never code:');
if (has('get_document')) {
  const r = await call('get_document', { id: "doc-01' OR '1'='1" });
  console.log('  postgres get_document id="doc-01\' OR \'1\'=\'1" →', JSON.stringify(r).slice(0, width - 50));
}
if (has('get_document_mysql')) {
  const r = await call('get_document_mysql', { id: "doc-01' OR '1'='1" });
  console.log('  mysql get_document_mysql id="doc-01\' OR \'1\'=\'1" →', JSON.stringify(r).slice(0, width - 50));
}
if (has('get_mongodb_document')) {
  const targets = await call('list_mongodb_targets', {});
  const t = targets?.targets?.[0]?.name;
  if (t) {
    const r = await call('get_mongodb_document', { target: t, id: '{"$ne": null}' });
    console.log('  mongodb get_mongodb_document id=\'{"$ne": null}\' →', JSON.stringify(r).slice(0, width - 50));
  }
}
try {
  await client.callTool({ name: 'run_sql', arguments: { sql: 'DELETE FROM documents' } });
} catch (e) {
  console.log(`  tools/call run_sql → refused: ${e.message}`);
}
rule('═');
await client.close();
const audit = serverLog.split('\n').filter((l) => l.includes('"event":"tool_call"')).length;
const warnings = serverLog.split('\n').filter((l) => / warning /.test(l));
console.log(`server stderr: ${audit} audit lines (tool, outcome, duration, rows, bytes — never values) and ${warnings.length} warning(s):`);
for (const w of warnings) console.log('  ' + w.replace(/^\S+ warning /, '').slice(0, width - 2));
