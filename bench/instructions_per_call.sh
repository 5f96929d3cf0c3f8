#!/usr/bin/env bash
# User-space instructions per tool call, counted by valgrind's callgrind: a drift meter that does
# not need a quiet machine. Throughput and CPU time move with whatever else runs on the host (a
# build, another benchmark); the instructions a server executes for one call do not, so two builds
# can be compared while the machine is busy, and a change of a few per cent is visible.
#
#   bash bench/instructions_per_call.sh SERVER_BINARY [SERVER_BINARY...]
#
# For each binary: runs `serve` over stdio under callgrind for N1 and N2 get_document calls
# (c=1, the built-in PostgreSQL section with one pooled connection, self-check and model preload
# off) and reports
# (Ir(N2) - Ir(N1)) / (N2 - N1): start-up cancels out. Each count is the lowest of TRIES runs,
# because background work a run may or may not catch (the PostgreSQL read-only proof runs again
# when the catalog changes, e.g. when another process creates a table) only ever adds. The first
# binary is the reference: the others are printed as ratios to it.
#
# What it does not see: the kernel (system calls, scheduling, context switches; see
# cpu_per_call.sh), waiting, and the database's own work. Needs valgrind (apt install valgrind),
# the local servers with the demo data, and the release build's mcpdb-loadgen.
# Environment: N1 (default 200), N2 (1200), TRIES (2), CONFIG (a config to use instead), BASE
# (the commit whose built-in PostgreSQL section the default config is made of: by default the
# baseline that committed bench/results/latest.md, so the baseline's build accepts it too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N1="${N1:-200}"
N2="${N2:-1200}"
TRIES="${TRIES:-2}"
LOADGEN="${BENCH_BUILD_DIR:-$ROOT/build/release}/bench/mcpdb-loadgen"
[[ $# -ge 1 ]] || { echo "usage: instructions_per_call.sh SERVER_BINARY [SERVER_BINARY...]" >&2; exit 2; }
[[ $N1 =~ ^[0-9]+$ && $N2 =~ ^[0-9]+$ && $N2 -gt $N1 && $TRIES =~ ^[1-9][0-9]*$ ]] ||
  { echo "N1 < N2 and TRIES >= 1 must be integers" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt install valgrind)" >&2; exit 1; }
[[ -x $LOADGEN ]] || { echo "missing $LOADGEN (cmake --build --preset release)" >&2; exit 1; }
for b in "$@"; do [[ -x $b ]] || { echo "not an executable: $b" >&2; exit 1; }; done
source "$ROOT/bench/lib/server_cost.sh"
bench_env "$ROOT" || exit 1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config="${CONFIG:-}"
if [[ -z $config ]]; then
  config="$work/config.yaml"
  base="${BASE:-$(baseline_commit "$ROOT")}"
  # One connection: a new connection makes the PostgreSQL read-only proof run again, and how many
  # a run opens depends on timing.
  bench_config "$ROOT" "$base" | sed 's/^    size: [0-9]*$/    size: 1/' >"$config"
  grep -q '^    size: 1$' "$config" || { echo "no config from commit $base" >&2; exit 1; }
fi

# count BINARY N: the lowest total instruction count of TRIES runs of N calls.
count() {
  local best=0 n try total
  for ((try = 0; try < TRIES; try++)); do
    n="$work/out.$try"
    cat >"$work/wrap" <<EOW
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file="$n" --dump-instr=no "$1" "\$@" 2>/dev/null
EOW
    chmod +x "$work/wrap"
    env -i PATH="$PATH" HOME="${HOME:-/tmp}" POSTGRES_DSN="$POSTGRES_DSN" MCPDB_CONFIG="$config" \
      MCPDB_LOG_LEVEL=warn "$LOADGEN" --protocol-version 2025-11-25 --method tools/call \
      --tool get_document --args '{"id":"doc-01"}' --concurrency 1 --requests "$2" \
      --max-seconds 900 -- "$work/wrap" serve >"$work/log" 2>&1 ||
      { echo "load run failed for $1:" >&2; tail -5 "$work/log" >&2; exit 1; }
    total=$(awk '/^(summary|totals):/ {v = $2} END {print v + 0}' "$n")
    [[ $total -gt 0 ]] || { echo "no callgrind totals for $1" >&2; exit 1; }
    if ((best == 0 || total < best)); then best=$total; fi
  done
  echo "$best"
}

ref=0
echo "instructions per get_document call (callgrind, c=1, N=$N1..$N2, lowest of $TRIES):"
for b in "$@"; do
  a=$(count "$b" "$N1")
  c=$(count "$b" "$N2")
  per=$(((c - a) / (N2 - N1)))
  if ((ref == 0)); then
    ref=$per
    printf '  %-60s %9d\n' "$b" "$per"
  else
    printf '  %-60s %9d  %+.1f %%\n' "$b" "$per" "$(awk -v p="$per" -v r="$ref" 'BEGIN {print (p - r) * 100 / r}')"
  fi
done
