// Every config example in the operator docs passes `check-config`: each fenced ```yaml block of
// README.md, SECURITY.md and docs/*.md is written to a file and checked by the real binary.
// A block that is deliberately partial or wrong says so on the line before its fence:
//   <!-- check-config: skip (why this block is not a whole, valid config) -->
// The reason is required, and only a few blocks may be skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { docFiles, yamlBlocks } from './doc_blocks.mjs';

const bin = process.env.MCPDB_BIN;
if (!bin) throw new Error('MCPDB_BIN is not set: run the e2e tests through ctest (scripts/test.sh)');

const MIN_CHECKED = 1;  // a test that finds no example must fail, not pass vacuously
const MAX_SKIPPED = 3;

const blocks = docFiles().flatMap(yamlBlocks);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-config-examples-'));
let checked = 0;
let skipped = 0;

for (const b of blocks) {
  const where = `${b.file}:${b.line} (yaml block ${b.index} of ${b.file})`;
  if (b.skip !== null) {
    ++skipped;
    test(`${where} skipped: ${b.skip}`, { skip: b.skip }, () => {});
    continue;
  }
  test(`${where} passes check-config`, () => {
    const file = path.join(tmp, `${b.file.replaceAll('/', '_')}.${b.index}.yaml`);
    fs.writeFileSync(file, b.text);
    // No engine variables, no MCPDB_CONFIG: check-config needs neither.
    const r = spawnSync(bin, ['check-config', '--config', file],
      { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 60000 });
    ++checked;
    assert.equal(r.status, 0,
      `${where}: check-config exited ${r.status}${r.signal ? ` (signal ${r.signal})` : ''}\n` +
      `--- block ---\n${b.text}--- stderr ---\n${r.stderr}`);
  });
}

test('the docs hold checked config examples and few skipped ones', () => {
  assert.ok(checked >= MIN_CHECKED,
    `only ${checked} yaml block(s) checked (at least ${MIN_CHECKED} expected): is the extraction broken?`);
  assert.ok(skipped <= MAX_SKIPPED,
    `${skipped} yaml blocks are marked check-config: skip (at most ${MAX_SKIPPED}): make examples whole and valid`);
  fs.rmSync(tmp, { recursive: true, force: true });
});
