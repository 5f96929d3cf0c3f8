// The drift tools (bench/ab.sh and the /proc sampling it shares with bench/cpu_per_call.sh), held
// to what they promise without running a benchmark: ab.sh resolves the baseline to the commit of
// bench/results/latest.md and refuses a bad commit or bad arguments clearly (a --dry-run builds
// and runs nothing); the config it makes from the baseline's own PostgreSQL section is accepted
// by the binary under test (a key the current build no longer accepts would break every A/B
// run); and the PostgreSQL backends counted for a process are exactly those serving its
// connections, never another client's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { repoRoot } from './doc_blocks.mjs';

const bin = process.env.MCPDB_BIN;
if (!bin) throw new Error('MCPDB_BIN is not set: run the e2e tests through ctest (scripts/test.sh)');
const ab = path.join(repoRoot, 'bench/ab.sh');
const lib = path.join(repoRoot, 'bench/lib/server_cost.sh');

function run(cmd, args, env = {}) {
  return spawnSync(cmd, args, { cwd: repoRoot, encoding: 'utf8', timeout: 60000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/tmp', ...env } });
}
const git = (...args) => run('git', ['-C', repoRoot, ...args]);
// Runs a function of bench/lib/server_cost.sh: bash -c 'source LIB; "$@"' _ FN ARGS...
const libCall = (args, env = {}) => run('bash', ['-c', 'source "$0"; "$@"', lib, ...args], env);

const isCheckout = git('rev-parse', '--git-dir').status === 0;
const baseline = isCheckout ? git('log', '-1', '--format=%H', '--', 'bench/results/latest.md').stdout.trim() : '';

test('--help prints the usage and the options', () => {
  const r = run('bash', [ab, '--help']);
  assert.equal(r.status, 0, r.stderr);
  for (const s of ['bench/ab.sh [options] [BASE [HEAD]]', '--pairs', '--seconds', '--http', '--dry-run', '--no-callgrind'])
    assert.ok(r.stdout.includes(s), `usage lacks ${s}:\n${r.stdout}`);
});

test('bad arguments are refused with exit 2 and a message naming them', () => {
  const cases = [
    [['--pairs', '0'], /--pairs must be 1\.\.50/],
    [['--pairs', 'x'], /--pairs must be 1\.\.50/],
    [['--pairs'], /--pairs needs a value/],
    [['--seconds', '1'], /--seconds must be 2\.\.120/],
    [['--seconds', '-3'], /--seconds must be 2\.\.120/],
    [['--frobnicate'], /unknown option --frobnicate/],
    [['--dry-run', 'HEAD', 'HEAD', 'HEAD'], /at most two commits/],
  ];
  for (const [args, message] of cases) {
    const r = run('bash', [ab, ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stdout, '', `${args.join(' ')} printed a plan or a table`);
  }
});

test('a commit that does not exist is refused before anything is built', { skip: !isCheckout && 'not a git checkout' }, () => {
  for (const [args, which] of [[['no-such-commit-1f2e3d'], 'BASE'], [['HEAD', 'no-such-commit-1f2e3d'], 'HEAD'],
    [['0000000000000000000000000000000000000000'], 'BASE'], [['HEAD:README.md'], 'BASE']]) {
    const r = run('bash', [ab, '--dry-run', ...args]);
    assert.equal(r.status, 2, `${args}: exit ${r.status}\n${r.stdout}`);
    assert.match(r.stderr, new RegExp(`${which} '[^']+' is not a commit in this repository`));
  }
});

test('the default baseline is the commit that committed bench/results/latest.md', { skip: !baseline && 'no history of bench/results/latest.md' }, () => {
  const r = run('bash', [ab, '--dry-run']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^BASE ${baseline} \\(the commit of bench/results/latest\\.md\\): .*build/ab/${baseline}/`, 'm'));
  assert.match(r.stdout, /^HEAD working tree \(/m);
  assert.match(r.stdout, /^figures: stdio:1 stdio:8 \(/m);
  // Explicit commits, and --http adds the HTTP figure.
  const head = git('rev-parse', 'HEAD').stdout.trim();
  const both = run('bash', [ab, '--dry-run', '--http', '--pairs', '2', 'HEAD', 'HEAD']);
  assert.equal(both.status, 0, both.stderr);
  assert.match(both.stdout, new RegExp(`^BASE ${head} \\(given\\)`, 'm'));
  assert.match(both.stdout, new RegExp(`^HEAD ${head.slice(0, 12)}: .*build/ab/${head}/`, 'm'));
  assert.match(both.stdout, /^figures: stdio:1 stdio:8 http:8 .*2 interleaved pair/m);
});

test("the baseline's config (stdio and HTTP) is accepted by the binary under test", { skip: !baseline && 'no baseline commit' }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ab-'));
  try {
    for (const variant of [[], ['http']]) {
      const cfg = libCall(['bench_config', repoRoot, baseline, ...variant]);
      assert.equal(cfg.status, 0, cfg.stderr);
      assert.match(cfg.stdout, /^server: \{self_check: off\}$/m);
      assert.match(cfg.stdout, /^ {4}get_document:$/m);
      // The baseline's own section, verbatim: a newer one may hold keys the baseline refuses.
      const section = git('show', `${baseline}:src/engines/postgres/default_section.yaml`).stdout;
      assert.ok(cfg.stdout.includes(section.trimEnd()), 'not the baseline\'s section');
      const file = path.join(dir, `config${variant.join('')}.yaml`);
      fs.writeFileSync(file, cfg.stdout);
      // A DSN that is never dialled: check-config only validates.
      const r = run(bin, ['check-config', '--config', file],
        { POSTGRES_DSN: 'host=127.0.0.1 port=1 dbname=none user=none connect_timeout=1 sslmode=disable' });
      assert.equal(r.status, 0, `${variant}: ${r.stdout}\n${r.stderr}`);
    }
    const bad = libCall(['bench_config', repoRoot, 'no-such-commit-1f2e3d']);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /has no src\/engines\/postgres\/default_section\.yaml/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('tcp_port_pairs lists exactly the established connections of the process asked about', async () => {
  // A listener in this process; a client in a child process (the one asked about), connected to it.
  const server = net.createServer(() => {});
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const child = spawn(process.execPath, ['-e', `
    const s = require('net').connect(${port}, '127.0.0.1', () => console.log(s.localPort));
    setTimeout(() => {}, 30000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const localPort = Number(await new Promise((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim()))));
    const r = libCall(['tcp_port_pairs', String(child.pid)]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `(${localPort},${port})`);
    // This process holds the listener and the accepted side, not the child's connection.
    const mine = libCall(['tcp_port_pairs', String(process.pid)]);
    assert.ok(!mine.stdout.includes(`(${localPort},${port})`), mine.stdout);
  } finally {
    child.kill();
    server.close();
  }
});

const pgSkip = !process.env.POSTGRES_DSN ? 'POSTGRES_DSN not set'
  : run('psql', ['--version']).status !== 0 ? 'psql not installed' : false;

test('pg_backends_of finds the backend of its own connection and no other', { skip: pgSkip }, async () => {
  const dsn = process.env.POSTGRES_DSN;
  // Two psql sessions of the same role, each sleeping under a marker; one is asked about.
  const marker = `bench_ab_${process.pid}`;
  const sleeper = (n) => spawn('psql', [dsn, '-XAtq', '-c', `SELECT pg_sleep(20) /* ${marker}_${n} */`],
    { stdio: 'ignore' });
  const a = sleeper(1);
  const b = sleeper(2);
  try {
    const backendOf = (n) => {
      for (let i = 0; i < 100; i++) {
        const r = run('psql', [dsn, '-XAtq', '-c',
          `SELECT pid FROM pg_stat_activity WHERE query LIKE '%${marker}_${n} */' AND pid <> pg_backend_pid()`]);
        if (r.stdout.trim()) return r.stdout.trim();
        spawnSync('sleep', ['0.1']);
      }
      throw new Error(`session ${n} did not show up`);
    };
    const pa = backendOf(1);
    const pb = backendOf(2);
    assert.notEqual(pa, pb);
    const r = libCall(['pg_backends_of', String(a.pid), dsn]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), pa);
    // A process with no connection to PostgreSQL has none.
    const none = libCall(['pg_backends_of', String(process.pid), dsn]);
    assert.equal(none.stdout.trim(), '');
  } finally {
    a.kill();
    b.kill();
    // The backends would sleep on after their clients are gone.
    run('psql', [dsn, '-XAtq', '-c', `SELECT pg_cancel_backend(pid) FROM pg_stat_activity
      WHERE query LIKE '%${marker}%' AND pid <> pg_backend_pid()`]);
  }
});
