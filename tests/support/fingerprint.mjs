// Fingerprints of the data in the local servers: row counts and checksums of every PostgreSQL
// table, MongoDB collection, DynamoDB table and MariaDB table, and the large objects the demo's
// read-only role owns (it would own any it created). Used by the adversarial suite (before and after its hostile
// calls) and by canary.mjs (before and after the whole test suite).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(path.join(root, 'tools', 'package.json'));

export const fingerprintEnv = ['MCPDB_PG_ADMIN_DSN', 'AWS_REGION', 'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'MONGODB_URI', 'MONGODB_DATABASE', 'MYSQL_ADMIN_DSN'];

// The admin DSN goes to psql through libpq's environment variables, never the command line: a
// failed command's message repeats its arguments (and so would print the password).
function pgEnv(dsn) {
  const u = new URL(dsn);
  const env = { ...process.env, PGHOST: u.hostname.replace(/^\[|\]$/g, ''), PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username), PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: decodeURIComponent(u.pathname.slice(1)) };
  for (const [k, v] of u.searchParams) if (k === 'sslmode') env.PGSSLMODE = v;
  return env;
}

function psql(sql) {
  return execFileSync('psql', ['-XAtqc', sql], { env: pgEnv(process.env.MCPDB_PG_ADMIN_DSN) }).toString().trim();
}

function pgFingerprint() {
  const sql = `SELECT string_agg(format('%s.%s', schemaname, relname), ',' ORDER BY schemaname, relname)
               FROM pg_stat_user_tables WHERE schemaname NOT IN ('pg_catalog','information_schema')
                 -- test-private schemas that concurrent integration tests make and drop
                 AND schemaname <> 'prooftest' AND schemaname NOT LIKE 'mcpdb\\_sc\\_%'`;
  const tables = psql(sql).split(',').filter(Boolean);
  const out = {};
  for (const t of tables) {
    const q = `SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM ${t} x`;
    out[`pg:${t}`] = psql(q);
  }
  // lo_creat and lo_from_bytea write even in a READ ONLY transaction: the owner is the caller.
  out['pg:large objects owned by mcp_reader'] = psql(`SELECT count(*) FROM pg_largeobject_metadata m
    JOIN pg_roles r ON r.oid = m.lomowner WHERE r.rolname = 'mcp_reader'`);
  return out;
}

async function mongoFingerprint() {
  const { MongoClient } = require('mongodb');
  const { EJSON } = require('mongodb').BSON;
  const client = new MongoClient(process.env.MONGODB_URI, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const db = client.db(process.env.MONGODB_DATABASE);
  const out = {};
  for (const c of await db.listCollections().toArray()) {
    const docs = await db.collection(c.name).find({}).toArray();
    const lines = docs.map((d) => EJSON.stringify(d, { relaxed: false })).sort();
    out[`mongo:${c.name}`] = `${docs.length}:` + crypto.createHash('sha256').update(lines.join('\n')).digest('hex');
  }
  await client.close();
  return out;
}

function ddb(op, body) {
  const url = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  const res = execFileSync('curl', ['-sS', '--fail-with-body', '-X', 'POST', url,
    '--aws-sigv4', `aws:amz:${process.env.AWS_REGION}:dynamodb`,
    '--user', `${process.env.AWS_ACCESS_KEY_ID}:${process.env.AWS_SECRET_ACCESS_KEY}`,
    '-H', 'Content-Type: application/x-amz-json-1.0', '-H', `X-Amz-Target: DynamoDB_20120810.${op}`,
    '--data', JSON.stringify(body)]);
  return JSON.parse(res.toString());
}

function dynamoFingerprint() {
  const out = {};
  for (const t of ddb('ListTables', {}).TableNames ?? []) {
    const items = [];
    let start;
    for (let i = 0; i < 1000; i++) {
      const r = ddb('Scan', { TableName: t, ...(start ? { ExclusiveStartKey: start } : {}) });
      items.push(...(r.Items ?? []));
      start = r.LastEvaluatedKey;
      if (!start) break;
    }
    const lines = items.map((it) => JSON.stringify(it, Object.keys(it).sort())).sort();
    out[`dynamodb:${t}`] = `${items.length}:` + crypto.createHash('sha256').update(lines.join('\n')).digest('hex');
  }
  return out;
}

// The `mariadb` command-line client over TCP as MYSQL_ADMIN_DSN's user. The password goes in the
// child's MYSQL_PWD only, never on its command line (which every local user can read).
function mariadbClient(dsnText) {
  const u = new URL(dsnText);
  if (u.searchParams.get('socket')) throw new Error('fingerprint: MYSQL_ADMIN_DSN must name a TCP host, not a socket');
  const args = ['--no-defaults', '--protocol=tcp', '-h', u.hostname.replace(/^\[|\]$/g, ''),
    '-P', u.port || '3306', '-u', decodeURIComponent(u.username), '--batch', '--skip-column-names',
    '--default-character-set=utf8mb4'];
  const mode = (u.searchParams.get('ssl-mode') ?? '').toUpperCase();
  if (mode === 'DISABLED') args.push('--skip-ssl');
  else if (mode === 'REQUIRED') args.push('--ssl');
  else if (mode === 'VERIFY_CA' || mode === 'VERIFY_IDENTITY') args.push('--ssl', '--ssl-verify-server-cert');
  if (u.searchParams.get('ssl-ca')) args.push(`--ssl-ca=${u.searchParams.get('ssl-ca')}`);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  const env = { ...process.env, MYSQL_PWD: decodeURIComponent(u.password) };
  // latin1 keeps every byte as one character: batch mode escapes tab, newline, NUL and backslash
  // inside values, so a row is exactly one line whatever its bytes.
  const run = (sql) => execFileSync('mariadb', [...args, '-D', database, '-e', sql],
    { env, maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] }).toString('latin1');
  return { database, run };
}

function mariadbFingerprint() {
  const { database, run } = mariadbClient(process.env.MYSQL_ADMIN_DSN);
  // Scratch tables that the demo loader's tests make and drop (tests/integration/mysql) are
  // left out, as Postgres's test-private schemas are; fixtures made once (demo.mytest_numbers,
  // ...) are fingerprinted like any table.
  const tables = run(`SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()
                        AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'mytest\\_demo\\_%'
                      ORDER BY table_name`).split('\n').filter(Boolean);
  const out = {};
  for (const t of tables) {
    const name = `\`${t.replaceAll('`', '``')}\``;
    // One line per row, each ending in a newline (a row of one empty string is an empty line).
    const text = run(`SELECT * FROM ${name}`);
    const rows = text === '' ? [] : text.replace(/\n$/, '').split('\n').sort();
    // Batch mode prints NULL and the text 'NULL' alike; CHECKSUM TABLE tells them apart.
    const checksum = run(`CHECKSUM TABLE ${name} EXTENDED`).trim().split('\t')[1];
    out[`mariadb:${database}.${t}`] = `${rows.length}:${checksum}:` +
      crypto.createHash('sha256').update(rows.join('\n'), 'latin1').digest('hex');
  }
  return out;
}

export async function fingerprint() {
  return { ...pgFingerprint(), ...(await mongoFingerprint()), ...dynamoFingerprint(), ...mariadbFingerprint() };
}
