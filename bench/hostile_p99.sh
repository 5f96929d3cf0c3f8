#!/usr/bin/env bash
# A legitimate client's latency while hostile clients run against the same HTTP server: 300
# half-open connections that never finish their headers, and a client guessing keys as fast as
# it can. Reports the legitimate client's p50/p99 unloaded and loaded and the ratio (the target
# for #18 is p99 within 2x of unloaded).
#
#   bash bench/hostile_p99.sh [SERVER_BINARY] [SECONDS]
#
# Defaults: build/release/src/mcp-dbserver, 5. Needs the local servers and the demo data, python3
# (for the half-open sockets) and the release build's mcpdb-loadgen.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVER="${1:-$ROOT/build/release/src/mcp-dbserver}"
SECS="${2:-5}"
LOADGEN="${BENCH_BUILD_DIR:-$ROOT/build/release}/bench/mcpdb-loadgen"
[[ -x $SERVER && -x $LOADGEN ]] || { echo "missing $SERVER or $LOADGEN" >&2; exit 1; }
eval "$(bash "$ROOT/scripts/servers.sh" env)"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
"$SERVER" keys new --name bench --scope postgres --rate 100000 --burst 100000 --max-concurrent 64 >"$work/key.txt"
key=$(awk '/^  mcpdb_/ {print $1; exit}' "$work/key.txt")
sha=$(awk '/key_sha256:/ {print $2; exit}' "$work/key.txt")
port=$((20000 + RANDOM % 20000))
{
  echo "server: {self_check: off}"
  cat "$ROOT/src/engines/postgres/default_section.yaml"
  echo "http:"
  echo "  clients:"
  echo "    - {name: bench, key_sha256: $sha, scope: postgres, rate_limit: {rate: 100000, burst: 100000}, max_concurrent_calls: 64}"
} >"$work/config.yaml"
env -i PATH="$PATH" POSTGRES_DSN="$POSTGRES_DSN" MCPDB_LOG_LEVEL=warn \
  "$SERVER" -c "$work/config.yaml" serve --http "127.0.0.1:$port" >/dev/null 2>"$work/server.log" &
pids+=($!)
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
legit() {
  "$LOADGEN" --url "http://127.0.0.1:$port/mcp" --bearer "$key" --method tools/call --tool get_document \
    --args '{"id":"doc-01"}' --expect "Reading a query plan" --requests 10000000 --concurrency 4 \
    --warmup 100 --max-seconds "$SECS" --label "$1" 2>"$work/loadgen.err" | tail -1 |
    jq -c '{label: .label, rps: (.result.throughput_rps|floor), p50_us: .result.latency_us.p50, p99_us: .result.latency_us.p99, errors: .result.errors}'
}
legit unloaded | tee "$work/unloaded.json" || { cat "$work/loadgen.err" "$work/server.log" >&2; exit 1; }
# 300 half-open connections, each sending a few header bytes a second (slow drip).
python3 - "$port" <<'PY' &
import socket, sys, time
def half_open():
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        return s
    except OSError:
        return None
socks = [s for s in (half_open() for _ in range(300)) if s]
end = time.time() + 120
while time.time() < end:
    for s in list(socks):
        try:
            s.sendall(b"X-Drip: 1\r\n")
        except OSError:  # closed by the server: open another one
            socks.remove(s)
            if (n := half_open()):
                socks.append(n)
    time.sleep(1)
PY
pids+=($!)
# A key guesser at full speed.
"$LOADGEN" --url "http://127.0.0.1:$port/mcp" --bearer "mcpdb_wrong_key_guess_0000000000000000000000" \
  --method tools/call --tool get_document --args '{"id":"doc-01"}' --requests 10000000 \
  --concurrency 8 --max-seconds $((SECS + 3)) >/dev/null 2>&1 &
pids+=($!)
sleep 2
legit "with 300 half-open + a key guesser" | tee "$work/loaded.json"
jq -rs '"p99 loaded/unloaded: \(.[1].p99_us / .[0].p99_us * 100 | floor / 100)x; p50: \(.[1].p50_us / .[0].p50_us * 100 | floor / 100)x; throughput: \(.[1].rps / .[0].rps * 100 | floor / 100)x"' \
  "$work/unloaded.json" "$work/loaded.json"
