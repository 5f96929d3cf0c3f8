// Fingerprints of the data in the local servers: row counts and checksums of every PostgreSQL
// table, MongoDB collection and DynamoDB table, and the large objects the demo's read-only role
// owns (it would own any it created). Used by the adversarial suite (before and after its hostile
// calls) and by canary.mjs (before and after the whole test suite).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(path.join(root, 'tools', 'package.json'));

export const fingerprintEnv = ['MCPDB_PG_ADMIN_DSN', 'AWS_REGION', 'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'MONGODB_URI', 'MONGODB_DATABASE'];

function psql(sql) {
  return execFileSync('psql', [process.env.MCPDB_PG_ADMIN_DSN, '-XAtqc', sql]).toString().trim();
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

export async function fingerprint() {
  return { ...pgFingerprint(), ...(await mongoFingerprint()), ...dynamoFingerprint() };
}
