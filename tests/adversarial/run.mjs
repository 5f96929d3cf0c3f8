// Adversarial suite: hostile tool calls (data files in cases/*.jsonl) against the real binary and
// the real local servers. Afterwards it proves that no data changed (row counts and checksums of
// every demo table, collection and DynamoDB table before and after) and that no secret and no
// hostile argument value appears in the server's logs.
//
// Case line: {"name", "call": {"name", "arguments"}} or {"name", "raw": "<raw JSON-RPC line>"},
//            "expect": "tool_error" | "ok" | "rpc_error" | "no_rows" (ok with nothing found),
//            optional "code" (JSON-RPC code for rpc_error), optional "text" (regex on the text).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fingerprint } from '../support/fingerprint.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const bin = process.env.MCPDB_BIN;
const need = ['MCPDB_BIN', 'POSTGRES_DSN', 'MCPDB_PG_ADMIN_DSN', 'AWS_REGION', 'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'MONGODB_URI', 'MONGODB_DATABASE', 'MYSQL_DSN', 'MCPDB_EMBED_MODEL_DIR'];
const missing = need.filter((n) => !process.env[n]);
if (missing.length) {
  console.error(`adversarial: missing ${missing.join(', ')}: run through scripts/test.sh (scripts/servers.sh start + env)`);
  process.exit(1);
}

// ---- the server -------------------------------------------------------------------------------
function startServer() {
  const env = { PATH: process.env.PATH, MCPDB_LOG_LEVEL: 'debug' };
  for (const n of need.slice(1)) if (n !== 'MCPDB_PG_ADMIN_DSN') env[n] = process.env[n];
  const child = spawn(bin, ['serve'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  let stderr = '';
  const pending = new Map();
  child.stdout.on('data', (d) => {
    buf += d.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let msg;
      try { msg = JSON.parse(line); } catch { stderr += `\n[adversarial] non-JSON stdout line: ${line.slice(0, 200)}`; continue; }
      if (msg.id !== undefined && pending.has(JSON.stringify(msg.id))) {
        pending.get(JSON.stringify(msg.id))(msg);
        pending.delete(JSON.stringify(msg.id));
      }
    }
  });
  child.stderr.on('data', (d) => { stderr += d.toString('utf8'); });
  let nextId = 1;
  return {
    child,
    stderr: () => stderr,
    request(method, params, timeoutMs = 30000) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('timeout')), timeoutMs);
        const key = JSON.stringify(id);
        pending.set(key, (m) => { clearTimeout(t); resolve(m); });
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      });
    },
    raw(line, id, timeoutMs = 30000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('timeout')), timeoutMs);
        pending.set(JSON.stringify(id), (m) => { clearTimeout(t); resolve(m); });
        child.stdin.write(Buffer.concat([Buffer.from(line, 'latin1'), Buffer.from('\n')]));
      });
    },
  };
}

// ---- run --------------------------------------------------------------------------------------
const casesDir = path.join(root, 'tests/adversarial/cases');
const cases = [];
for (const f of fs.readdirSync(casesDir).filter((f) => f.endsWith('.jsonl')).sort()) {
  fs.readFileSync(path.join(casesDir, f), 'utf8').split('\n').forEach((line, i) => {
    if (!line.trim() || line.startsWith('//')) return;
    try { cases.push({ file: f, line: i + 1, ...JSON.parse(line) }); } catch (e) { throw new Error(`${f}:${i + 1}: ${e.message}`); }
  });
}
if (cases.length < 150) { console.error(`adversarial: only ${cases.length} cases (at least 150 expected)`); process.exit(1); }

const before = await fingerprint();
const server = startServer();
const init = await server.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'adversarial', version: '1' } });
if (!init.result) throw new Error('initialize failed: ' + JSON.stringify(init));
server.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
// The server's own surface (tool and target names, descriptions) may appear in logs; hostile
// values that merely repeat it are not leaks.
let surface = JSON.stringify((await server.request('tools/list', {})).result ?? {});
for (const t of ['list_dynamodb_targets', 'list_mongodb_targets']) {
  surface += JSON.stringify((await server.request('tools/call', { name: t, arguments: {} })).result ?? {});
}

let passed = 0;
const failures = [];
const hostileValues = new Set();
function collectValues(v) {
  if (typeof v === 'string') { if (v.length >= 10) hostileValues.add(v); }
  else if (Array.isArray(v)) v.forEach(collectValues);
  else if (v && typeof v === 'object') Object.entries(v).forEach(([k, x]) => { if (k.length >= 10) hostileValues.add(k); collectValues(x); });
}
let rawId = 900000;
for (const c of cases) {
  const where = `${c.file}:${c.line} ${c.name}`;
  let reply;
  try {
    if (c.raw !== undefined) {
      const id = rawId++;
      const line = c.raw.replaceAll('"__ID__"', String(id));
      reply = await server.raw(line, c.expect === 'rpc_error' && c.null_id ? null : id);
    } else {
      collectValues(c.call.arguments);
      reply = await server.request('tools/call', c.call);
    }
  } catch (e) {
    failures.push(`${where}: ${e.message}`);
    continue;
  }
  const text = reply.result?.content?.[0]?.text ?? reply.error?.message ?? '';
  let ok = false;
  switch (c.expect) {
    case 'tool_error': ok = reply.result?.isError === true; break;
    case 'rpc_error': ok = !!reply.error && (c.code === undefined || reply.error.code === c.code); break;
    case 'ok': ok = reply.result?.isError === false; break;
    case 'no_rows': {
      const s = reply.result?.structuredContent ?? {};
      const n = s.rows?.length ?? s.results?.length ?? s.documents?.length ?? s.items?.length ?? (s.found === false ? 0 : undefined);
      ok = reply.result?.isError === false && n === 0;
      break;
    }
    default: failures.push(`${where}: unknown expectation ${c.expect}`); continue;
  }
  if (ok && c.text && !new RegExp(c.text, 'i').test(text)) ok = false;
  if (ok) passed++;
  else failures.push(`${where}: expected ${c.expect}${c.code ? ' ' + c.code : ''}${c.text ? ' /' + c.text + '/' : ''}, got ${JSON.stringify(reply).slice(0, 300)}`);
}

// Still alive and serving after everything.
const ping = await server.request('ping', {});
if (!ping.result) failures.push('server did not answer ping after the suite');
server.child.stdin.end();
await new Promise((r) => server.child.on('exit', r));
const after = await fingerprint();

// Data unchanged.
for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
  if (before[k] !== after[k]) failures.push(`DATA CHANGED: ${k}: ${before[k]} -> ${after[k]}`);
}
// No secret and no hostile value in the logs.
const logs = server.stderr();
const secrets = [process.env.AWS_SECRET_ACCESS_KEY];
for (const dsn of [process.env.POSTGRES_DSN, process.env.MONGODB_URI]) {
  try { const u = new URL(dsn); if (u.password) secrets.push(decodeURIComponent(u.password)); } catch { /* not a URL */ }
}
for (const s of secrets) if (s && logs.includes(s)) failures.push('a credential appears in the server log');
for (const v of hostileValues) if (!surface.includes(v) && logs.includes(v)) failures.push(`an argument value appears in the server log: ${JSON.stringify(v).slice(0, 80)}`);

console.log(`adversarial: ${cases.length} hostile calls, data fingerprints: ${Object.keys(before).length} tables/collections`);
for (const f of failures) console.log('  FAIL ' + f);
console.log(`${passed} passed, ${cases.length - passed} failed`);
process.exit(failures.length ? 1 : 0);
