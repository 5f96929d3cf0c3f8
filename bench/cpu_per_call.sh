#!/usr/bin/env bash
# Where the CPU of one tool call goes: runs mcpdb-loadgen against `mcp-dbserver serve` over stdio
# (get_document, the benchmark's call) and reports, per answered request, the CPU time (user +
# system, from /proc/PID/stat) of the server, of the PostgreSQL backends serving it (found by the
# client ports of its connections in pg_stat_activity; other PostgreSQL processes are not counted)
# and of the load client, and the context switches (voluntary + involuntary, every thread) of the
# server and of those backends.
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

out=$(mktemp)
trap 'rm -f "$out"' EXIT
env -i PATH="$PATH" HOME="${HOME:-/tmp}" POSTGRES_DSN="$POSTGRES_DSN" MCPDB_LOG_LEVEL=warn \
  "$LOADGEN" --method tools/call --tool get_document --args '{"id":"doc-01"}' \
  --expect "Reading a query plan" --requests 10000000 --concurrency "$C" --warmup 100 \
  --max-seconds "$SECONDS_RUN" --settle-ms 300 -- "$SERVER" serve "$@" >"$out" 2>/dev/null &
lg=$!
# Measure a window inside the run, past start-up and warm-up, ending before the run does. The
# server is the load client's child: another instance of the same binary is not it.
sleep 1
server=$(child_pid "$lg") || { echo "the server did not start" >&2; wait "$lg" || true; exit 1; }
cost_begin "$server" "$POSTGRES_DSN"
l0=$(proc_ticks "$lg")
sleep "$(awk -v s="$SECONDS_RUN" 'BEGIN {print s - 1.3}')"
l1=$(proc_ticks "$lg")
cost_end || { wait "$lg" || true; exit 1; }
wait "$lg" || true
[[ -s $out ]] || { echo "the load run printed no result" >&2; exit 1; }
node -e '
const [c, line, hz, dt, server, pg, pgN, lg, sw, pgSw] = process.argv.slice(1);
const r = JSON.parse(line.trim().split("\n").pop()).result;
const n = r.throughput_rps * dt;
const us = (ticks) => (((ticks / hz) * 1e6) / n).toFixed(1);
const core = (ticks) => (((ticks / hz) / dt) * 100).toFixed(0);
console.log(`concurrency ${c}: ${Math.round(r.throughput_rps)} req/s, p50 ${r.latency_us.p50.toFixed(0)} us, errors ${r.errors}`);
console.log(`CPU per call: server ${us(server)} us (${core(server)}% of a core), PostgreSQL ${us(pg)} us (${core(pg)}%, the ${pgN} backend(s) serving it), load client ${us(lg)} us`);
console.log(`context switches per call (voluntary + involuntary, every thread): server ${(sw / n).toFixed(2)}, PostgreSQL ${(pgSw / n).toFixed(2)}`);
' "$C" "$(cat "$out")" "$COST_HZ" "$COST_DT" "$COST_SERVER_TICKS" "$COST_PG_TICKS" "$COST_PG_N" \
  "$((l1 - l0))" "$COST_SERVER_SWITCHES" "$COST_PG_SWITCHES"
