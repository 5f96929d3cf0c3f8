// The yaml blocks of the operator docs (README.md, SECURITY.md, docs/*.md), for the tests that
// check them: config_examples (check-config passes each) and config_schema (the JSON Schema
// accepts each).
import fs from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

const SKIP_MARKER = /^\s*<!--\s*check-config:\s*skip\s*\((?<reason>[^)]*)\)\s*-->\s*$/;
const FENCE = /^\s{0,3}(?<fence>`{3,}|~{3,})\s*(?<info>[^`\s]*)/;

export function docFiles() {
  const files = ['README.md', 'SECURITY.md'];
  const docs = path.join(repoRoot, 'docs');
  for (const f of fs.readdirSync(docs).sort()) if (f.endsWith('.md')) files.push(path.join('docs', f));
  return files.filter((f) => fs.existsSync(path.join(repoRoot, f)));
}

// The yaml blocks of one markdown file: {file, index, line, text, skip} (index counts the file's
// yaml blocks from 1; line is the fence's line). A malformed skip marker is an error, not a skip.
export function yamlBlocks(file) {
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

