// `mcp-dbserver doctor` against a deliberately over-privileged principal and a read-only one,
// asserting the exact findings and exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bin, serverEnv } from './helpers.mjs';

const run = promisify(execFile);

async function doctor(env) {
  try {
    const { stdout } = await run(bin, ['doctor', '--json'], { env: serverEnv(env) });
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
