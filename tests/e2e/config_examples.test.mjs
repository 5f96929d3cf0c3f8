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

// Not helpers.mjs: this test needs neither the MCP SDK nor a database, only the binary.
const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const bin = process.env.MCPDB_BIN;
if (!bin) throw new Error('MCPDB_BIN is not set: run the e2e tests through ctest (scripts/test.sh)');

const MIN_CHECKED = 1;  // a test that finds no example must fail, not pass vacuously
const MAX_SKIPPED = 3;

const SKIP_MARKER = /^\s*<!--\s*check-config:\s*skip\s*\((?<reason>[^)]*)\)\s*-->\s*$/;
const FENCE = /^\s{0,3}(?<fence>`{3,}|~{3,})\s*(?<info>[^`\s]*)/;

function docFiles() {
  const files = ['README.md', 'SECURITY.md'];
  const docs = path.join(repoRoot, 'docs');
  for (const f of fs.readdirSync(docs).sort()) if (f.endsWith('.md')) files.push(path.join('docs', f));
  return files.filter((f) => fs.existsSync(path.join(repoRoot, f)));
}

// The yaml blocks of one markdown file: {file, index, line, text, skip} (index counts the file's
// yaml blocks from 1; line is the fence's line). A malformed skip marker is an error, not a skip.
function yamlBlocks(file) {
  const lines = fs.readFileSync(path.join(repoRoot, file), 'utf8').split('\n');
  const blocks = [];
  let open = null;  // the fence being read: {fence, yaml, start, body, skip}
  let previous = '';  // the last non-blank line outside a block
  for (let i = 0; i < lines.length; ++i) {
    const line = lines[i];
    const m = FENCE.exec(line);
    if (open) {
      if (m && m.groups.fence[0] === open.fence[0] && m.groups.fence.length >= open.fence.length &&
          m.groups.info === '') {
        if (open.yaml) {
          blocks.push({ file, index: blocks.length + 1, line: open.start, text: open.body.join('\n') + '\n',
            skip: open.skip });
        }
        open = null;
        previous = line;  // a marker belongs to the one block after it
      } else {
        open.body.push(line);
      }
      continue;
    }
    if (m) {
      const lang = m.groups.info.toLowerCase();
      const yaml = lang === 'yaml' || lang === 'yml';
      let skip = null;
      if (/check-config/.test(previous)) {
        const s = SKIP_MARKER.exec(previous);
        if (!s || s.groups.reason.trim() === '') {
          throw new Error(`${file}:${i}: malformed marker ${JSON.stringify(previous.trim())}; ` +
            'write <!-- check-config: skip (reason) --> on the line before the fence');
        }
        if (!yaml) throw new Error(`${file}:${i}: a check-config marker before a block that is not yaml`);
        skip = s.groups.reason.trim();
      }
      open = { fence: m.groups.fence, yaml, start: i + 1, body: [], skip };
      continue;
    }
    if (line.trim() !== '') previous = line;
  }
  if (open) throw new Error(`${file}:${open.start}: fence never closed`);
  return blocks;
}

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
