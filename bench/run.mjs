// The side-by-side benchmark driver (called by bench/run.sh once the build, the peers, the servers
// and the demo data are ready). Every server is driven by the same native client
// (mcpdb-loadgen), against the same databases, with the same query; each figure is repeated and
// reported as min/median/max, and each peer as a ratio to mcp-dbserver from this same run.
// Writes bench/results/latest.{json,md,png}. Every run is bounded in count and time.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const BENCH = path.dirname(new URL(import.meta.url).pathname);
const ROOT = path.dirname(BENCH);
const BUILD = process.env.BENCH_BUILD_DIR || path.join(ROOT, "build/release");
const QUICK = process.env.BENCH_QUICK === "1"; // short runs while developing the harness
const OUT = process.env.BENCH_OUT_DIR || path.join(BENCH, "results");
const OUT_NAME = process.env.BENCH_OUT_NAME || "latest";
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), "mcpdb-bench-"));
const NM = path.join(BENCH, "node_modules");

const LOADGEN = path.join(BUILD, "bench/mcpdb-loadgen");
const ECHO = path.join(BUILD, "bench/mcpdb-echo-server");
const FLOOR = path.join(BUILD, "bench/mcpdb-pgfloor");
const OURS = path.join(BUILD, "src/mcp-dbserver");

const REPS = QUICK ? 1 : Number(process.env.BENCH_REPS || 3);
const LOAD_SECONDS = QUICK ? 1.5 : Number(process.env.BENCH_LOAD_SECONDS || 2);
const CONCURRENCY = [1, 8, 64];
const DOC_ID = "doc-01";
const SQL_TEMPLATE = "SELECT id, title, body, category, tags, published FROM demo.documents WHERE id = $1";
const SQL_LITERAL = SQL_TEMPLATE.replace("$1", `'${DOC_ID}'`);
const EXPECT = "Reading a query plan"; // doc-01's title: every answer must contain it
const SEMANTIC_QUERY = "how do I find out why a SQL query is slow";

const env = process.env;
// BENCH_SECTIONS=protocol (comma-separated: ceiling, floor, postgres, http, protocol, mongodb,
// semantic, mysql) runs only those sections, e.g. while measuring one of them; default: all.
// BENCH_OUT_NAME=mysql writes mysql.{json,md} instead of latest.* (a one-section run beside the
// full one).
const SECTIONS = env.BENCH_SECTIONS ? new Set(env.BENCH_SECTIONS.split(",").map((x) => x.trim())) : null;
const want = (section) => !SECTIONS || SECTIONS.has(section);
const LEGACY_VERSION = "2025-11-25";
const MODERN_VERSION = "2026-07-28";
for (const v of ["POSTGRES_DSN", "MONGODB_URI", "MONGODB_DATABASE"]) {
  if (!env[v]) throw new Error(`${v} is not set (eval "$(scripts/servers.sh env)")`);
}
const pgUrl = new URL(env.POSTGRES_DSN);
const pgEnv = {
  BENCH_PG_HOST: pgUrl.hostname,
  BENCH_PG_PORT: pgUrl.port || "5432",
  BENCH_PG_DATABASE: pgUrl.pathname.slice(1),
  BENCH_PG_USER: decodeURIComponent(pgUrl.username),
  BENCH_PG_PASSWORD: decodeURIComponent(pgUrl.password),
};
const pgDsnNoTls = env.POSTGRES_DSN + (env.POSTGRES_DSN.includes("?") ? "&" : "?") + "sslmode=disable";

// Engines are enabled by environment: each server sees only what its comparison needs.
function baseEnv(extra) {
  const e = { PATH: env.PATH, HOME: env.HOME || "/tmp", LANG: "C.UTF-8", MCP_CATALOG_PATH: WORK, ...extra };
  return e;
}
const oursPgEnv = baseEnv({ POSTGRES_DSN: env.POSTGRES_DSN, MCPDB_LOG_LEVEL: "warn", MCPDB_EMBED_MODEL_DIR: env.MCPDB_EMBED_MODEL_DIR });
const oursMongoEnv = baseEnv({
  MONGODB_URI: env.MONGODB_URI,
  MONGODB_DATABASE: env.MONGODB_DATABASE,
  MCPDB_LOG_LEVEL: "warn",
  MCPDB_EMBED_MODEL_DIR: env.MCPDB_EMBED_MODEL_DIR,
});

const log = (...a) => console.error("[bench]", ...a);
const errFile = (name) => path.join(WORK, `${name}.stderr`);

// One loadgen run; returns its JSON (or {failure}).
function loadgen(args, cmd, runEnv, label, timeoutS = 120) {
  const full = [...args, "--label", label, "--server-stderr", errFile(label.replace(/[^A-Za-z0-9_.-]/g, "_"))];
  if (cmd) full.push("--", ...cmd);
  const r = spawnSync(LOADGEN, full, { env: runEnv, encoding: "utf8", timeout: timeoutS * 1000, maxBuffer: 64 << 20 });
  const line = (r.stdout || "").trim().split("\n").pop();
  try {
    return JSON.parse(line);
  } catch {
    return { label, failure: `loadgen exited ${r.status ?? r.signal}: ${(r.stderr || "").slice(0, 300)}` };
  }
}

const median = (xs) => {
  const s = xs.filter((x) => typeof x === "number" && isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mmm = (xs) => {
  const s = xs.filter((x) => typeof x === "number" && isFinite(x));
  return s.length ? { min: Math.min(...s), median: median(s), max: Math.max(...s), n: s.length } : null;
};

// ---- the servers ----------------------------------------------------------------------------
// Below the ephemeral range (32768+), where a connect to a not-yet-listening port can self-connect.
let port = 29400;
const nextPort = () => ++port;
const toolboxBin = path.join(NM, "@toolbox-sdk/server-linux-x64/bin/toolbox");
const toolboxYaml = path.join(BENCH, "config/toolbox-tools.yaml");

const PG = [
  {
    id: "mcp-dbserver",
    name: "mcp-dbserver (C++)",
    cmd: [OURS, "serve"],
    env: oursPgEnv,
    call: { tool: "get_document", args: { id: DOC_ID } },
  },
  {
    id: "server-postgres",
    name: "@modelcontextprotocol/server-postgres 0.6.2",
    cmd: ["node", path.join(NM, "@modelcontextprotocol/server-postgres/dist/index.js"), env.POSTGRES_DSN],
    env: baseEnv({}),
    call: { tool: "query", args: { sql: SQL_LITERAL } },
  },
  {
    id: "toolbox",
    name: "Google MCP Toolbox 1.12.0 (Go)",
    cmd: [toolboxBin, "--config", toolboxYaml, "--stdio", "--disable-version-check", "--log-level", "WARN"],
    env: baseEnv(pgEnv),
    call: { tool: "get_document", args: { id: DOC_ID } },
  },
  {
    id: "dbhub",
    name: "DBHub 1.4.0",
    cmd: ["node", path.join(NM, "@bytebase/dbhub/dist/index.js"), "--dsn", pgDsnNoTls],
    env: baseEnv({}),
    call: { tool: "execute_sql", args: { sql: SQL_LITERAL } },
  },
];

const MONGO = (oid) => [
  {
    id: "mcp-dbserver",
    name: "mcp-dbserver (C++)",
    cmd: [OURS, "serve"],
    env: oursMongoEnv,
    call: { tool: "get_mongodb_document", args: { target: "documents", id: oid } },
  },
  {
    id: "mongodb-mcp-server",
    name: "mongodb-mcp-server 3.0.4",
    cmd: [
      "node",
      path.join(NM, "mongodb-mcp-server/dist/esm/index.js"),
      "--connectionString",
      env.MONGODB_URI,
      "--readOnly",
      "--telemetry",
      "disabled",
    ],
    env: baseEnv({ MDB_MCP_TELEMETRY: "disabled" }),
    call: {
      tool: "find",
      args: {
        connectionId: "preconfigured",
        database: env.MONGODB_DATABASE,
        collection: "documents",
        filter: { _id: { $oid: oid } },
        projection: { embedding: 0 },
        limit: 1,
      },
    },
  },
];

// HTTP servers: started by loadgen itself (so it knows the PID for RSS).
function httpServers() {
  const list = [];
  {
    const p = nextPort();
    list.push({
      id: "mcp-dbserver",
      name: "mcp-dbserver (C++)",
      url: `http://127.0.0.1:${p}/mcp`,
      cmd: [OURS, "serve", "--config", oursHttpConfig, "--http", `127.0.0.1:${p}`],
      env: oursPgEnv,
      bearer: oursHttpKey,
      call: PG[0].call,
    });
  }
  {
    const p = nextPort();
    list.push({
      id: "toolbox",
      name: PG[2].name,
      url: `http://127.0.0.1:${p}/mcp`,
      cmd: [toolboxBin, "--config", toolboxYaml, "--address", "127.0.0.1", "--port", String(p), "--disable-version-check", "--log-level", "WARN"],
      env: PG[2].env,
      call: PG[2].call,
    });
  }
  {
    const p = nextPort();
    list.push({
      id: "dbhub",
      name: PG[3].name,
      url: `http://127.0.0.1:${p}/mcp`,
      cmd: [...PG[3].cmd, "--transport=http", "--host=127.0.0.1", `--port=${p}`],
      env: PG[3].env,
      call: PG[3].call,
    });
  }
  return list;
}

// mcp-dbserver over HTTP needs an API key (auth is on by default): one made for this run,
// with a rate limit high enough not to be what is measured.
let oursHttpConfig = "";
let oursHttpKey = "";
function prepareOursHttp() {
  const out = execFileSync(OURS, ["keys", "new", "--name", "bench", "--scope", "postgres", "--rate", "1000000", "--burst", "1000000", "--max-concurrent", "1024"], {
    encoding: "utf8",
    env: oursPgEnv,
  });
  const key = out.match(/\b(mcpdb_[A-Za-z0-9_-]+)/) || out.match(/key[^:\n]*:\s*(\S+)/i);
  const hash = out.match(/key_sha256:\s*"?([0-9a-f]{64})/);
  if (!key || !hash) throw new Error("could not read `mcp-dbserver keys new` output");
  oursHttpKey = key[1];
  oursHttpConfig = path.join(WORK, "mcp-dbserver-http.yaml");
  fs.writeFileSync(
    oursHttpConfig,
    `version: 1
postgres:
  tools:
    get_document:
      description: Returns one demo document by its id.
      statement: ${SQL_TEMPLATE}
      parameters:
        - {name: id, type: string, description: The document id, max_length: 64}
http:
  max_concurrent_calls: 1024
  rate_limit: {rate: 1000000, burst: 1000000}
  clients:
    - {name: bench, key_sha256: "${hash[1]}", scope: [postgres], rate_limit: {rate: 1000000, burst: 1000000}, max_concurrent_calls: 1024}
`,
  );
}

// ---- measurements -----------------------------------------------------------------------------
function callArgs(s) {
  return ["--tool", s.call.tool, "--args", JSON.stringify(s.call.args), "--expect", s.expect || EXPECT];
}

function coldStart(s, transport) {
  const ours = s.id === "mcp-dbserver";
  const repeat = QUICK ? 3 : ours ? 30 : 5;
  const args = ["--mode", "cold", "--repeat", String(repeat), "--settle-ms", "300", "--max-seconds", "60"];
  if (transport === "http") args.push("--url", s.url);
  if (s.bearer) args.push("--bearer", s.bearer);
  const r = loadgen(args, s.cmd, s.env, `${s.id}-${transport}-cold`, 150);
  return r;
}

function loadRuns(s, transport, method, concurrency, extra = [], reps = REPS) {
  const ours = s.id === "mcp-dbserver";
  const runs = [];
  for (let i = 0; i < reps; ++i) {
    const n = ours ? 200000 : 50000;
    const args = [
      "--method", method,
      "--requests", String(n),
      "--concurrency", String(concurrency),
      "--warmup", String(20 + concurrency * 2),
      "--max-seconds", String(method === "tools/list" ? Math.min(LOAD_SECONDS, 1.5) : LOAD_SECONDS),
      "--settle-ms", "300",
      ...extra,
    ];
    if (transport === "http") args.push("--url", s.url);
    if (s.bearer) args.push("--bearer", s.bearer);
    runs.push(loadgen(args, s.cmd, s.env, `${s.id}-${transport}-${method}-c${concurrency}-r${i}`));
  }
  return summarizeRuns(runs);
}

function summarizeRuns(runs) {
  const ok = runs.filter((r) => r.result && !r.result.failure && r.result.completed > 0);
  const res = (f) => mmm(ok.map((r) => f(r)));
  return {
    runs: runs.length,
    ok_runs: ok.length,
    failures: runs.filter((r) => !ok.includes(r)).map((r) => r.failure || r.result?.failure || "no result"),
    errors: ok.reduce((a, r) => a + r.result.errors, 0),
    first_error: ok.map((r) => r.result.first_error).find(Boolean) || null,
    expect_ok: ok.length ? ok.every((r) => r.result.expect_ok !== false) : null,
    completed: ok.reduce((a, r) => a + r.result.completed, 0),
    p50_us: res((r) => r.result.latency_us.p50),
    p90_us: res((r) => r.result.latency_us.p90),
    p99_us: res((r) => r.result.latency_us.p99),
    max_us: res((r) => r.result.latency_us.max),
    throughput_rps: res((r) => r.result.throughput_rps),
    rss_idle_kb: res((r) => r.rss_idle?.rss_kb),
    rss_loaded_kb: res((r) => r.rss_loaded?.rss_kb),
    hwm_kb: res((r) => r.rss_loaded?.hwm_kb),
    processes: ok[0]?.rss_idle?.processes ?? null,
    sample_response: ok[0]?.result.sample_response?.slice(0, 300) ?? null,
  };
}

// One mcpdb-pgfloor run (libpq directly, same SQL and role); every call must return doc-01's row.
function pgfloor(args, timeoutS = 90) {
  const r = spawnSync(FLOOR, ["--sql", SQL_TEMPLATE, "--param", DOC_ID, "--expect-rows", "1", ...args], {
    env: baseEnv({ POSTGRES_DSN: env.POSTGRES_DSN }),
    encoding: "utf8",
    timeout: timeoutS * 1000,
  });
  try {
    return JSON.parse(r.stdout.trim());
  } catch {
    return { failure: (r.stderr || "").slice(0, 300) };
  }
}

// The floor at concurrency 1: every shape waiting in poll() (keys bare, txn, pipeline, prepared),
// then the prepared shape spinning on the socket instead (key prepared_busy); each shape's "wait"
// says which.
function floor() {
  const common = ["--requests", QUICK ? "2000" : "20000", "--warmup", "500", "--max-seconds", "10"];
  const shapes = ["bare", "txn", "pipeline", "prepared"].flatMap((s) => ["--shape", s]);
  const out = pgfloor([...common, ...shapes]);
  const busy = pgfloor([...common, "--shape", "prepared", "--busy-wait"]);
  if (!out.shapes) return out;
  delete out.wait; // per shape from here on
  if (busy.shapes) Object.assign(out.shapes, busy.shapes);
  else out.busy_failure = busy.failure;
  return out;
}

// What PostgreSQL itself serves on this machine with no MCP server in between: the prepared shape
// from 8 and 64 threads, one connection each, bounded in time (the count is only a backstop).
function dbCeiling() {
  const seconds = QUICK ? 1 : 3;
  const out = { seconds };
  for (const t of [8, 64]) {
    out[`t${t}`] = pgfloor(["--shape", "prepared", "--threads", String(t), "--requests", "10000000", "--warmup", String(t * 20), "--max-seconds", String(seconds)], seconds + 60);
  }
  return out;
}

// Added latency over libpq, measured in interleaved pairs: a bare PQexecParams run, then
// mcp-dbserver's get_document at c=1 over stdio, five times. On this kind of VM a single-threaded
// client's latency swings several-fold with how idle the cores are, so one floor figure set against
// one server figure from another minute of the run can say almost anything; the median of the
// paired differences is the figure the target is judged on.
function addedLatencyPairs() {
  const pairs = [];
  for (let i = 0; i < (QUICK ? 2 : 5); ++i) {
    const fl = pgfloor(["--shape", "bare", "--requests", QUICK ? "1000" : "4000", "--warmup", "300", "--max-seconds", "5"]);
    const ours = loadgen(
      ["--method", "tools/call", ...callArgs(PG[0]), "--requests", "200000", "--concurrency", "1", "--warmup", "50", "--max-seconds", "2", "--settle-ms", "300"],
      PG[0].cmd,
      PG[0].env,
      `pair-${i}`,
    );
    const floor50 = fl.shapes?.bare?.latency_us?.p50;
    const ours50 = ours.result?.errors === 0 ? ours.result?.latency_us?.p50 : undefined;
    if (typeof floor50 === "number" && typeof ours50 === "number") pairs.push({ floor_p50_us: floor50, ours_p50_us: ours50, added_us: ours50 - floor50 });
    else pairs.push({ failure: fl.failure || ours.failure || ours.result?.first_error || "no figure" });
  }
  const ok = pairs.filter((x) => typeof x.added_us === "number");
  return { pairs, added_us: mmm(ok.map((x) => x.added_us)), floor_p50_us: mmm(ok.map((x) => x.floor_p50_us)), ours_p50_us: mmm(ok.map((x) => x.ours_p50_us)) };
}

// The ObjectId of doc-01 in MongoDB, asked through mcp-dbserver's own list tool.
function mongoObjectId() {
  const dump = path.join(WORK, "mongo-list.json");
  loadgen(
    ["--tool", "list_mongodb_documents", "--args", JSON.stringify({ target: "documents", limit: 50 }), "--requests", "1", "--warmup", "0", "--settle-ms", "0", "--dump", dump],
    [OURS, "serve"],
    oursMongoEnv,
    "mongo-oid",
  );
  const text = fs.existsSync(dump) ? fs.readFileSync(dump, "utf8") : "";
  const msg = JSON.parse(text || "{}");
  const docs = msg.result?.structuredContent?.documents || msg.result?.structuredContent?.items || [];
  for (const d of docs) {
    if (d.doc_id === DOC_ID) return d._id?.$oid || d._id || d.id;
  }
  const m = text.match(/"_id":\{"\$oid":"([0-9a-f]{24})"\}[^{}]*?"doc_id":"doc-01"/) || text.match(/([0-9a-f]{24})[^{}]{0,400}doc-01/);
  return m ? m[1] : null;
}

// ---- 2026-07-28 beside 2025-11-25 --------------------------------------------------------------
// mcp-dbserver's get_document at both protocol versions, over stdio and HTTP at c=1 and c=8, the
// runs interleaved (legacy, modern, legacy, modern, ...) so machine noise falls on both alike; and
// every peer asked once with a 2026-07-28 server/discover: the peers that answer it are measured
// the same way. The config is the built-in PostgreSQL section with self_check off (over HTTP: no
// auth, a rate limit that is not what is measured), so the two versions differ only in protocol.
const PROTOCOL_C = [1, 8];

function protocolConfigs() {
  const section = (engine) => fs.readFileSync(path.join(ROOT, `src/engines/${engine}/default_section.yaml`), "utf8");
  const stdioCfg = path.join(WORK, "protocol-stdio.yaml");
  const httpCfg = path.join(WORK, "protocol-http.yaml");
  const mongoCfg = path.join(WORK, "protocol-mongodb.yaml");
  fs.writeFileSync(stdioCfg, `server: {self_check: off}\n${section("postgres")}`);
  fs.writeFileSync(httpCfg, `server: {self_check: off}\n${section("postgres")}http: {auth: none, max_concurrent_calls: 1024, rate_limit: {rate: 1000000, burst: 1000000}}\n`);
  fs.writeFileSync(mongoCfg, `server: {self_check: off}\n${section("mongodb")}`);
  return { stdioCfg, httpCfg, mongoCfg };
}

// The servers of this section, by group (PostgreSQL over stdio and HTTP, MongoDB over stdio): ours
// and every peer of the group's tables above.
function protocolServers(oid) {
  const { stdioCfg, httpCfg, mongoCfg } = protocolConfigs();
  const ours = { id: "mcp-dbserver", name: "mcp-dbserver (C++)", env: oursPgEnv, call: PG[0].call };
  const stdio = [{ ...ours, cmd: [OURS, "serve", "--config", stdioCfg] }, ...PG.slice(1)];
  const http = httpServers().map((s) => {
    if (s.id !== "mcp-dbserver") return s;
    const p = new URL(s.url).port;
    return { ...ours, url: s.url, cmd: [OURS, "serve", "--config", httpCfg, "--http", `127.0.0.1:${p}`] };
  });
  const mongodb = MONGO(oid || "000000000000000000000000").map((s) => (s.id === "mcp-dbserver" ? { ...s, cmd: [OURS, "serve", "--config", mongoCfg] } : s));
  return { stdio, http, mongodb };
}
const GROUP_TRANSPORT = { stdio: "stdio", http: "http", mongodb: "stdio" };

// One cold start with a 2026-07-28 server/discover: does this server speak the version?
function probeModern(s, transport) {
  const args = ["--mode", "cold", "--repeat", "1", "--settle-ms", "0", "--max-seconds", "30", "--ready-timeout-ms", "15000", "--protocol-version", MODERN_VERSION];
  if (transport === "http") args.push("--url", s.url);
  if (s.bearer) args.push("--bearer", s.bearer);
  const r = loadgen(args, s.cmd, s.env, `${s.id}-${transport}-probe-modern`, 60);
  const speaks = (r.runs ?? 0) > 0;
  return { name: s.name, speaks, answer_us: speaks ? r.cold_start_us?.p50 : null, failure: speaks ? null : (r.failures?.[0] || r.failure || "no answer").slice(0, 300) };
}

function protocolSection() {
  const out = { legacy_version: LEGACY_VERSION, modern_version: MODERN_VERSION, concurrency: PROTOCOL_C, probe: { stdio: {}, http: {}, mongodb: {} }, stdio: {}, http: {}, mongodb: {} };
  // The load client's own ceiling at both versions (the instant echo server), one run each.
  out.ceiling = {};
  for (const transport of ["stdio", "http"]) {
    const echo = { id: "echo", cmd: transport === "stdio" ? [ECHO] : [ECHO, "--http", String(nextPort())], env: baseEnv({}), call: { tool: "echo", args: {} }, expect: "echo" };
    if (transport === "http") echo.url = `http://127.0.0.1:${port}/mcp`;
    out.ceiling[transport] = {};
    for (const c of PROTOCOL_C) {
      for (const [era, version] of [["legacy", LEGACY_VERSION], ["modern", MODERN_VERSION]]) {
        const args = ["--method", "tools/call", ...callArgs(echo), "--requests", "1000000", "--concurrency", String(c), "--warmup", String(20 + c * 2), "--max-seconds", String(Math.min(LOAD_SECONDS, 1.5)), "--settle-ms", "100", "--protocol-version", version];
        if (transport === "http") args.push("--url", echo.url);
        out.ceiling[transport][`${era}_c${c}`] = summarizeRuns([loadgen(args, echo.cmd, echo.env, `echo-${transport}-${era}-c${c}`)]);
      }
    }
  }
  const oid = results.mongodb?.doc_oid || mongoObjectId();
  const servers = protocolServers(oid);
  for (const group of ["stdio", "http", "mongodb"]) {
    const transport = GROUP_TRANSPORT[group];
    if (group === "mongodb" && !oid) {
      out.mongodb.failure = "could not find doc-01's ObjectId (is the demo data loaded?)";
      continue;
    }
    const list = servers[group];
    for (const s of list) {
      if (s.id === "mcp-dbserver") continue;
      log(`  ${s.id}: does it speak ${MODERN_VERSION}? (${group})`);
      out.probe[group][s.id] = probeModern(s, transport);
    }
    const measured = list.filter((s) => s.id === "mcp-dbserver" || out.probe[group][s.id]?.speaks);
    for (const s of measured) {
      const ours = s.id === "mcp-dbserver";
      const raw = {};
      const r = (out[group][s.id] = { name: s.name });
      for (const [era, version] of [["legacy", LEGACY_VERSION], ["modern", MODERN_VERSION]]) {
        log(`  ${s.id}: cold start at ${version} (${group})`);
        const args = ["--mode", "cold", "--repeat", String(QUICK ? 3 : ours ? 20 : 5), "--settle-ms", "300", "--max-seconds", "60", "--protocol-version", version];
        if (transport === "http") args.push("--url", s.url);
        if (s.bearer) args.push("--bearer", s.bearer);
        r[`${era}_cold`] = loadgen(args, s.cmd, s.env, `${s.id}-${group}-${era}-cold`, 150);
      }
      for (let i = 0; i < REPS; ++i) {
        for (const c of PROTOCOL_C) {
          for (const [era, version] of [["legacy", LEGACY_VERSION], ["modern", MODERN_VERSION]]) {
            log(`  ${s.id}: tools/call c=${c} at ${version} (${group}, rep ${i + 1}/${REPS})`);
            const args = [
              "--method", "tools/call",
              ...callArgs(s),
              "--requests", String(ours ? 200000 : 50000),
              "--concurrency", String(c),
              "--warmup", String(20 + c * 2),
              "--max-seconds", String(LOAD_SECONDS),
              "--settle-ms", "300",
              "--protocol-version", version,
            ];
            if (transport === "http") args.push("--url", s.url);
            if (s.bearer) args.push("--bearer", s.bearer);
            (raw[`${era}_c${c}`] ??= []).push(loadgen(args, s.cmd, s.env, `${s.id}-${group}-${era}-c${c}-r${i}`));
          }
        }
      }
      for (const [k, runs] of Object.entries(raw)) {
        r[k] = summarizeRuns(runs);
        // The rep-by-rep figures, so the interleaving can be read back pair by pair.
        r[k].per_run = runs.map((x) => ({ rps: x.result?.throughput_rps ?? null, p50_us: x.result?.latency_us?.p50 ?? null, p99_us: x.result?.latency_us?.p99 ?? null, errors: x.result?.errors ?? null }));
      }
    }
  }
  return out;
}


// ---- MySQL/MariaDB: one document by id ------------------------------------------------------
// The same SELECT on the same MariaDB through mcp-dbserver (built-in get_document_mysql, the
// built-in MySQL section with self_check off), Toolbox (a mysql-sql tool with the same statement,
// bound as ?) and DBHub (execute_sql with the same text and the literal id: it takes SQL from the
// client). stdio and HTTP, c=1 and c=8, the servers' runs interleaved rep by rep so machine noise
// falls on all alike. Every answer must contain doc-01's title.
const MYSQL_C = [1, 8];
const MYSQL_SQL = "SELECT id, title, body, category, tags, published FROM documents WHERE id = ?";
const MYSQL_SQL_LITERAL = MYSQL_SQL.replace("?", `'${DOC_ID}'`);

function mysqlServers() {
  const u = new URL(env.MYSQL_DSN);
  const myEnv = {
    BENCH_MY_HOST: u.hostname,
    BENCH_MY_PORT: u.port || "3306",
    BENCH_MY_DATABASE: u.pathname.slice(1),
    BENCH_MY_USER: decodeURIComponent(u.username),
    BENCH_MY_PASSWORD: decodeURIComponent(u.password),
  };
  const section = fs.readFileSync(path.join(ROOT, "src/engines/mysql/default_section.yaml"), "utf8");
  const stdioCfg = path.join(WORK, "mysql-stdio.yaml");
  const httpCfg = path.join(WORK, "mysql-http.yaml");
  fs.writeFileSync(stdioCfg, `server: {self_check: off}\n${section}`);
  fs.writeFileSync(httpCfg, `server: {self_check: off}\n${section}http: {auth: none, max_concurrent_calls: 1024, rate_limit: {rate: 1000000, burst: 1000000}}\n`);
  // Toolbox's mysql source speaks the plain protocol (no TLS); mcp-dbserver's loopback default,
  // ssl-mode PREFERRED, takes the TLS the local server offers (about 20 % of a call at c=1, both
  // ends on this machine). Measured like for like: ours without TLS too, as the report says.
  const plainDsn = env.MYSQL_DSN + (env.MYSQL_DSN.includes("?") ? "&" : "?") + "ssl-mode=DISABLED";
  const oursEnv = baseEnv({ MYSQL_DSN: plainDsn, MCPDB_LOG_LEVEL: "warn" });
  const yaml = path.join(BENCH, "config/toolbox-mysql.yaml");
  const dbhub = ["node", path.join(NM, "@bytebase/dbhub/dist/index.js"), "--dsn", env.MYSQL_DSN];
  const names = { ours: "mcp-dbserver (C++)", toolbox: PG[2].name, dbhub: PG[3].name };
  const oursCall = { tool: "get_document_mysql", args: { id: DOC_ID } };
  const toolboxCall = { tool: "get_document_mysql", args: { id: DOC_ID } };
  const dbhubCall = { tool: "execute_sql", args: { sql: MYSQL_SQL_LITERAL } };
  const stdio = [
    { id: "mcp-dbserver", name: names.ours, cmd: [OURS, "serve", "--config", stdioCfg], env: oursEnv, call: oursCall },
    { id: "toolbox", name: names.toolbox, cmd: [toolboxBin, "--config", yaml, "--stdio", "--disable-version-check", "--log-level", "WARN"], env: baseEnv(myEnv), call: toolboxCall },
    { id: "dbhub", name: names.dbhub, cmd: dbhub, env: baseEnv({}), call: dbhubCall },
  ];
  const [po, pt, pd] = [nextPort(), nextPort(), nextPort()];
  const http = [
    { ...stdio[0], url: `http://127.0.0.1:${po}/mcp`, cmd: [OURS, "serve", "--config", httpCfg, "--http", `127.0.0.1:${po}`] },
    { ...stdio[1], url: `http://127.0.0.1:${pt}/mcp`, cmd: [toolboxBin, "--config", yaml, "--address", "127.0.0.1", "--port", String(pt), "--disable-version-check", "--log-level", "WARN"] },
    { ...stdio[2], url: `http://127.0.0.1:${pd}/mcp`, cmd: [...dbhub, "--transport=http", "--host=127.0.0.1", `--port=${pd}`] },
  ];
  return { stdio, http };
}

function mysqlSection() {
  if (!env.MYSQL_DSN) return { failure: "MYSQL_DSN is not set" };
  const out = { sql: MYSQL_SQL, doc_id: DOC_ID, concurrency: MYSQL_C, stdio: {}, http: {} };
  const servers = mysqlServers();
  for (const transport of ["stdio", "http"]) {
    const list = servers[transport];
    const raw = {};
    for (const s of list) {
      const r = (out[transport][s.id] = { name: s.name, call: s.call.tool });
      log(`  ${s.id}: cold start (${transport})`);
      r.cold = coldStart(s, transport);
    }
    for (let i = 0; i < REPS; ++i) {
      for (const c of MYSQL_C) {
        for (const s of list) {
          log(`  ${s.id}: tools/call c=${c} (${transport}, rep ${i + 1}/${REPS})`);
          const args = [
            "--method", "tools/call",
            ...callArgs(s),
            "--requests", String(s.id === "mcp-dbserver" ? 200000 : 50000),
            "--concurrency", String(c),
            "--warmup", String(20 + c * 2),
            "--max-seconds", String(LOAD_SECONDS),
            "--settle-ms", "300",
          ];
          if (transport === "http") args.push("--url", s.url);
          ((raw[s.id] ??= {})[`call_c${c}`] ??= []).push(loadgen(args, s.cmd, s.env, `mysql-${s.id}-${transport}-c${c}-r${i}`));
        }
      }
    }
    for (const [id, byKey] of Object.entries(raw)) {
      for (const [k, runs] of Object.entries(byKey)) out[transport][id][k] = summarizeRuns(runs);
    }
  }
  return out;
}

// ---- main -------------------------------------------------------------------------------------
const started = Date.now();
const machine = {
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model,
  mem_gb: Math.round(os.totalmem() / 2 ** 30),
  kernel: os.release(),
  node: process.version,
  load_before: os.loadavg(),
  date: new Date().toISOString(),
  quick: QUICK,
  reps: REPS,
  load_seconds: LOAD_SECONDS,
  sections: SECTIONS ? [...SECTIONS] : null,
  // How this run was started (the BENCH_* settings only: no DSN or secret is recorded).
  command: [
    'eval "$(bash scripts/servers.sh env)" &&',
    ...Object.keys(env).filter((k) => /^BENCH_[A-Z_]+$/.test(k)).sort().map((k) => `${k}=${env[k]}`),
    "node bench/run.mjs",
  ].join(" "),
};
const results = { machine, client_ceiling: {}, floor: null, db_ceiling: null, added_latency: null, postgres: {}, mongodb: {}, http: {}, semantic: {} };

if (want("ceiling")) {
  log("client ceiling against the instant echo server");
  for (const transport of ["stdio", "http"]) {
    const s = transport === "stdio" ? { id: "echo", cmd: [ECHO] } : { id: "echo", cmd: [ECHO, "--http", String(nextPort())] };
    if (transport === "http") s.url = `http://127.0.0.1:${port}/mcp`;
    s.call = { tool: "echo", args: {} };
    s.expect = "echo";
    s.env = baseEnv({});
    results.client_ceiling[transport] = {};
    for (const c of CONCURRENCY) {
      results.client_ceiling[transport][`c${c}`] = loadRuns({ ...s, id: "mcp-dbserver" }, transport, "tools/call", c, callArgs(s), 1);
    }
  }

  log("official Node SDK client against the same echo server");
  {
    const r = spawnSync("node", [path.join(BENCH, "sdk_ceiling.mjs"), ECHO, QUICK ? "2000" : "5000"], { encoding: "utf8", timeout: 90000 });
    try {
      results.client_ceiling.node_sdk = JSON.parse(r.stdout.trim());
    } catch {
      results.client_ceiling.node_sdk = { failure: (r.stderr || "").slice(0, 300) };
    }
  }
}

if (want("floor")) {
  log("libpq floor");
  results.floor = floor();
  log("database ceiling (libpq, prepared pipeline, 8 and 64 threads)");
  results.db_ceiling = dbCeiling();
  log("added latency over libpq: interleaved pairs");
  results.added_latency = addedLatencyPairs();
}

if (want("postgres")) {
  log("PostgreSQL over stdio");
  for (const s of PG) {
    const r = (results.postgres[s.id] = { name: s.name });
    log(`  ${s.id}: cold start`);
    r.cold = coldStart(s, "stdio");
    log(`  ${s.id}: tools/list`);
    r.tools_list = loadRuns(s, "stdio", "tools/list", 1, QUICK ? [] : []);
    for (const c of CONCURRENCY) {
      log(`  ${s.id}: tools/call c=${c}`);
      r[`call_c${c}`] = loadRuns(s, "stdio", "tools/call", c, callArgs(s));
    }
  }
}

if (want("http")) {
  log("PostgreSQL over Streamable HTTP");
  try {
    prepareOursHttp();
    for (const s of httpServers()) {
      const r = (results.http[s.id] = { name: s.name });
      log(`  ${s.id}: cold start (http)`);
      r.cold = coldStart(s, "http");
      for (const c of CONCURRENCY) {
        log(`  ${s.id}: tools/call c=${c} (http)`);
        r[`call_c${c}`] = loadRuns(s, "http", "tools/call", c, callArgs(s));
      }
    }
  } catch (e) {
    results.http.failure = String(e.message || e);
    log("  http skipped:", results.http.failure);
  }
}

if (want("mongodb")) {
  log("MongoDB over stdio");
  const oid = mongoObjectId();
  results.mongodb.doc_oid = oid;
  if (oid) {
    for (const s of MONGO(oid)) {
      const r = (results.mongodb[s.id] = { name: s.name });
      log(`  ${s.id}: cold start`);
      r.cold = coldStart(s, "stdio");
      r.tools_list = loadRuns(s, "stdio", "tools/list", 1);
      for (const c of CONCURRENCY) {
        log(`  ${s.id}: tools/call c=${c}`);
        r[`call_c${c}`] = loadRuns(s, "stdio", "tools/call", c, callArgs(s));
      }
    }
  } else {
    results.mongodb.failure = "could not find doc-01's ObjectId (is the demo data loaded?)";
  }
}

if (want("protocol")) {
  log(`protocol versions: ${LEGACY_VERSION} vs ${MODERN_VERSION}, interleaved`);
  const t = Date.now();
  results.protocol = protocolSection();
  results.protocol.duration_s = Math.round((Date.now() - t) / 1000);
}

if (want("semantic")) {
  log("semantic search end to end (mcp-dbserver only: no peer embeds locally)");
  const pgS = { id: "mcp-dbserver", cmd: [OURS, "serve"], env: oursPgEnv, call: { tool: "semantic_search_documents", args: { query: SEMANTIC_QUERY, k: 5 } }, expect: "doc-" };
  const mgS = { id: "mcp-dbserver", cmd: [OURS, "serve"], env: oursMongoEnv, call: { tool: "semantic_search_mongodb", args: { query: SEMANTIC_QUERY, k: 5 } }, expect: "doc-" };
  results.semantic.pgvector_c1 = loadRuns(pgS, "stdio", "tools/call", 1, callArgs(pgS));
  results.semantic.pgvector_c8 = loadRuns(pgS, "stdio", "tools/call", 8, callArgs(pgS));
  results.semantic.mongodb_c1 = loadRuns(mgS, "stdio", "tools/call", 1, callArgs(mgS));
  results.semantic.mongodb_c8 = loadRuns(mgS, "stdio", "tools/call", 8, callArgs(mgS));
}

if (want("mysql")) {
  log("MySQL/MariaDB: one document by id, stdio and HTTP");
  const t = Date.now();
  results.mysql = mysqlSection();
  results.mysql.duration_s = Math.round((Date.now() - t) / 1000);
}

machine.load_after = os.loadavg();
machine.duration_s = Math.round((Date.now() - started) / 1000);
fs.mkdirSync(OUT, { recursive: true });
const outJson = path.join(OUT, `${OUT_NAME}.json`);
fs.writeFileSync(outJson, JSON.stringify(results, null, 2) + "\n");
log(`raw results: ${outJson} (${machine.duration_s} s)`);
const report = spawnSync("node", [path.join(BENCH, "report.mjs"), outJson], { stdio: "inherit" });
fs.rmSync(WORK, { recursive: true, force: true });
process.exit(report.status ?? 1);
