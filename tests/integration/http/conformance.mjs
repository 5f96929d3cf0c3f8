// Runs the official MCP conformance suite against `mcp-dbserver serve --http` on loopback, for
// every protocol revision and scenario listed in conformance-scenarios.txt (see its header), and
// prints a tally per revision. Exit code 0 only when every applicable scenario passed, the file
// covers every scenario the installed suite offers, and the server exited cleanly at the end.
// Run by conformance.sh with the pinned Node 22 (the suite needs it).
// Usage: node22 conformance.mjs MCP_DBSERVER_BINARY TOOLS_DIR SCENARIOS_FILE
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [bin, toolsDir, scenariosFile] = process.argv.slice(2);
if (!bin || !toolsDir || !scenariosFile) {
  console.error('usage: conformance.mjs MCP_DBSERVER_BINARY TOOLS_DIR SCENARIOS_FILE');
  process.exit(2);
}
const suite = path.join(toolsDir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const suiteVersion = JSON.parse(fs.readFileSync(
  path.join(toolsDir, 'node_modules/@modelcontextprotocol/conformance/package.json'), 'utf8')).version;
const problems = [];  // anything that makes the run fail, printed at the end

// ---- the scenario file -------------------------------------------------------------------------
function readScenarioFile(file) {
  const rows = [];
  fs.readFileSync(file, 'utf8').split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const where = `${path.basename(file)}:${i + 1}`;
    const f = line.split('|').map((s) => s.trim());
    const [version, name, applies] = f;
    const reason = f.slice(3).join('|').trim();
    if (!version || !name || !applies) { problems.push(`${where}: expected VERSION | SCENARIO | yes/no | REASON`); return; }
    if (name.includes('#')) {
      const [scenario, check] = name.split('#');
      const m = applies.match(/^excused-if \/(.+)\/$/);
      if (applies === 'may-skip' && reason) {
        rows.push({ kind: 'check', version, scenario, check, skip: true, reason, where });
      } else if (m && reason) {
        rows.push({ kind: 'check', version, scenario, check, pattern: new RegExp(m[1]), reason, where });
      } else {
        problems.push(`${where}: a check row needs "excused-if /REGEX/ | REASON" or "may-skip | REASON"`);
      }
    } else if (applies === 'yes' || applies === 'no') {
      if (applies === 'no' && !reason) { problems.push(`${where}: "no" needs a reason`); return; }
      if (applies === 'yes' && version === 'other') { problems.push(`${where}: "other" scenarios are not run; say no and why`); return; }
      rows.push({ kind: 'scenario', version, scenario: name, applies: applies === 'yes', reason, where });
    } else {
      problems.push(`${where}: applies must be yes or no, got "${applies}"`);
    }
  });
  return rows;
}

// ---- what the installed suite offers -----------------------------------------------------------
function suiteList(args) {
  const out = execFileSync(process.execPath, [suite, 'list', '--server', ...args], { encoding: 'utf8' });
  return [...out.matchAll(/^\s+- (\S+)(?: \[([^\]]*)\])?/gm)].map((m) => ({ name: m[1], tags: (m[2] ?? '').split(',') }));
}
function suiteRevisions() {
  const help = execFileSync(process.execPath, [suite, 'list', '--help'], { encoding: 'utf8' });
  const m = help.replace(/\s+/g, ' ').match(/Requirement sets available: ([0-9, -]+)/);
  if (!m) throw new Error('cannot read the requirement sets from `list --help`:\n' + help);
  return m[1].split(',').map((s) => s.trim()).filter(Boolean);
}

function checkCoverage(rows) {
  const revisions = suiteRevisions();
  const offered = new Map();  // version -> Set of scenario names
  for (const v of revisions) offered.set(v, new Set(suiteList(['--spec-version', v]).map((s) => s.name)));
  const all = suiteList([]);
  offered.set('extension', new Set(all.filter((s) => s.tags.includes('extension')).map((s) => s.name)));
  // Anything else the suite offers (e.g. a draft-only scenario) must be named too, as "other".
  const known = new Set([...revisions, 'extension']);
  offered.set('other', new Set(all.filter((s) => !s.tags.some((t) => known.has(t))).map((s) => s.name)));
  const named = new Set(rows.filter((r) => r.kind === 'scenario').map((r) => `${r.version} ${r.scenario}`));
  for (const [v, names] of offered) {
    for (const n of names) if (!named.has(`${v} ${n}`)) problems.push(`the suite offers ${v} scenario "${n}", which ${path.basename(scenariosFile)} does not mention`);
  }
  for (const r of rows) {
    if (!offered.get(r.version)?.has(r.scenario)) problems.push(`${r.where}: the suite offers no ${r.version} scenario "${r.scenario}"`);
  }
  const seen = new Set();
  for (const r of rows.filter((x) => x.kind === 'scenario')) {
    const k = `${r.version} ${r.scenario}`;
    if (seen.has(k)) problems.push(`${r.where}: ${k} listed twice`);
    seen.add(k);
  }
  for (const r of rows.filter((x) => x.kind === 'check')) {
    if (!rows.some((s) => s.kind === 'scenario' && s.applies && s.version === r.version && s.scenario === r.scenario)) {
      problems.push(`${r.where}: a check row for ${r.version} ${r.scenario}, which is not run`);
    }
  }
  return revisions;
}

// ---- the server --------------------------------------------------------------------------------
async function startServer(dir) {
  if (!process.env.POSTGRES_DSN) throw new Error('POSTGRES_DSN missing: run through scripts/test.sh (or eval "$(scripts/servers.sh env)")');
  const cfg = path.join(dir, 'config.yaml');
  // The built-in demo allowlist; only the Postgres engine is enabled (only POSTGRES_DSN is passed).
  // Anonymous access on loopback: the suite sends no credentials. Its scenarios send bursts of
  // requests (server-stateless some 40 at once): the default rate limit (10/s, burst 20) would
  // answer some with 429 depending on the machine's speed, so it is lifted (it is tested elsewhere).
  const builtIn = execFileSync(bin, ['check-config', '--print-default'], { encoding: 'utf8' });
  fs.writeFileSync(cfg, `${builtIn}\naudit: {path: ${path.join(dir, 'audit.log')}}\n` +
    'http:\n  auth: none\n  rate_limit: {rate: 1000000, burst: 1000000}\n');
  const env = { PATH: process.env.PATH, POSTGRES_DSN: process.env.POSTGRES_DSN, MCPDB_LOG_LEVEL: 'info' };
  for (const n of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[n]) env[n] = process.env[n];
  const child = spawn(bin, ['serve', '--config', cfg, '--http', '127.0.0.1:0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d.toString(); });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('the server did not start within 30 s:\n' + log)), 30000);
    const poll = setInterval(() => {
      const m = log.match(/listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) { clearTimeout(t); clearInterval(poll); resolve(m[1]); }
    }, 20);
    exited.then(({ code, signal }) => { clearTimeout(t); clearInterval(poll); reject(new Error(`the server exited (${code ?? signal}):\n${log}`)); });
  });
  return { child, url, exited, log: () => log };
}

// ---- one scenario ------------------------------------------------------------------------------
function runScenario(url, version, scenario, outDir) {
  return new Promise((resolve) => {
    const args = [suite, 'server', '--url', url, '--scenario', scenario, '-o', outDir, '--timeout', '30000'];
    if (version !== 'extension') args.push('--spec-version', version);
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const kill = setTimeout(() => child.kill('SIGKILL'), 90000);
    child.on('exit', (code, signal) => {
      clearTimeout(kill);
      // Results land in OUTDIR/server-<scenario>-<timestamp>/checks.json.
      const sub = fs.existsSync(outDir) ? fs.readdirSync(outDir).filter((d) => d.startsWith(`server-${scenario}-`)) : [];
      let checks = null;
      if (sub.length === 1) {
        try { checks = JSON.parse(fs.readFileSync(path.join(outDir, sub[0], 'checks.json'), 'utf8')); } catch { checks = null; }
      }
      resolve({ code, signal, out, checks });
    });
  });
}

function judge(version, scenario, res, excuses) {
  const t = { success: 0, failure: 0, warning: 0, excused: 0, skipped: 0, info: 0, failed: [], excusedList: [] };
  if (!Array.isArray(res.checks)) {
    t.failed.push(`no checks.json (suite exit ${res.code ?? res.signal})`);
    return t;
  }
  for (const c of res.checks) {
    switch (c.status) {
      case 'SUCCESS': t.success++; break;
      case 'WARNING': t.warning++; break;
      case 'SKIPPED': {
        // A check the suite skipped proves nothing: allowed only where the file says why.
        const ok = excuses.find((e) => e.skip && e.check === c.id);
        if (ok) { t.skipped++; ok.used = true; }
        else { t.failure++; t.failed.push(`${c.id}: skipped (${c.errorMessage ?? 'no reason given'}), and not listed as may-skip`); }
        break;
      }
      case 'INFO': t.info++; break;
      case 'FAILURE': {
        const ex = excuses.find((e) => e.pattern && e.check === c.id && e.pattern.test(c.errorMessage ?? ''));
        if (ex) { t.excused++; t.excusedList.push(c.id); ex.used = true; }
        else { t.failure++; t.failed.push(`${c.id}: ${c.errorMessage ?? c.description}`); }
        break;
      }
      default: t.failure++; t.failed.push(`${c.id}: unknown status ${c.status}`);
    }
  }
  if (t.success + t.failure + t.excused === 0) t.failed.push('the scenario made no pass/fail check');
  return t;
}

// ---- main --------------------------------------------------------------------------------------
const started = Date.now();
const rows = readScenarioFile(scenariosFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-conformance-'));
let server;
let exitCode = 1;
try {
  const revisions = checkCoverage(rows);
  server = await startServer(dir);
  console.log(`conformance suite ${suiteVersion} against ${server.url} (demo Postgres engine, auth none)`);
  const versions = [...new Set(rows.map((r) => r.version))].filter((v) => v !== 'other');
  for (const v of revisions) if (!versions.includes(v)) problems.push(`the suite offers revision ${v}, which the scenario file does not mention`);
  const tallies = [];
  for (const version of versions) {
    const tally = { version, passed: 0, failed: 0, notApplicable: 0, success: 0, failure: 0, warning: 0, excused: 0, skipped: 0 };
    for (const row of rows.filter((r) => r.kind === 'scenario' && r.version === version)) {
      if (!row.applies) { tally.notApplicable++; continue; }
      const t0 = Date.now();
      const excuses = rows.filter((r) => r.kind === 'check' && r.version === version && r.scenario === row.scenario);
      const res = await runScenario(server.url, version, row.scenario, path.join(dir, `${version}-${row.scenario}`));
      const t = judge(version, row.scenario, res, excuses);
      for (const k of ['success', 'failure', 'warning', 'excused', 'skipped']) tally[k] += t[k];
      const ok = t.failed.length === 0;
      ok ? tally.passed++ : tally.failed++;
      const extra = [t.warning && `${t.warning} warning(s)`, t.excused && `${t.excused} excused (${t.excusedList.join(', ')})`,
        t.skipped && `${t.skipped} skipped`].filter(Boolean).join(', ');
      console.log(`${ok ? 'PASS' : 'FAIL'} ${version} ${row.scenario}: ${t.success} passed, ${t.failure} failed${extra ? ', ' + extra : ''} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      if (!ok) {
        for (const f of t.failed) console.log(`       ${f.split('\n')[0].slice(0, 400)}`);
        problems.push(`${version} ${row.scenario} failed`);
      }
      if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`the server died during ${version} ${row.scenario}:\n${server.log().slice(-3000)}`);
    }
    for (const e of rows.filter((r) => r.kind === 'check' && r.version === version && !r.used)) {
      console.log(`note: ${e.where}: the ${e.skip ? 'may-skip' : 'excuse'} for ${e.scenario}#${e.check} was not needed in this run`);
    }
    tallies.push(tally);
  }
  console.log('\ntally (checks: passed/failed; warnings, excused and allowed skips counted apart, never as passed)');
  for (const t of tallies) {
    console.log(`  ${t.version}: scenarios ${t.passed} passed, ${t.failed} failed, ${t.notApplicable} not applicable; ` +
      `checks ${t.success} passed, ${t.failure} failed; ${t.warning} warning(s), ${t.excused} excused, ${t.skipped} skipped`);
  }
  server.child.kill('SIGTERM');
  const { code, signal } = await server.exited;
  if (code !== 0) problems.push(`the server exited with ${code ?? signal} after SIGTERM:\n${server.log().slice(-3000)}`);
  server = null;
  exitCode = problems.length ? 1 : 0;
} catch (e) {
  problems.push(e.message);
} finally {
  if (server) server.child.kill('SIGKILL');
  console.log(`\nrun time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (problems.length) {
    console.log('\nFAILED:');
    for (const p of problems) console.log(`  - ${p}`);
    exitCode = 1;
  }
  if (exitCode === 0) fs.rmSync(dir, { recursive: true, force: true });
  else console.log(`(suite results kept in ${dir})`);
}
process.exit(exitCode);
