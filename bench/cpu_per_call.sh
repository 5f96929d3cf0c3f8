#!/usr/bin/env bash
# Where the CPU of one tool call goes: runs mcpdb-loadgen against `mcp-dbserver serve` over stdio
# (get_document, the benchmark's call) and reports, per answered request, the CPU time (user +
# system, from /proc/PID/stat) of the server, of the PostgreSQL backends serving it (found by the
# client ports of its connections in pg_stat_activity; other PostgreSQL processes are not counted)
# and of the load client, and the context switches (voluntary + involuntary, every thread) of the
# server and of those backends, over exactly the load client's measured phase (bench/lib/
# cost_hook.sh samples them at its start and end).
#
#   bash bench/cpu_per_call.sh [CONCURRENCY] [SECONDS] [SERVER_BINARY] [-- serve options...]
#
# Defaults: 8, 4, build/release/src/mcp-dbserver. Needs the local servers and the demo data
# (bash scripts/servers.sh start; the loader), and the release build's bench tools. Bounded by
# SECONDS; prints one summary block. Needs psql. To compare two builds, use bench/ab.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
C="${1:-8}"
SECONDS_RUN="${2:-4}"
SERVER="${3:-$ROOT/build/release/src/mcp-dbserver}"
shift $(($# < 3 ? $# : 3))
[[ ${1:-} == "--" ]] && shift
LOADGEN="${BENCH_BUILD_DIR:-$ROOT/build/release}/bench/mcpdb-loadgen"
[[ $C =~ ^[0-9]+$ && $SECONDS_RUN =~ ^[0-9]+$ && $SECONDS_RUN -ge 2 ]] ||
  { echo "usage: cpu_per_call.sh [CONCURRENCY] [SECONDS>=2] [SERVER] [-- serve options]" >&2; exit 2; }
[[ -x $SERVER && -x $LOADGEN ]] || { echo "missing $SERVER or $LOADGEN (cmake --build --preset release)" >&2; exit 1; }
source "$ROOT/bench/lib/server_cost.sh"
bench_env "$ROOT" || exit 1
command -v psql >/dev/null || { echo "psql is not installed (apt install postgresql-client)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The hook samples the server, its backends and the load client at the measured phase's edges.
env -i PATH="$PATH" HOME="${HOME:-/tmp}" POSTGRES_DSN="$POSTGRES_DSN" MCPDB_LOG_LEVEL=warn \
  MCPDB_COST_FILE="$work/cost" \
  "$LOADGEN" --method tools/call --tool get_document --args '{"id":"doc-01"}' \
  --expect "Reading a query plan" --requests 10000000 --concurrency "$C" --warmup 100 \
  --max-seconds "$SECONDS_RUN" --settle-ms 300 --hook "$ROOT/bench/lib/cost_hook.sh" \
  -- "$SERVER" serve "$@" >"$work/out" 2>"$work/err" ||
  { tail -5 "$work/err" >&2; echo "the load run failed" >&2; exit 1; }
[[ -s $work/cost ]] || { tail -5 "$work/err" >&2; echo "no figures from the hook (an older mcpdb-loadgen without --hook? rebuild it)" >&2; exit 1; }
node -e '
const fs = require("fs");
const [c, outFile, costFile] = process.argv.slice(1);
const run = JSON.parse(fs.readFileSync(outFile, "utf8").trim().split("\n").pop());
const r = run.result;
const k = Object.fromEntries(fs.readFileSync(costFile, "utf8").trim().split("\n").map((l) => l.split("=")));
const n = run.hook.calls, dt = +k.dt, hz = +k.hz;
const us = (ticks) => (((ticks / hz) * 1e6) / n).toFixed(1);
const core = (ticks) => (((ticks / hz) / dt) * 100).toFixed(0);
console.log(`concurrency ${c}: ${Math.round(r.throughput_rps)} req/s, p50 ${r.latency_us.p50.toFixed(0)} us, errors ${r.errors}`);
console.log(`CPU per call: server ${us(k.server_ticks)} us (${core(k.server_ticks)}% of a core), PostgreSQL ${us(k.pg_ticks)} us (${core(k.pg_ticks)}%, the ${k.pg_backends} backend(s) serving it), load client ${us(k.client_ticks)} us`);
console.log(`context switches per call (voluntary + involuntary, every thread): server ${(k.server_switches / n).toFixed(2)}, PostgreSQL ${(k.pg_switches / n).toFixed(2)}`);
' "$C" "$work/out" "$work/cost"
