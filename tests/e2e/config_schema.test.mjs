// The config reference and JSON Schema come from the same declarations the server parses with
// (`check-config --reference`, `check-config --schema`). This test holds them to what the server
// accepts:
//   - docs/CONFIG.md is the generated reference, byte for byte (a declaration changed without
//     regenerating the file fails here: `mcp-dbserver check-config --reference > docs/CONFIG.md`);
//   - the schema is a valid draft 2020-12 schema;
//   - every config the server accepts (each docs example, the built-in allowlist, what
//     import-toolbox writes from each Toolbox file in the repository) is valid under the schema:
//     the schema is never stricter than the server;
//   - the configs refused for their shape (unknown keys, wrong types, out of range, missing keys:
//     a list here, and every golden config under tests/ refused for an unknown key) are refused
//     by the schema too: an editor shows the mistake before the server does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

import { docFiles, repoRoot, yamlBlocks } from './doc_blocks.mjs';

const require = createRequire(path.join(repoRoot, 'tools', 'package.json'));
const Ajv2020 = require('ajv/dist/2020').default;
const YAML = require('yaml');

const bin = process.env.MCPDB_BIN;
if (!bin) throw new Error('MCPDB_BIN is not set: run the e2e tests through ctest (scripts/test.sh)');

// No engine variables, no MCPDB_CONFIG: neither command needs them.
function run(args) {
  return spawnSync(bin, args, { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 60000,
    maxBuffer: 16 << 20 });
}

function loadSchema() {
  const r = run(['check-config', '--schema']);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  return ajv.compile(loadSchema());
}

function yamlOf(text) {
  // YAML 1.2 core schema, as the server reads (yaml-cpp): `on`/`yes` are strings, not booleans.
  return YAML.parse(text, { schema: 'core', uniqueKeys: false }) ?? {};
}

test('docs/CONFIG.md is the generated reference', () => {
  const r = run(['check-config', '--reference']);
  assert.equal(r.status, 0, r.stderr);
  const file = fs.readFileSync(path.join(repoRoot, 'docs', 'CONFIG.md'), 'utf8');
  assert.ok(r.stdout.length > 10000, 'the reference is suspiciously short');
  assert.equal(file, r.stdout,
    'docs/CONFIG.md differs from the declarations: run `mcp-dbserver check-config --reference > docs/CONFIG.md`');
});

test('the schema is a strict draft 2020-12 schema naming every top-level key', () => {
  const schema = loadSchema();
  assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.equal(schema.additionalProperties, false);
  for (const key of ['version', 'server', 'limits', 'http', 'audit', 'embedding', 'postgres', 'mysql',
    'mongodb', 'dynamodb']) {
    assert.ok(schema.properties[key], `no schema for ${key}:`);
  }
  validator();  // compiles in strict mode: no unknown keyword, no contradiction
});

// Every doc example that check-config passes (config_examples checks that) is valid here.
test('every config example in the docs is valid under the schema', () => {
  const validate = validator();
  let checked = 0;
  for (const b of docFiles().flatMap(yamlBlocks)) {
    if (b.skip !== null) continue;
    const ok = validate(yamlOf(b.text));
    assert.ok(ok, `${b.file}:${b.line}: ${JSON.stringify(validate.errors, null, 1)}\n${b.text}`);
    ++checked;
  }
  assert.ok(checked >= 5, `only ${checked} doc examples found`);
});

test('the built-in allowlist and every import-toolbox output are valid under the schema', () => {
  const validate = validator();
  const builtIn = run(['check-config', '--print-default']);
  assert.equal(builtIn.status, 0, builtIn.stderr);
  assert.ok(validate(yamlOf(builtIn.stdout)), JSON.stringify(validate.errors, null, 1));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-config-schema-'));
  const toolboxFiles = [
    ...fs.readdirSync(path.join(repoRoot, 'tests', 'fixtures', 'toolbox')).map((f) => path.join('tests', 'fixtures', 'toolbox', f)),
    ...fs.readdirSync(path.join(repoRoot, 'bench', 'config')).filter((f) => f.startsWith('toolbox')).map((f) => path.join('bench', 'config', f)),
  ];
  assert.ok(toolboxFiles.length >= 3, `only ${toolboxFiles.length} Toolbox files found`);
  for (const f of toolboxFiles) {
    const out = path.join(tmp, 'imported.yaml');
    const r = run(['import-toolbox', path.join(repoRoot, f), '-o', out]);
    assert.equal(r.status, 0, `${f}: ${r.stderr}`);
    assert.ok(validate(yamlOf(fs.readFileSync(out, 'utf8'))),
      `${f} imported is not valid under the schema: ${JSON.stringify(validate.errors, null, 1)}`);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

// The golden bad configs under tests/ whose expected errors include an unknown key.
function goldensWithUnknownKeys() {
  const out = [];
  const dirs = [path.join('tests', 'unit', 'config', 'bad'),
    ...['postgres', 'mysql', 'mongodb', 'dynamodb'].map((e) => path.join('tests', 'unit', e, 'configs'))];
  for (const dir of dirs) {
    for (const f of fs.readdirSync(path.join(repoRoot, dir))) {
      if (!/\.(expected|errors)$/.test(f)) continue;
      const expected = fs.readFileSync(path.join(repoRoot, dir, f), 'utf8');
      if (!expected.includes(': unknown key')) continue;
      out.push(path.join(dir, f.replace(/\.(expected|errors)$/, '.yaml')));
    }
  }
  return out;
}

test('every golden config refused for an unknown key is refused by the schema', () => {
  const validate = validator();
  const files = goldensWithUnknownKeys();
  assert.ok(files.length >= 8, `only ${files.length} goldens with an unknown key found`);
  for (const f of files) {
    const doc = yamlOf(fs.readFileSync(path.join(repoRoot, f), 'utf8'));
    assert.equal(validate(doc), false, `${f}: the server refuses an unknown key the schema accepts`);
  }
});

// Mistakes of shape, one or more per kind, across sections: each refused by the schema as by the
// server (which the golden .expected files hold).
const SHAPE_MISTAKES = [
  ['unknown top-level key', 'limtis: {max_rows: 10}\n'],
  ['misplaced tools', 'tools: {a: {}}\n'],
  ['retired toolsets', 'toolsets: {docs: [a]}\n'],
  ['unknown server key', 'server: {colour: blue}\n'],
  ['server.workers out of range', 'server: {workers: 0}\n'],
  ['server.self_check not a choice', 'server: {self_check: refuze}\n'],
  ['limits.max_rows wrong type', 'limits: {max_rows: lots}\n'],
  ['limits.timeout_ms below range', 'limits: {timeout_ms: 5}\n'],
  ['version 2', 'version: 2\n'],
  ['http unknown key', 'http: {max_conections: 3}\n'],
  ['http.tls without key_file', 'http: {tls: {cert_file: /c.pem}}\n'],
  ['http.clients entry unknown key', 'http: {clients: [{name: a, key_sha256: ' + 'ab'.repeat(32) + ', scope: "*", rate: 3}]}\n'],
  ['http.clients key_sha256 not hex', 'http: {clients: [{name: a, key_sha256: xyz, scope: "*"}]}\n'],
  ['http.metrics.access not a choice', 'http: {metrics: {access: anyone}}\n'],
  ['audit unknown key', 'audit: {file: /tmp/a}\n'],
  ['embedding.provider not a choice', 'embedding: {provider: openia}\n'],
  ['postgres unknown key', 'postgres: {tool: {}}\n'],
  ['postgres tool without statement', 'postgres: {tools: {t: {description: d}}}\n'],
  ['mysql pool size out of range', 'mysql: {pool: {size: 1000}}\n'],
  ['mongodb target without collection', 'mongodb: {targets: {t: {projection: [a]}}}\n'],
  ['dynamodb key type not a choice',
    'dynamodb: {targets: {t: {table: tbl, description: d, partition_key: {name: id, type: X}}}}\n'],
];

for (const [what, text] of SHAPE_MISTAKES) {
  test(`the schema and the server both refuse: ${what}`, () => {
    const validate = validator();
    assert.equal(validate(yamlOf(text)), false, `the schema accepts ${JSON.stringify(text)}`);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdb-config-schema-'));
    const file = path.join(tmp, 'bad.yaml');
    fs.writeFileSync(file, text);
    const r = run(['check-config', '--config', file]);
    fs.rmSync(tmp, { recursive: true, force: true });
    assert.equal(r.status, 3, `check-config accepts ${JSON.stringify(text)}\n${r.stderr}`);
  });
}
