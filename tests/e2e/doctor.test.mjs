// `mcp-dbserver doctor` against a deliberately over-privileged principal and a read-only one,
// asserting the exact findings and exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bin, serverEnv } from './helpers.mjs';

const run = promisify(execFile);

// The embedding model is where the test command installed it (a tool whose model is missing is
// unusable: startup_refusals tests that), unless `env` says otherwise.
async function doctor(env) {
  const model = process.env.MCPDB_EMBED_MODEL_DIR ? { MCPDB_EMBED_MODEL_DIR: process.env.MCPDB_EMBED_MODEL_DIR } : {};
  try {
    const { stdout } = await run(bin, ['doctor', '--json'], { env: serverEnv({ ...model, ...env }) });
    return { code: 0, report: JSON.parse(stdout) };
  } catch (e) {
    return { code: e.code, report: JSON.parse(e.stdout) };
  }
}

function findings(report, engine) {
  const e = report.engines.find((x) => x.name === engine);
  return Object.fromEntries(e.findings.map((f) => [f.check, f.severity]));
}

function need(names) {
  const missing = names.filter((n) => !process.env[n]);
  assert.deepEqual(missing, [], `missing ${missing.join(', ')}: run through scripts/test.sh`);
}

test('postgres: the read-only role passes every check', async () => {
  need(['POSTGRES_DSN']);
  const { code, report } = await doctor({ POSTGRES_DSN: process.env.POSTGRES_DSN });
  assert.equal(code, 0);
  assert.equal(report.verdict, 'read-only');
  const f = findings(report, 'postgres');
  for (const check of ['pg.connect', 'pg.superuser', 'pg.role_attributes', 'pg.write_roles', 'pg.table_write',
    'pg.sequence_write', 'pg.schema_create', 'pg.database_create', 'pg.database_temp', 'pg.other_databases',
    'pg.large_objects', 'pg.remote_access', 'pg.security_definer', 'pg.ownership', 'pg.session_read_only',
    'pg.role_read_only_default']) {
    assert.equal(f[check], 'ok', `${check}: ${JSON.stringify(report)}`);
  }
  assert.ok(!Object.values(f).includes('VIOLATION'));
});

test('postgres: the over-privileged role is caught, exit 5', async () => {
  need(['MCPDB_PG_OVERPRIV_DSN']);
  const { code, report } = await doctor({ POSTGRES_DSN: process.env.MCPDB_PG_OVERPRIV_DSN });
  assert.equal(code, 5);
  assert.equal(report.verdict, 'write-capable');
  const f = findings(report, 'postgres');
  assert.equal(f['pg.write_roles'], 'VIOLATION');
  assert.equal(f['pg.table_write'], 'VIOLATION');
  assert.equal(f['pg.superuser'], 'ok');
  assert.equal(f['pg.role_read_only_default'], 'warning');
  // The fix is the exact statement.
  const e = report.engines.find((x) => x.name === 'postgres');
  assert.equal(e.findings.find((x) => x.check === 'pg.write_roles').fix,
    'REVOKE pg_write_all_data FROM mcp_overpriv;');
  // The report never contains the password.
  const pw = new URL(process.env.MCPDB_PG_OVERPRIV_DSN).password;
  assert.ok(!JSON.stringify(report).includes(pw));
});

test('mongodb without authentication and dynamodb without IAM are reported as write-capable', async () => {
  need(['MONGODB_URI', 'MONGODB_DATABASE', 'AWS_REGION', 'AWS_ENDPOINT_URL_DYNAMODB']);
  const { code, report } = await doctor({
    MONGODB_URI: process.env.MONGODB_URI, MONGODB_DATABASE: process.env.MONGODB_DATABASE,
    AWS_REGION: process.env.AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
  });
  assert.equal(code, 5);
  assert.equal(findings(report, 'mongodb')['mongodb.auth'], 'VIOLATION');
  assert.equal(findings(report, 'dynamodb')['dynamodb.write_denied'], 'VIOLATION');
  assert.ok(!JSON.stringify(report).includes(process.env.AWS_SECRET_ACCESS_KEY));
});

test('no engine enabled: nothing was checked, so nothing is proved: inconclusive, exit 6', async () => {
  const { code, report } = await doctor({});
  assert.equal(code, 6);
  assert.equal(report.verdict, 'inconclusive');
  assert.ok(report.engines.every((e) => e.enabled === false));
});

// A MariaDB account of its own for a test, with one schema (mytest_e2e30_<pid>_<n>: tables
// `documents` (id, title), readable, and `hidden`, not), made by the server's administrator (the
// mariadb client on MYSQL_DOCTOR_ROOT_DSN's socket); the account sees nothing else, so its grants
// are proved read-only and the tools decide. Returns its DSN, a config file for `tools` and drop().
let accounts = 0;
async function mysqlAccount(tools) {
  need(['MYSQL_DOCTOR_ROOT_DSN', 'MYSQL_DOCTOR_DSN_SAFE']);
  const { execFileSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const rootUrl = new URL(process.env.MYSQL_DOCTOR_ROOT_DSN);
  const root = (sql) => execFileSync('mariadb', ['-S', rootUrl.searchParams.get('socket'),
    '-u', decodeURIComponent(rootUrl.username), '-e', sql]);
  const tag = `mytest_e2e30_${process.pid}_${accounts++}`;
  const password = Math.random().toString(36).slice(2) + 'Aa1';
  const account = `'${tag}'@'127.0.0.1'`;
  const dropSql = `DROP DATABASE IF EXISTS ${tag}; DROP USER IF EXISTS ${account};`;
  root(`${dropSql} CREATE DATABASE ${tag}; CREATE TABLE ${tag}.documents (id INT, title TEXT);
    CREATE TABLE ${tag}.hidden (id INT); CREATE USER ${account} IDENTIFIED BY '${password}';
    GRANT SELECT ON ${tag}.documents TO ${account};`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-doctor-'));
  const dsn = new URL(process.env.MYSQL_DOCTOR_DSN_SAFE);
  dsn.username = tag;
  dsn.password = password;
  dsn.pathname = `/${tag}`;
  const config = (extra = '') => {
    const file = path.join(dir, `tools-${Math.random().toString(36).slice(2)}.yaml`);
    fs.writeFileSync(file, `${extra}mysql:\n  tools:\n${tools}`);
    return file;
  };
  const drop = () => { fs.rmSync(dir, { recursive: true, force: true }); root(dropSql); };
  return { tag, password, dsn: dsn.href, config, drop };
}

// MySQL: a tool that cannot run as the configured account is named with the fix, exit 7 (issue 30).
test('mysql: a missing table, column or privilege is unusable, exit 7', async () => {
  const acc = await mysqlAccount(`    good: {description: d, statement: "SELECT id, title FROM documents"}
    bad_column: {description: d, statement: SELECT idd FROM documents}
    bad_table: {description: d, statement: SELECT id FROM no_such_table}
    no_privilege: {description: d, statement: SELECT id FROM hidden}
`);
  const { tag, password } = acc;
  try {
    let result;
    try {
      const { stdout } = await run(bin, ['doctor', '--json', '--config', acc.config()],
        { env: serverEnv({ MYSQL_DSN: acc.dsn }) });
      result = { code: 0, report: JSON.parse(stdout) };
    } catch (e) {
      assert.ok(e.stdout, `doctor printed no report (exit ${e.code}): ${e.stderr}`);
      result = { code: e.code, report: JSON.parse(e.stdout) };
    }
    const { code, report } = result;
    const mysql = report.engines.find((x) => x.name === 'mysql');
    const byCheck = Object.fromEntries(mysql.findings.map((f) => [f.check, f]));
    assert.equal(report.verdict, 'read-only', JSON.stringify(report));
    assert.equal(code, 7, JSON.stringify(report));
    assert.deepEqual(report.tools, { checked: 4, unusable: 3 });
    assert.equal(byCheck['mysql.tool.good'].severity, 'ok');
    assert.match(byCheck['mysql.tool.bad_column'].message, /idd/);
    assert.match(byCheck['mysql.tool.bad_table'].message, /no_such_table/);
    assert.match(byCheck['mysql.tool.no_privilege'].message, /hidden/);
    assert.ok(byCheck['mysql.tool.no_privilege'].fix.startsWith(
      `GRANT SELECT ON \`${tag}\`.\`hidden\` TO '${tag}'@'127.0.0.1';`), byCheck['mysql.tool.no_privilege'].fix);
    for (const t of ['bad_column', 'bad_table', 'no_privilege']) {
      assert.equal(byCheck[`mysql.tool.${t}`].severity, 'unusable');
      assert.ok(byCheck[`mysql.tool.${t}`].fix);
    }
    assert.ok(!JSON.stringify(report).includes(password));
  } finally {
    acc.drop();
  }
});

// The start-up self-check proves each tool can run as doctor does (issue 30): in `warn` mode it logs
// the tool and the column it names and serves; with `self_check: refuse` it refuses to start, exit 4.
test('serve: the self-check names a tool that cannot run (warn), and refuses to start with it (refuse)', async () => {
  const { spawn } = await import('node:child_process');
  const acc = await mysqlAccount(`    good: {description: d, statement: "SELECT id, title FROM documents"}
    bad_column: {description: d, statement: SELECT idd FROM documents}
`);
  const serve = (config, untilStderr) => new Promise((resolve) => {
    const child = spawn(bin, ['serve', '--config', config], { env: serverEnv({ MYSQL_DSN: acc.dsn }) });
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.stderr.on('data', (d) => {
      stderr += d;
      if (untilStderr && stderr.includes(untilStderr)) child.stdin.end();
    });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stderr }); });
  });
  try {
    const warned = await serve(acc.config(), 'cannot run as the configured principal');
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /serving MCP on stdio with 2 tool/);
    assert.match(warned.stderr, /self-check mysql\.tool\.bad_column \[unusable\]: tool 'bad_column' cannot run: Unknown column 'idd'/);
    assert.doesNotMatch(warned.stderr, /mysql\.tool\.good \[/);
    const refused = await serve(acc.config('server: {self_check: refuse}\n'));
    assert.equal(refused.code, 4, refused.stderr);
    assert.match(refused.stderr, /mysql\.tool\.bad_column \[unusable\].*'idd'/);
    assert.match(refused.stderr, /refusing to start: 1 tool\(s\) cannot run as the configured principal \(server\.self_check: refuse\)/);
    assert.doesNotMatch(refused.stderr, /serving MCP/);
  } finally {
    acc.drop();
  }
});
