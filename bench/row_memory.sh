#!/usr/bin/env bash
# Peak memory of one call whose single row is far over the byte cap: the server (stdio) runs a
# tool returning one text value of ROW_BYTES (default 1,000 x the 256 KiB cap) and the script
# reports the process's peak RSS (VmHWM) over its RSS before the call. The cap is applied before
# the row is converted, so the growth is the driver's copy of the raw row, not several converted
# copies of it.
#
#   bash bench/row_memory.sh [SERVER_BINARY] [ROW_BYTES]
#
# Defaults: build/release/src/mcp-dbserver, 262144000. Needs the local servers
# (bash scripts/servers.sh start). Compare builds by running it for each.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVER="${1:-$ROOT/build/release/src/mcp-dbserver}"
ROW="${2:-262144000}"
[[ -x $SERVER && $ROW =~ ^[0-9]+$ ]] || { echo "usage: row_memory.sh [SERVER] [ROW_BYTES]" >&2; exit 2; }
eval "$(bash "$ROOT/scripts/servers.sh" env)"
[[ -n ${POSTGRES_DSN:-} ]] || { echo "POSTGRES_DSN is not set: bash scripts/servers.sh start" >&2; exit 1; }
cfg=$(mktemp --suffix=.yaml)
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<YAML
server: {self_check: off}
limits: {max_bytes: 262144, timeout_ms: 60000}
postgres:
  tools:
    wide_row:
      description: One text value of the given length.
      statement: SELECT repeat('x', \$1::int) AS v
      parameters: [{name: n, type: integer, description: Length.}]
YAML
# shellcheck source=bench/lib/stdio_server.sh
source "$ROOT/bench/lib/stdio_server.sh"
start_server "$cfg" row_memory
# A small call first, so the pool's connection and the statement's plan exist before the baseline.
send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wide_row","arguments":{"n":10}}}'
IFS= read -r _ <&"${SRV[0]}"
before=$(kib VmRSS)
hwm_before=$(kib VmHWM)
start=$(date +%s%N)
send "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"wide_row\",\"arguments\":{\"n\":$ROW}}}"
IFS= read -r answer <&"${SRV[0]}"
took=$((($(date +%s%N) - start) / 1000000))
hwm=$(kib VmHWM)
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
truncated=$(grep -o '"truncated":[a-z]*' <<<"$answer" | head -1)
echo "row of $ROW bytes against a 262144-byte cap: ${truncated:-no result} in ${took} ms;" \
  "RSS before $((before / 1024)) MiB, peak $((hwm / 1024)) MiB (peak before the call" \
  "$((hwm_before / 1024)) MiB): growth $(((hwm - before) / 1024)) MiB = $(awk -v g="$((hwm - before))" -v r="$ROW" 'BEGIN {printf "%.2f", g * 1024 / r}') x the row"
