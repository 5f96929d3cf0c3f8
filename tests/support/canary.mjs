// Whole-suite canary: `record FILE` fingerprints the data in the local servers (PostgreSQL,
// MongoDB, DynamoDB, MariaDB: see fingerprint.mjs) before the test suite runs; `verify FILE` after
// it, and fails naming every table, collection or count that changed. Nothing the suite sends
// through the server may change data; tests that make their own fixtures do so as the admin role,
// in schemas, collections and tables recorded only once made (a fixture that is made again the
// same way fingerprints the same). Demo data loaded before the record is what it guards first.
import fs from 'node:fs';
import { fingerprint, fingerprintEnv } from './fingerprint.mjs';

const [mode, file] = process.argv.slice(2);
if (!['record', 'verify'].includes(mode) || !file) {
  console.error('usage: node tests/support/canary.mjs record|verify FILE');
  process.exit(2);
}
const missing = fingerprintEnv.filter((n) => !process.env[n]);
if (missing.length) {
  console.error(`canary: missing ${missing.join(', ')}: run after eval "$(bash scripts/servers.sh env)"`);
  process.exit(2);
}

const now = await fingerprint();
if (mode === 'record') {
  fs.writeFileSync(file, JSON.stringify(now, null, 1));
  console.log(`canary: recorded ${Object.keys(now).length} fingerprints in ${file}`);
  process.exit(0);
}
const before = JSON.parse(fs.readFileSync(file, 'utf8'));
const problems = [];
for (const [key, value] of Object.entries(before)) {
  if (!(key in now)) problems.push(`${key}: gone`);
  else if (now[key] !== value) problems.push(`${key}: changed (${value} -> ${now[key]})`);
}
if (problems.length) {
  console.error(`canary: data changed during the test suite:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`canary: ${Object.keys(before).length} fingerprints unchanged after the suite`);
