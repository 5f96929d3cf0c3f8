// `mcp-dbserver invoke`: one tool call from the command line through the agent's path, on every
// engine's real server; exit codes tell a result (0), a tool's error (8) and a refusal (9) apart,
// and the audit line is written without the argument values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { bin, serverEnv, engineEnv } from './helpers.mjs';

const EXIT = { ok: 0, usage: 2, toolError: 8, refused: 9 };

function invoke(args, env = serverEnv(engineEnv())) {
  const r = spawnSync(bin, ['invoke', ...args], { env, encoding: 'utf8', timeout: 120000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function auditLines(stderr) {
  return stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
    .filter((o) => o.event === 'tool_call');
}

const engines = [
  { need: 'POSTGRES_DSN', tool: 'get_document', args: { id: 'doc-01' }, check: (r) => r.rows[0].id === 'doc-01' },
  { need: 'MYSQL_DSN', tool: 'get_document_mysql', args: { id: 'doc-02' }, check: (r) => r.rows[0].id === 'doc-02' },
  { need: 'MONGODB_URI', tool: 'count_mongodb_documents', args: { target: 'documents' }, check: (r) => r.count === 30 },
  { need: 'AWS_ENDPOINT_URL_DYNAMODB', tool: 'get_dynamodb_item', args: { target: 'demo_documents', partition_key: 'doc-03' }, check: (r) => r.found === true },
];

for (const e of engines) {
  test(`invoke ${e.tool}: the result on stdout, exit 0, one audit line without the argument values`, (t) => {
    if (!process.env[e.need]) { t.skip(`${e.need} is not set`); return; }
    const r = invoke([e.tool, '--args', JSON.stringify(e.args)]);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.ok(e.check(JSON.parse(r.stdout)), r.stdout);
    const audit = auditLines(r.stderr);
    assert.equal(audit.length, 1, r.stderr);
    assert.equal(audit[0].client, 'cli');
    assert.equal(audit[0].tool, e.tool);
    assert.equal(audit[0].outcome, 'ok');
    const { tool, ...rest } = audit[0];  // (a tool's name may contain a value's word)
    for (const v of Object.values(e.args)) assert.ok(!JSON.stringify(rest).includes(String(v)), JSON.stringify(rest));
  });
}

test('invoke --json prints the CallToolResult an agent receives', (t) => {
  if (!process.env.POSTGRES_DSN) { t.skip('POSTGRES_DSN is not set'); return; }
  const r = invoke(['get_document', '--args', '{"id":"doc-01"}', '--json']);
  assert.equal(r.code, EXIT.ok, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.isError, false);
  assert.equal(result.content[0].type, 'text');
  assert.equal(result.structuredContent.rows[0].id, 'doc-01');
});

test('invoke: a call refused before the tool ran exits 9 with the reason, nothing on stdout', (t) => {
  if (!process.env.POSTGRES_DSN) { t.skip('POSTGRES_DSN is not set'); return; }
  const unknown = invoke(['no_such_tool']);
  assert.equal(unknown.code, EXIT.refused, unknown.stderr);
  assert.match(unknown.stderr, /no_such_tool: refused: Unknown tool/);
  assert.equal(unknown.stdout, '');
  for (const args of ['{"id":5}', '{}', '{"id":"doc-01","extra":1}', '{"id":"' + 'x'.repeat(100) + '"}']) {
    const bad = invoke(['get_document', '--args', args]);
    assert.equal(bad.code, EXIT.refused, `${args}: ${bad.stderr}`);
    assert.match(bad.stderr, /get_document: refused: Invalid arguments/);
    assert.equal(bad.stdout, '');
  }
});

test('invoke: --args that is not a JSON object is a usage error (exit 2)', () => {
  for (const args of ['not json', '[1]', '"id"', '{"id":']) {
    const r = invoke(['get_document', '--args', args], serverEnv({}));
    assert.equal(r.code, EXIT.usage, `${args}: ${r.stderr}`);
    assert.match(r.stderr, /--args/);
  }
});

test('invoke: the tool\'s own error exits 8 and names it, without the credentials', () => {
  const dsn = 'postgresql://mcpdb_ro:Not-The-Password-77@127.0.0.1:1/demo?connect_timeout=2';
  const r = invoke(['get_document', '--args', '{"id":"doc-01"}'], serverEnv({ POSTGRES_DSN: dsn }));
  assert.equal(r.code, EXIT.toolError, r.stderr);
  assert.match(r.stderr, /get_document: the tool reported an error: .*unavailable/);
  assert.ok(!r.stderr.includes('Not-The-Password-77'));
  assert.equal(r.stdout, '');
});
