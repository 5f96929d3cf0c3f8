#!/usr/bin/env bash
# No silent drift: the baseline and the current tree, built as Release servers and run interleaved
# on this machine, figure by figure, printed with the ratio HEAD / BASE. Comparing each change with
# its parent cannot see drift (every step "within noise", the sum not); comparing with the
# baseline of the committed run can.
#
#   bash bench/ab.sh [options] [BASE [HEAD]]
#
# BASE: a commit-ish; default: the commit that committed bench/results/latest.md. HEAD: a
# commit-ish; default: the working tree as it is (uncommitted changes included).
#
#   --pairs N        interleaved pairs per figure (default 3); the first of a pair alternates
#                    (BASE HEAD, HEAD BASE, ...) so a trend in the machine's load falls on both
#   --seconds S      length of each run (default 3, at least 2)
#   --http           also HTTP c=8 (one session per connection, no authentication)
#   --no-callgrind   skip the instructions per call (bench/instructions_per_call.sh), which runs
#                    by default when valgrind is installed (about a minute)
#   --base-bin PATH, --head-bin PATH
#                    an already built server to use instead of building that side
#   --dry-run        resolve the commits and print the plan; build and run nothing
#
# Figures, over stdio get_document at c=1 and c=8 (and HTTP c=8): throughput, p50 and p99 latency
# (the load client's, over the whole run); server CPU per call (user + system of every thread,
# /proc, over a window inside the run), context switches per call (voluntary + involuntary, every
# thread of the server), and the CPU of the PostgreSQL backends serving it per call. Each figure is
# the median of the pairs. Both builds run one config: BASE's own built-in PostgreSQL section (a
# later one may carry keys BASE refuses), self-check and model preload off.
#
# Builds: `git archive` of a commit into build/ab/<sha>/ and its release preset, the server target
# only (reused while build/ab/<sha> exists; ccache when installed); the working tree builds in
# build/release (server and mcpdb-loadgen; the load client is built once, from the working tree).
# Needs git, cmake, ninja, g++-12, node, psql, the local servers and the demo data (bash
# scripts/servers.sh start; the loader). Environment: AB_JOBS (build jobs, default 2), N1, N2,
# TRIES (passed to instructions_per_call.sh), POSTGRES_DSN (else read from scripts/servers.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib/server_cost.sh
source "$ROOT/bench/lib/server_cost.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "ab.sh: $1" >&2; exit "${2:-1}"; }
log() { echo "[ab] $*" >&2; }

PAIRS=3
SECS=3
HTTP=0
CALLGRIND=1
DRY=0
BASE_BIN=""
HEAD_BIN=""
positional=()
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --pairs) PAIRS="${2:-}"; shift 2 || die "--pairs needs a value" 2 ;;
    --seconds) SECS="${2:-}"; shift 2 || die "--seconds needs a value" 2 ;;
    --http) HTTP=1; shift ;;
    --no-callgrind) CALLGRIND=0; shift ;;
    --base-bin) BASE_BIN="${2:-}"; shift 2 || die "--base-bin needs a value" 2 ;;
    --head-bin) HEAD_BIN="${2:-}"; shift 2 || die "--head-bin needs a value" 2 ;;
    --dry-run) DRY=1; shift ;;
    --) shift; positional+=("$@"); break ;;
    -*) die "unknown option $1 (see --help)" 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
((${#positional[@]} <= 2)) || die "at most two commits, BASE and HEAD (see --help)" 2
[[ $PAIRS =~ ^[1-9][0-9]*$ && $PAIRS -le 50 ]] || die "--pairs must be 1..50" 2
[[ $SECS =~ ^[0-9]+$ && $SECS -ge 2 && $SECS -le 120 ]] || die "--seconds must be 2..120" 2
for tool in git awk; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || die "$ROOT is not a git checkout"

# resolve WHAT COMMITISH: the full sha of a commit, or a clear error.
resolve() {
  local sha
  sha=$(git -C "$ROOT" rev-parse --verify --quiet "$2^{commit}") ||
    die "$1 '$2' is not a commit in this repository" 2
  echo "$sha"
}
if ((${#positional[@]} >= 1)); then
  BASE_SHA=$(resolve BASE "${positional[0]}")
  base_why="given"
else
  BASE_SHA=$(baseline_commit "$ROOT")
  [[ -n $BASE_SHA ]] || die "no commit has bench/results/latest.md: give BASE" 2
  base_why="the commit of bench/results/latest.md"
fi
HEAD_SHA=""
if ((${#positional[@]} == 2)); then HEAD_SHA=$(resolve HEAD "${positional[1]}"); fi
git -C "$ROOT" cat-file -e "$BASE_SHA:src/engines/postgres/default_section.yaml" 2>/dev/null ||
  die "BASE ${BASE_SHA:0:12} has no src/engines/postgres/default_section.yaml to make the config from" 2

FIGURES=(stdio:1 stdio:8)
((HTTP)) && FIGURES+=(http:8)
if ((CALLGRIND)) && ! command -v valgrind >/dev/null; then
  log "valgrind is not installed: no instructions per call (apt install valgrind)"
  CALLGRIND=0
fi
LOADGEN="${BENCH_BUILD_DIR:-$ROOT/build/release}/bench/mcpdb-loadgen"
JOBS="${AB_JOBS:-2}"

# commit_binary SHA: where the release server of SHA is built.
commit_binary() { echo "$ROOT/build/ab/$1/build/release/src/mcp-dbserver"; }
head_label() {
  if [[ -n $HEAD_SHA ]]; then
    echo "${HEAD_SHA:0:12}"
  elif git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null; then
    echo "working tree ($(git -C "$ROOT" rev-parse --short=12 HEAD))"
  else
    echo "working tree ($(git -C "$ROOT" rev-parse --short=12 HEAD) + uncommitted changes)"
  fi
}
BASE_LABEL="${BASE_SHA:0:12}"
HEAD_LABEL=$(head_label)
# A binary given by path is named by its path (the commit then only names BASE's config).
if [[ -n $BASE_BIN ]]; then BASE_LABEL="$BASE_BIN (config of ${BASE_SHA:0:12})"; else BASE_BIN=$(commit_binary "$BASE_SHA"); fi
if [[ -n $HEAD_BIN ]]; then
  HEAD_LABEL=$HEAD_BIN
elif [[ -n $HEAD_SHA ]]; then
  HEAD_BIN=$(commit_binary "$HEAD_SHA")
else
  HEAD_BIN="$ROOT/build/release/src/mcp-dbserver"
fi

if ((DRY)); then
  state() { if [[ -x $1 ]]; then echo "built"; else echo "to build"; fi; }
  echo "BASE $BASE_SHA ($base_why): $BASE_BIN ($(state "$BASE_BIN"))"
  echo "HEAD $HEAD_LABEL: $HEAD_BIN ($(state "$HEAD_BIN"))"
  echo "load client: $LOADGEN ($(state "$LOADGEN"))"
  echo "config: BASE's src/engines/postgres/default_section.yaml, self_check off, preload off"
  echo "figures: ${FIGURES[*]} (transport:concurrency), $PAIRS interleaved pair(s) of ${SECS} s each;" \
    "about $(((PAIRS * ${#FIGURES[@]} + 1) * 2 * (SECS + 1))) s of runs"
  echo "callgrind: $( ((CALLGRIND)) && echo yes || echo no)"
  exit 0
fi

# ---- tools, servers, builds -------------------------------------------------------------------
for tool in node psql; do command -v "$tool" >/dev/null || die "$tool is not installed (bash scripts/install.sh)"; done
bench_env "$ROOT" || exit 1
psql "$POSTGRES_DSN" -XAtqc 'SELECT 1' >/dev/null 2>&1 ||
  die "PostgreSQL does not answer at POSTGRES_DSN: bash scripts/servers.sh start"

if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  # Paths relative to the build directory, so build/ab/<sha> hits what another checkout of the
  # same commit compiled.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi

# build_tree DIR TARGET...: the release preset of the tree at DIR, only TARGETs.
build_tree() {
  local dir=$1 logf
  shift
  for tool in cmake ninja; do command -v "$tool" >/dev/null || die "$tool is not installed (bash scripts/install.sh)"; done
  mkdir -p "$dir/build"
  logf="$dir/build/ab-build.log"
  log "building $* in ${dir#"$ROOT"/} (log: ${logf#"$ROOT"/})"
  if ! (cd "$dir" && cmake --preset release && cmake --build --preset release -j "$JOBS" --target "$@") >"$logf" 2>&1; then
    tail -15 "$logf" >&2
    die "the build in $dir failed (see $logf)"
  fi
}

# build_commit SHA: SHA's tree in build/ab/SHA (extracted once), its server built.
build_commit() {
  local dir="$ROOT/build/ab/$1"
  if [[ ! -f $dir/.extracted ]]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    git -C "$ROOT" archive "$1" | tar -x -C "$dir" || die "could not extract $1 into $dir"
    touch "$dir/.extracted"
  fi
  # A commit's tree never changes: a server built from it once is reused as is.
  if [[ -x $(commit_binary "$1") ]]; then
    log "reusing the build of ${1:0:12} in ${dir#"$ROOT"/}"
    return
  fi
  build_tree "$dir" mcp-dbserver
}

head_targets=()
[[ -n ${BENCH_BUILD_DIR:-} ]] || head_targets+=(mcpdb-loadgen)
[[ $HEAD_BIN == "$ROOT/build/release/src/mcp-dbserver" && -z $HEAD_SHA ]] && head_targets+=(mcp-dbserver)
((${#head_targets[@]})) && build_tree "$ROOT" "${head_targets[@]}"
[[ $BASE_BIN == "$(commit_binary "$BASE_SHA")" ]] && build_commit "$BASE_SHA"
[[ -n $HEAD_SHA && $HEAD_BIN == "$(commit_binary "$HEAD_SHA")" ]] && build_commit "$HEAD_SHA"
for b in "$BASE_BIN" "$HEAD_BIN" "$LOADGEN"; do [[ -x $b ]] || die "missing $b"; done
"$LOADGEN" --hook /bin/true 2>&1 | grep -q 'unknown option --hook' &&
  die "$LOADGEN predates --hook: rebuild it (cmake --build --preset release --target mcpdb-loadgen)"

work=$(mktemp -d)
CUR_LG=""
cleanup() {
  local srv
  if [[ -n $CUR_LG ]]; then
    # The load client's server runs in a process group of its own: stop it too (over HTTP it
    # would not notice the client is gone).
    srv=$(pgrep -P "$CUR_LG" || true)
    kill "$CUR_LG" 2>/dev/null || true
    for p in $srv; do kill -- "-$p" 2>/dev/null || true; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bench_config "$ROOT" "$BASE_SHA" >"$work/stdio.yaml"
bench_config "$ROOT" "$BASE_SHA" http >"$work/http.yaml"
for side in BASE HEAD; do
  bin=BASE_BIN
  [[ $side == HEAD ]] && bin=HEAD_BIN
  env -i PATH="$PATH" POSTGRES_DSN="$POSTGRES_DSN" "${!bin}" check-config --config "$work/http.yaml" \
    >"$work/check.log" 2>&1 || { tail -5 "$work/check.log" >&2; die "$side (${!bin}) refuses the config"; }
done

# ---- runs ---------------------------------------------------------------------------------------
free_port() {
  local p
  for ((;;)); do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# run_one SIDE BINARY TRANSPORT CONCURRENCY PAIR: one load run; appends its figures to $AB_RUNS
# (pair 0: a warm-up, not counted) and prints a progress line.
run_one() {
  local side=$1 bin=$2 transport=$3 c=$4 pair=$5 port rc
  local out="$work/out.json" err="$work/loadgen.log" server_log="$work/server.log"
  local args=(--method tools/call --tool get_document --args '{"id":"doc-01"}'
    --expect "Reading a query plan" --requests 10000000 --concurrency "$c"
    --warmup $((20 + 2 * c)) --max-seconds "$SECS" --settle-ms 300)
  local cmd=("$bin" serve --config "$work/stdio.yaml")
  if [[ $transport == http ]]; then
    port=$(free_port)
    args+=(--url "http://127.0.0.1:$port/mcp")
    cmd=("$bin" serve --config "$work/http.yaml" --http "127.0.0.1:$port")
  fi
  rm -f "$work/cost" "$err" "$server_log"
  # The hook samples the server and its backends at the edges of the measured phase.
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" POSTGRES_DSN="$POSTGRES_DSN" MCPDB_LOG_LEVEL=warn \
    MCPDB_COST_FILE="$work/cost" "$LOADGEN" "${args[@]}" --hook "$ROOT/bench/lib/cost_hook.sh" \
    --server-stderr "$server_log" -- "${cmd[@]}" >"$out" 2>"$err" &
  CUR_LG=$!
  rc=0
  wait "$CUR_LG" || rc=$?
  CUR_LG=""
  if ((rc != 0)) || [[ ! -s $out || ! -s $work/cost ]]; then
    # The server's own lines (its audit lines are JSON: left out), then the load client's.
    grep -v '^{' "$server_log" 2>/dev/null | tail -5 >&2
    tail -5 "$err" "$out" >&2 2>/dev/null
    die "$side ($bin) failed its $transport c=$c run (load client exit $rc)"
  fi
  node -e '
const fs = require("fs");
const [file, costFile, side, fig, pair] = process.argv.slice(1);
const run = JSON.parse(fs.readFileSync(file, "utf8").trim().split("\n").pop());
const r = run.result;
const k = Object.fromEntries(fs.readFileSync(costFile, "utf8").trim().split("\n").map((l) => l.split("=")));
const n = run.hook.calls;
const us = (t) => ((t / k.hz) * 1e6) / n;
const row = { side, fig, pair: +pair, rps: r.throughput_rps, p50: r.latency_us.p50, p99: r.latency_us.p99,
  errors: r.errors + (r.expect_ok === false ? 1 : 0), cpu: us(k.server_ticks), sw: k.server_switches / n,
  pg_cpu: +k.pg_backends > 0 ? us(k.pg_ticks) : null, pg_sw: +k.pg_backends > 0 ? k.pg_switches / n : null };
if (+pair > 0) fs.appendFileSync(process.env.AB_RUNS, JSON.stringify(row) + "\n");
const f = (v, d) => v.toLocaleString("en-US", { maximumFractionDigits: d });
console.error(`[ab] ${+pair > 0 ? `pair ${pair}` : "warm-up (not counted)"} ${fig} ${side}: ${f(row.rps, 0)} req/s, p50 ${f(row.p50, 0)} µs, p99 ${f(row.p99, 0)} µs, ` +
  `CPU ${f(row.cpu, 1)} µs/call, ${f(row.sw, 2)} switches/call` + (row.errors ? `, ${row.errors} error(s)` : ""));
' "$out" "$work/cost" "$side" "$transport c=$c" "$pair"
}

export AB_RUNS="$work/runs.jsonl"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
log "BASE $BASE_LABEL vs HEAD $HEAD_LABEL: $PAIRS pair(s) × ${#FIGURES[@]} figure(s) × ${SECS} s"
# A first run of each, not counted: the first run after a build or an idle spell starts on a cold
# machine (caches, CPU frequency, the VM's idle state) and would count against BASE alone.
for side in BASE HEAD; do
  bin=BASE_BIN
  [[ $side == HEAD ]] && bin=HEAD_BIN
  run_one "$side" "${!bin}" stdio 8 0
done
for ((pair = 1; pair <= PAIRS; pair++)); do
  for fig in "${FIGURES[@]}"; do
    order=(BASE HEAD)
    ((pair % 2 == 0)) && order=(HEAD BASE)
    for side in "${order[@]}"; do
      bin=BASE_BIN
      [[ $side == HEAD ]] && bin=HEAD_BIN
      run_one "$side" "${!bin}" "${fig%%:*}" "${fig##*:}" "$pair"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

instr_base=""
instr_head=""
if ((CALLGRIND)); then
  log "callgrind: instructions per call (bench/instructions_per_call.sh)"
  BASE="$BASE_SHA" BENCH_BUILD_DIR="$(dirname "$(dirname "$LOADGEN")")" \
    bash "$ROOT/bench/instructions_per_call.sh" "$BASE_BIN" "$HEAD_BIN" >"$work/instr.txt" ||
    die "bench/instructions_per_call.sh failed"
  instr_base=$(awk -v b="$BASE_BIN" '$1 == b {print $2; exit}' "$work/instr.txt")
  instr_head=$(awk -v b="$HEAD_BIN" 'NR > 1 && $1 == b {v = $2} END {print v}' "$work/instr.txt")
fi

# ---- the table ----------------------------------------------------------------------------------
node -e '
const fs = require("fs");
const [runsFile, base, head, pairs, secs, started, lb, la, ib, ih] = process.argv.slice(1);
const runs = fs.readFileSync(runsFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const median = (xs) => {
  const v = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const fmt = (v, d) => (v === null ? "–" : v.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d }));
const ratio = (b, h) => {
  if (b === null || h === null || b === 0) return "–";
  const r = h / b;
  const pct = (r - 1) * 100;
  return `${r.toFixed(2)} (${pct >= 0 ? "+" : "−"}${Math.abs(pct).toFixed(1)} %)`;
};
const metrics = [
  ["rps", "throughput (req/s)", 0, "higher"],
  ["p50", "p50 (µs)", 0, "lower"],
  ["p99", "p99 (µs)", 0, "lower"],
  ["cpu", "server CPU per call (µs)", 1, "lower"],
  ["sw", "server context switches per call", 2, "lower"],
  ["pg_cpu", "PostgreSQL CPU per call (µs)", 1, "lower"],
];
console.log(`BASE ${base} vs HEAD ${head}`);
console.log(`${started} · ${pairs} interleaved pair(s) of ${secs} s per figure, medians · load average ${lb} before, ${la} after`);
console.log("");
console.log("| figure | BASE | HEAD | HEAD / BASE |");
console.log("|---|---:|---:|---:|");
const figs = [...new Set(runs.map((r) => r.fig))];
let errors = 0;
for (const fig of figs) {
  const of = (side) => runs.filter((r) => r.fig === fig && r.side === side);
  for (const [key, label, d] of metrics) {
    const b = median(of("BASE").map((r) => r[key]));
    const h = median(of("HEAD").map((r) => r[key]));
    console.log(`| ${fig} ${label} | ${fmt(b, d)} | ${fmt(h, d)} | ${ratio(b, h)} |`);
  }
  errors += runs.filter((r) => r.fig === fig).reduce((s, r) => s + r.errors, 0);
}
if (ib && ih) console.log(`| callgrind instructions per call (c=1) | ${fmt(+ib, 0)} | ${fmt(+ih, 0)} | ${ratio(+ib, +ih)} |`);
console.log("");
console.log("Throughput: higher is better; every other figure: lower is better." +
  (errors ? ` ⚠ ${errors} failed request(s) or wrong answer(s) over the runs.` : " No errors."));
' "$AB_RUNS" "$BASE_LABEL ($base_why)" "$HEAD_LABEL" "$PAIRS" "$SECS" "$started" \
  "$load_before" "$load_after" "$instr_base" "$instr_head"
