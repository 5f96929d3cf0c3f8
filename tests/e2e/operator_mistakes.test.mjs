// Checks fail closed and every mistake is named (issue #16), with the real binary against the real
// local servers: doctor's three outcomes (proved read-only, violation, inconclusive), the startup
// self-check's refuse mode, doctor's proof that every configured tool can run, and the messages and
// exit codes of the operator's mistakes. "The database is down" is produced with a TCP proxy this
// test stops, never by stopping the shared server other tests use.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { bin, serverEnv } from './helpers.mjs';

const EXIT = { ok: 0, usage: 2, config: 3, refused: 4, violation: 5, inconclusive: 6, unusable: 7 };

function need(names) {
  const missing = names.filter((n) => !process.env[n]);
  assert.deepEqual(missing, [], `missing ${missing.join(', ')}: run through scripts/test.sh`);
}

// Runs the binary to completion (or kills it after `timeoutMs`): exit code, stdout, stderr.
function run(args, env, { timeoutMs = 60000, untilStderr } = {}) {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => { killed = true; child.kill('SIGKILL'); }, timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (untilStderr && stderr.includes(untilStderr)) child.kill('SIGTERM');
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, killed, stdout, stderr });
    });
  });
}

// A TCP proxy to the shared PostgreSQL that the test can stop.
class Proxy {
  constructor(host, port) { this.host = host; this.port = port; this.sockets = new Set(); }
  async start() {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.port, this.host);
      for (const s of [client, upstream]) { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)); s.on('error', () => {}); }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.listenPort = this.server.address().port;
  }
  async stop() {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-mistakes-'));
let n = 0;
function configFile(text) {
  const file = path.join(tmp, `config-${n++}.yaml`);
  fs.writeFileSync(file, text);
  return file;
}

const pgTools = (extra = '') => `postgres:
  tools:
    count_documents:
      kind: postgres-sql
      description: How many demo documents there are.
      statement: SELECT count(*) AS n FROM demo.documents
${extra}`;

function dsnWith(change) {
  const url = new URL(process.env.POSTGRES_DSN);
  change(url);
  return url.toString();
}

async function doctor(env, config) {
  const args = ['doctor', '--json'];
  if (config) args.push('--config', config);
  const r = await run(args, serverEnv(env));
  let report = null;
  try { report = JSON.parse(r.stdout); } catch { /* asserted by the caller */ }
  return { ...r, report };
}

function findings(report, engine) {
  const e = report.engines.find((x) => x.name === engine);
  return Object.fromEntries(e.findings.map((f) => [f.check, f]));
}

let proxy;
before(async () => {
  need(['POSTGRES_DSN']);
  const url = new URL(process.env.POSTGRES_DSN);
  proxy = new Proxy(url.hostname, Number(url.port));
  await proxy.start();
});
after(async () => {
  if (proxy?.server?.listening) await proxy.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('doctor: proved read-only through the proxy, inconclusive once it is stopped (exit 0, then 6)', async () => {
  const p = new Proxy(proxy.host, proxy.port);
  await p.start();
  const dsn = dsnWith((u) => { u.port = String(p.listenPort); });
  const config = configFile(pgTools());
  const up = await doctor({ POSTGRES_DSN: dsn }, config);
  assert.equal(up.code, EXIT.ok, up.stdout + up.stderr);
  assert.equal(up.report.verdict, 'read-only');
  assert.equal(findings(up.report, 'postgres')['pg.tool.count_documents'].severity, 'ok');

  await p.stop();
  const down = await doctor({ POSTGRES_DSN: dsn }, config);
  assert.equal(down.code, EXIT.inconclusive, down.stdout + down.stderr);
  assert.equal(down.report.verdict, 'inconclusive');
  const connect = findings(down.report, 'postgres')['pg.connect'];
  assert.equal(connect.severity, 'INCONCLUSIVE');
  // Where and why: the host:port and the server's own reason.
  assert.match(connect.message, new RegExp(`at 127\\.0\\.0\\.1:${p.listenPort}: .*Connection refused`));
  // The text form never says "no write capability found" when nothing was checked.
  const text = await run(['doctor', '--config', config], serverEnv({ POSTGRES_DSN: dsn }));
  assert.equal(text.code, EXIT.inconclusive);
  assert.match(text.stdout, /verdict: INCONCLUSIVE/);
  assert.doesNotMatch(text.stdout, /no write capability found|proved read-only/);
});

test('doctor: a wrong password or database name is inconclusive and says which (no credential echoed)', async () => {
  const wrongPw = dsnWith((u) => { u.password = 'not-the-password-0123'; });
  const pw = await doctor({ POSTGRES_DSN: wrongPw });
  assert.equal(pw.code, EXIT.inconclusive, pw.stdout + pw.stderr);
  const m = findings(pw.report, 'postgres')['pg.connect'].message;
  assert.match(m, /authentication failed for the configured role/);
  assert.match(m, /password authentication failed for user "mcp_reader"/);
  assert.ok(!(pw.stdout + pw.stderr).includes('not-the-password-0123'));
  assert.ok(!(pw.stdout + pw.stderr).includes(new URL(process.env.POSTGRES_DSN).password));

  const wrongDb = await doctor({ POSTGRES_DSN: dsnWith((u) => { u.pathname = '/no_such_database'; }) });
  assert.equal(wrongDb.code, EXIT.inconclusive);
  const d = findings(wrongDb.report, 'postgres')['pg.connect'].message;
  assert.match(d, /the configured database does not exist/);
  assert.match(d, /database "no_such_database" does not exist/);
  assert.doesNotMatch(d, /role or database/);
});

test('doctor: an unreachable DynamoDB or MongoDB endpoint is inconclusive, never read-only (exit 6)', async () => {
  // Port 1 on loopback: nothing listens there.
  const dy = await doctor({ AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'not-a-real-secret-0123' });
  assert.equal(dy.code, EXIT.inconclusive, dy.stdout + dy.stderr);
  const f = findings(dy.report, 'dynamodb');
  assert.equal(f['dynamodb.write_denied'].severity, 'INCONCLUSIVE');
  assert.match(f['dynamodb.write_denied'].message, /cannot reach http:\/\/127\.0\.0\.1:1/);
  assert.ok(!dy.stdout.includes('not-a-real-secret-0123'));
  const mongo = await doctor({ MONGODB_URI: 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300',
    MONGODB_DATABASE: 'mcpdemo' });
  assert.equal(mongo.code, EXIT.inconclusive, mongo.stdout + mongo.stderr);
  const m = findings(mongo.report, 'mongodb');
  const connect = m['mongodb.connect'] ?? m['mongodb.connection_status'];
  assert.equal(connect.severity, 'INCONCLUSIVE', JSON.stringify(m));
  assert.match(connect.message, /127\.0\.0\.1:1/);  // the driver's own words: where
});

test('doctor: no environment at all proves nothing: inconclusive, exit 6', async () => {
  const r = await doctor({});
  assert.equal(r.code, EXIT.inconclusive, r.stdout + r.stderr);
  assert.equal(r.report.verdict, 'inconclusive');
  assert.ok(r.report.engines.every((e) => e.state !== 'checked'));
});

test('doctor: an engine the config declares without its environment is inconclusive; one it does not use is not checked', async () => {
  need(['MONGODB_URI', 'MONGODB_DATABASE']);
  const declared = configFile(pgTools('mongodb:\n  targets:\n    docs:\n      collection: documents\n      projection: [title]\n'));
  const r = await doctor({ POSTGRES_DSN: process.env.POSTGRES_DSN }, declared);
  assert.equal(r.code, EXIT.inconclusive, r.stdout);
  const env = findings(r.report, 'mongodb')['mongodb.environment'];
  assert.equal(env.severity, 'INCONCLUSIVE');
  assert.match(env.fix, /set MONGODB_URI and MONGODB_DATABASE/);

  // MongoDB is reachable (and has no authentication, a violation) but this config has no MongoDB
  // tools: it is not checked and does not decide the verdict.
  const pgOnly = configFile(pgTools());
  const r2 = await doctor({ POSTGRES_DSN: process.env.POSTGRES_DSN, MONGODB_URI: process.env.MONGODB_URI,
    MONGODB_DATABASE: process.env.MONGODB_DATABASE }, pgOnly);
  assert.equal(r2.code, EXIT.ok, r2.stdout);
  const mongo = r2.report.engines.find((e) => e.name === 'mongodb');
  assert.equal(mongo.state, 'not used');
  assert.deepEqual(mongo.findings, []);
});

test('doctor: every configured statement is proved runnable as the role, with the fix for each that is not (exit 7)', async () => {
  need(['MCPDB_PG_ADMIN_DSN']);
  execFileSync('psql', [process.env.MCPDB_PG_ADMIN_DSN, '-XAtq', '-v', 'ON_ERROR_STOP=1', '-c',
    'CREATE TABLE IF NOT EXISTS public.mcpdb_doctor_hidden (id int); ' +
    'REVOKE ALL ON public.mcpdb_doctor_hidden FROM mcp_reader, PUBLIC;']);
  const config = configFile(pgTools(`    hidden_rows:
      kind: postgres-sql
      description: A table the reader may not read.
      statement: SELECT id FROM public.mcpdb_doctor_hidden WHERE id = $1
      parameters:
        - {name: id, type: integer, description: An id.}
    missing_table:
      kind: postgres-sql
      description: A table that does not exist.
      statement: SELECT id FROM public.mcpdb_no_such_table
    missing_column:
      kind: postgres-sql
      description: A column that does not exist.
      statement: SELECT no_such_column FROM demo.documents
`));
  const r = await doctor({ POSTGRES_DSN: process.env.POSTGRES_DSN }, config);
  assert.equal(r.code, EXIT.unusable, r.stdout + r.stderr);
  assert.equal(r.report.verdict, 'read-only');
  assert.deepEqual(r.report.tools, { checked: 4, unusable: 3 });
  const f = findings(r.report, 'postgres');
  assert.equal(f['pg.tool.count_documents'].severity, 'ok');
  assert.equal(f['pg.tool.hidden_rows'].severity, 'unusable');
  assert.match(f['pg.tool.hidden_rows'].message, /permission denied for table mcpdb_doctor_hidden/);
  // The server names the table without its schema; the fix is qualified so it can be pasted.
  assert.equal(f['pg.tool.hidden_rows'].fix, 'GRANT SELECT ON TABLE public.mcpdb_doctor_hidden TO mcp_reader;');
  assert.equal(f['pg.tool.missing_table'].severity, 'unusable');
  assert.match(f['pg.tool.missing_table'].message, /relation "public.mcpdb_no_such_table" does not exist/);
  assert.match(f['pg.tool.missing_table'].fix, /create it, or correct the statement/);
  assert.equal(f['pg.tool.missing_column'].severity, 'unusable');
  assert.match(f['pg.tool.missing_column'].message, /column "no_such_column" does not exist/);
});

test('doctor: DynamoDB and MongoDB targets that cannot be read are named with their fix', async () => {
  need(['MONGODB_URI', 'MONGODB_DATABASE', 'AWS_REGION', 'AWS_ENDPOINT_URL_DYNAMODB']);
  const config = configFile(`dynamodb:
  targets:
    ghost:
      table: mcpdb_no_such_table
      description: A table that does not exist.
      partition_key: {name: id, type: S}
mongodb:
  targets:
    docs:
      collection: documents
      projection: [title]
    ghost_docs:
      collection: mcpdb_no_such_collection
      projection: [title]
`);
  const r = await doctor({
    MONGODB_URI: process.env.MONGODB_URI, MONGODB_DATABASE: process.env.MONGODB_DATABASE,
    AWS_REGION: process.env.AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
  }, config);
  // The local servers have no authentication: that is a violation, and it decides the exit code.
  assert.equal(r.code, EXIT.violation, r.stdout + r.stderr);
  const dy = findings(r.report, 'dynamodb')['dynamodb.target.ghost'];
  assert.equal(dy.severity, 'unusable', JSON.stringify(dy));
  assert.match(dy.fix, /create table mcpdb_no_such_table, or correct dynamodb\.targets\.ghost\.table/);
  const mongo = findings(r.report, 'mongodb');
  assert.equal(mongo['mongodb.target.docs'].severity, 'ok', JSON.stringify(mongo));
  assert.equal(mongo['mongodb.target.ghost_docs'].severity, 'unusable');
  assert.match(mongo['mongodb.target.ghost_docs'].fix, /correct mongodb\.targets\.ghost_docs\.collection/);
  // Each violation comes with the step that removes it.
  assert.ok(mongo['mongodb.auth'].fix.includes("role: 'read'"));
  assert.ok(!JSON.stringify(r.report).includes(process.env.AWS_SECRET_ACCESS_KEY));
});

test('serve with self_check: refuse refuses to start when the check is inconclusive (exit 4), and starts when proved', async () => {
  const p = new Proxy(proxy.host, proxy.port);
  await p.start();
  const dsn = dsnWith((u) => { u.port = String(p.listenPort); });
  const config = configFile(`server: {self_check: refuse}\n${pgTools()}`);
  const started = await run(['serve', '--config', config], serverEnv({ POSTGRES_DSN: dsn }),
    { untilStderr: 'serving MCP on stdio', timeoutMs: 30000 });
  assert.match(started.stderr, /serving MCP on stdio with 1 tool/, started.stderr);
  await p.stop();
  // MCPDB_LOG_LEVEL in capitals, as an operator types it: logging stays on and shows why.
  const down = await run(['serve', '--config', config], serverEnv({ POSTGRES_DSN: dsn, MCPDB_LOG_LEVEL: 'WARNING' }));
  assert.equal(down.code, EXIT.refused, down.stderr);
  assert.match(down.stderr, /refusing to start: the self-check could not prove the credentials read-only/);
  assert.match(down.stderr, new RegExp(`pg\\.connect \\[INCONCLUSIVE\\].*127\\.0\\.0\\.1:${p.listenPort}`));

  const wrongPw = dsnWith((u) => { u.password = 'not-the-password-0123'; });
  const pw = await run(['serve', '--config', config], serverEnv({ POSTGRES_DSN: wrongPw }));
  assert.equal(pw.code, EXIT.refused, pw.stderr);
  assert.match(pw.stderr, /authentication failed/);
  assert.ok(!pw.stderr.includes('not-the-password-0123'));
});

test('an invalid MCPDB_LOG_LEVEL is a startup error that names the valid ones (exit 3)', async () => {
  const r = await run(['serve', '--config', configFile(pgTools())],
    serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN, MCPDB_LOG_LEVEL: 'verbose' }));
  assert.equal(r.code, EXIT.config, r.stderr);
  assert.match(r.stderr, /MCPDB_LOG_LEVEL='verbose' is not a log level \(use trace, debug, info, warning, error, critical or off; any case\)/);
});

test('serve --log-format json: every log line is one JSON object with a UTC time; server.log_format sets it, the flag wins', async () => {
  const jsonLines = (stderr) => stderr.split('\n').filter((l) => l.trim() !== '');
  const isLog = (o) => typeof o.time === 'string' && typeof o.level === 'string' && typeof o.message === 'string';
  const byFlag = await run(['serve', '--log-format', 'json', '--config', configFile(`audit: {enabled: false}\n${pgTools()}`)],
    serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), { untilStderr: 'serving MCP on stdio', timeoutMs: 30000 });
  const lines = jsonLines(byFlag.stderr);
  assert.ok(lines.length >= 2, byFlag.stderr);
  for (const l of lines) {
    const o = JSON.parse(l);  // throws on a line that is not JSON
    assert.ok(isLog(o), l);
    assert.match(o.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  assert.ok(lines.some((l) => JSON.parse(l).message.startsWith('serving MCP on stdio with 1 tool')));

  const byConfig = await run(['serve', '--config', configFile(`server: {log_format: json}\naudit: {enabled: false}\n${pgTools()}`)],
    serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), { untilStderr: 'serving MCP on stdio', timeoutMs: 30000 });
  assert.ok(jsonLines(byConfig.stderr).every((l) => isLog(JSON.parse(l))), byConfig.stderr);

  const flagWins = await run(['serve', '--log-format', 'text', '--config', configFile(`server: {log_format: json}\n${pgTools()}`)],
    serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), { untilStderr: 'serving MCP on stdio', timeoutMs: 30000 });
  assert.match(flagWins.stderr, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info serving MCP on stdio/m);

  const bad = await run(['serve', '--log-format', 'xml'], serverEnv({}));
  assert.equal(bad.code, EXIT.usage, bad.stderr);
});

test('keys new: a scope naming an engine or tool the config does not have is refused, with a suggestion', async () => {
  const config = configFile(pgTools());
  const engine = await run(['keys', 'new', '--name', 'analyst', '--scope', 'postgress', '--config', config], serverEnv({}));
  assert.equal(engine.code, 2, engine.stderr);
  assert.match(engine.stderr, /scope names engine 'postgress', which this server does not have; did you mean 'postgres'\?/);
  assert.equal(engine.stdout, '', 'no key is printed for a refused scope');
  const tool = await run(['keys', 'new', '--name', 'analyst', '--scope', 'postgres:count_document', '--config', config], serverEnv({}));
  assert.equal(tool.code, 2);
  assert.match(tool.stderr, /did you mean 'count_documents'\?/);
  const ok = await run(['keys', 'new', '--name', 'analyst', '--scope', 'postgres:count_documents', '--config', config], serverEnv({}));
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /scope: "postgres:count_documents"/);
});
