#!/usr/bin/env bash
# Where the CPU of one tool call goes: runs mcpdb-loadgen against `mcp-dbserver serve` over stdio
# (get_document, the benchmark's call) and reports, per answered request, the CPU time (user +
# system, from /proc/PID/stat) of the server, of all PostgreSQL processes and of the load client,
# and the server's and PostgreSQL's voluntary context switches.
#
#   bash bench/cpu_per_call.sh [CONCURRENCY] [SECONDS] [SERVER_BINARY] [-- serve options...]
#
# Defaults: 8, 4, build/release/src/mcp-dbserver. Needs the local servers and the demo data
# (bash scripts/servers.sh start; the loader), and the release build's bench tools. Bounded by
# SECONDS; prints one summary block. Compare two builds by running it for each, interleaved.
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
eval "$(bash "$ROOT/scripts/servers.sh" env)"
[[ -n ${POSTGRES_DSN:-} ]] || { echo "POSTGRES_DSN is not set: bash scripts/servers.sh start" >&2; exit 1; }

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
switches() {  # voluntary context switches of every thread of PID
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s + 0}'
}
pg_sum() {  # $1: ticks|switches, over every PostgreSQL process
  local t=0 p
  for p in $(pgrep -x postgres || true); do t=$((t + $($1 "$p"))); done
  echo "$t"
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
env -i PATH="$PATH" HOME="${HOME:-/tmp}" POSTGRES_DSN="$POSTGRES_DSN" MCPDB_LOG_LEVEL=warn \
  "$LOADGEN" --method tools/call --tool get_document --args '{"id":"doc-01"}' \
  --expect "Reading a query plan" --requests 10000000 --concurrency "$C" --warmup 100 \
  --max-seconds "$SECONDS_RUN" --settle-ms 300 -- "$SERVER" serve "$@" >"$out" 2>/dev/null &
lg=$!
# Measure a window inside the run, past start-up and warm-up.
sleep 1
server=$(pgrep -n -f -- "$SERVER serve" || true)
[[ -n $server ]] || { echo "the server did not start" >&2; wait "$lg" || true; exit 1; }
s0=$(ticks "$server"); w0=$(switches "$server"); l0=$(ticks "$lg")
p0=$(pg_sum ticks); q0=$(pg_sum switches); t0=$(date +%s.%N)
sleep $((SECONDS_RUN - 1))
s1=$(ticks "$server"); w1=$(switches "$server"); l1=$(ticks "$lg")
p1=$(pg_sum ticks); q1=$(pg_sum switches); t1=$(date +%s.%N)
wait "$lg" || true
hz=$(getconf CLK_TCK)
node -e '
const [c, line, hz, t0, t1, s0, s1, l0, l1, p0, p1, w0, w1, q0, q1] = process.argv.slice(1);
const r = JSON.parse(line.trim().split("\n").pop()).result;
const dt = t1 - t0, n = r.throughput_rps * dt;
const us = (a, b) => (((b - a) / hz) * 1e6 / n).toFixed(1);
const core = (a, b) => ((((b - a) / hz) / dt) * 100).toFixed(0);
console.log(`concurrency ${c}: ${Math.round(r.throughput_rps)} req/s, p50 ${r.latency_us.p50.toFixed(0)} us, errors ${r.errors}`);
console.log(`CPU per call: server ${us(s0, s1)} us (${core(s0, s1)}% of a core), PostgreSQL ${us(p0, p1)} us (${core(p0, p1)}%), load client ${us(l0, l1)} us`);
console.log(`voluntary context switches per call: server ${((w1 - w0) / n).toFixed(2)}, PostgreSQL ${((q1 - q0) / n).toFixed(2)}`);
' "$C" "$(cat "$out")" "$hz" "$t0" "$t1" "$s0" "$s1" "$l0" "$l1" "$p0" "$p1" "$w0" "$w1" "$q0" "$q1"
