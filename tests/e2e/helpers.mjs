// Shared helpers for end-to-end tests: the real binary driven by real MCP clients.
import { spawn, execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const bin = process.env.MCPDB_BIN;
if (!bin) throw new Error('MCPDB_BIN is not set: run the e2e tests through ctest (scripts/test.sh)');

const require = createRequire(path.join(repoRoot, 'tools', 'package.json'));
export const sdkClient = require.resolve('@modelcontextprotocol/sdk/client/index.js');
export const sdkStdio = require.resolve('@modelcontextprotocol/sdk/client/stdio.js');
export const inspectorCli = path.join(repoRoot, 'tools/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

// Environment for the server: only what the test names, plus PATH (no engine by accident).
export function serverEnv(extra = {}) {
  return { PATH: process.env.PATH, MCPDB_LOG_LEVEL: 'info', ...extra };
}

// The engine variables exported by scripts/servers.sh, when present.
export function engineEnv() {
  const names = ['POSTGRES_DSN', 'AWS_REGION', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY', 'MONGODB_URI', 'MONGODB_DATABASE', 'MCPDB_EMBED_MODEL_DIR', 'MCPDB_CONFIG'];
  const env = {};
  for (const n of names) if (process.env[n]) env[n] = process.env[n];
  return env;
}

export async function connectSdk(env, args = []) {
  const { Client } = await import(sdkClient);
  const { StdioClientTransport } = await import(sdkStdio);
  const transport = new StdioClientTransport({ command: bin, args, env, stderr: 'pipe' });
  let stderr = '';
  const client = new Client({ name: 'mcp-dbserver-e2e', version: '1.0.0' });
  await client.connect(transport);
  transport.stderr?.on('data', (d) => { stderr += d.toString(); });
  return { client, transport, stderr: () => stderr };
}

// A raw line-oriented session with the binary, for inputs the SDK would never send.
// MCPDB_WRAP (e.g. "valgrind --leak-check=full") runs the binary under a wrapper (scripts/soak.sh).
export function rawServer(env, args = []) {
  const wrap = (process.env.MCPDB_WRAP ?? '').split(' ').filter(Boolean);
  const child = wrap.length
    ? spawn(wrap[0], [...wrap.slice(1), bin, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  let stderr = '';
  const waiting = [];
  const lines = [];
  child.stdout.on('data', (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      const w = waiting.shift();
      if (w) w();
    }
  });
  child.stderr.on('data', (d) => { stderr += d.toString(); });
  return {
    child,
    stderr: () => stderr,
    send(text) { child.stdin.write(text + '\n'); },
    async next(timeoutMs = 5000) {
      if (lines.length) return JSON.parse(lines.shift());
      await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no reply within ' + timeoutMs + ' ms; stderr: ' + stderr)), timeoutMs);
        waiting.push(() => { clearTimeout(t); resolve(); });
      });
      return JSON.parse(lines.shift());
    },
    exited() { return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))); },
  };
}

// `serve --http` on a free loopback port with the built-in allowlist and one client whose fresh
// API key (from `keys new`, scoped to postgres) is returned with the server's URL.
export async function startHttpServer(name = 'e2e-agent') {
  assert.ok(process.env.POSTGRES_DSN, 'POSTGRES_DSN missing: run through scripts/test.sh');
  const keyOut = execFileSync(bin, ['keys', 'new', '--name', name, '--scope', 'postgres']).toString();
  const key = keyOut.match(/mcpdb_[A-Za-z0-9_-]+/)?.[0];
  assert.ok(key, 'keys new printed a key');
  // The printed block starts at "  clients:" and is already indented for an `http:` section.
  const block = keyOut.slice(keyOut.indexOf('  clients:'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-http-'));
  const cfg = path.join(dir, 'http.yaml');
  // The built-in allowlist plus an http section with this one client.
  const builtIn = execFileSync(bin, ['check-config', '--print-default']).toString();
  fs.writeFileSync(cfg, builtIn + '\nhttp:\n' + block.trimEnd() + '\n');
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--config', cfg],
    { env: serverEnv({ POSTGRES_DSN: process.env.POSTGRES_DSN }), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server did not start: ' + log)), 30000);
    child.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/listening on (http:\/\/[^\s]+\/mcp)/);
      if (m) { clearTimeout(t); resolve(m[1]); }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${log}`)));
  });
  return { child, url, key, cfg, log: () => log };
}
