#!/usr/bin/env bash
# Reload under load: the bench's load client (mcpdb-loadgen, get_document, stdio and HTTP) runs
# while the server's config is reloaded again and again (SIGHUP), each reload changing the tool
# list and the PostgreSQL pool size (so the engine is built anew and its old pool drained). Prints,
# per transport, the calls answered, the errors the load client counted (HTTP status other than
# 200, JSON-RPC errors, isError results, wrong answers, no answer) and the reloads the server
# applied; exits 1 if any call failed or a reload was not applied.
#
#   bash bench/reload_under_load.sh [--seconds S] [--every-ms MS] [--concurrency C]
#
# Defaults: 10 s per transport, a reload every 1100 ms (the server applies at most one a second:
# signals in between coalesce), c=8. Needs the Release build (cmake --preset release && cmake
# --build --preset release --target mcp-dbserver mcpdb-loadgen; or SERVER= and LOADGEN= paths),
# the local servers and the demo data (bash scripts/servers.sh start; the loader).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib/server_cost.sh
source "$ROOT/bench/lib/server_cost.sh"

SECS=10
EVERY_MS=1100
CONC=8
while (($#)); do
  case "$1" in
    --seconds) SECS="$2"; shift 2 ;;
    --every-ms) EVERY_MS="$2"; shift 2 ;;
    --concurrency) CONC="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "reload_under_load.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
SERVER="${SERVER:-$ROOT/build/release/src/mcp-dbserver}"
LOADGEN="${LOADGEN:-$ROOT/build/release/bench/mcpdb-loadgen}"
for b in "$SERVER" "$LOADGEN"; do
  [[ -x $b ]] || { echo "reload_under_load.sh: $b is not built (see --help)" >&2; exit 2; }
done
bench_env "$ROOT"

work=$(mktemp -d)
cleanup() {
  # The reloading loop the hook started, if the load client died before its end edge.
  [[ -f $work/reloader.pid ]] && kill "$(cat "$work/reloader.pid")" 2>/dev/null
  [[ -n ${KEEP_WORK:-} ]] || rm -rf "$work"
}
trap cleanup EXIT

# config N [http]: the bench's config; odd N adds a tool and makes the pool one connection larger.
config() {
  bench_config "$ROOT" HEAD "${2:-}" | sed "s/^    size: [0-9]*$/    size: $((4 + $1 % 2))/" \
    >"$work/next.yaml"
  if (($1 % 2)); then
    sed -i '/^  tools:$/a\    reload_probe:\n      description: Added by a reload (never called).\n      statement: SELECT 1 AS one' "$work/next.yaml"
  fi
  mv "$work/next.yaml" "$work/config.yaml"
}

# The hook the load client runs at the edges of its measured phase: `start PID` begins reloading
# that server every EVERY_MS in the background, `end` stops it.
cat >"$work/hook.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
case "\$1" in
  start)
    ( i=0
      while kill -0 "\$2" 2>/dev/null; do
        sleep $(awk -v ms="$EVERY_MS" 'BEGIN { printf "%.3f", ms / 1000 }')
        i=\$((i + 1))
        bash "$work/make_config.sh" "\$i"
        kill -HUP "\$2" 2>/dev/null || break
      done ) >/dev/null 2>&1 &
    echo \$! >"$work/reloader.pid" ;;
  end) kill "\$(cat "$work/reloader.pid")" 2>/dev/null || true ;;
esac
EOF
chmod +x "$work/hook.sh"

failed=0
for transport in stdio http; do
  cat >"$work/make_config.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
source "$ROOT/bench/lib/server_cost.sh"
$(declare -f config)
work="$work"; ROOT="$ROOT"
config "\$1" $([[ $transport == http ]] && echo http)
EOF
  bash "$work/make_config.sh" 0
  args=(--method tools/call --tool get_document --args '{"id":"doc-01"}'
    --expect "Reading a query plan" --requests 10000000 --concurrency "$CONC"
    --warmup 20 --max-seconds "$SECS" --settle-ms 300 --hook "$work/hook.sh"
    --server-stderr "$work/server.log")
  cmd=("$SERVER" serve --config "$work/config.yaml")
  if [[ $transport == http ]]; then
    port=$((20000 + RANDOM % 20000))
    args+=(--url "http://127.0.0.1:$port/mcp")
    cmd+=(--http "127.0.0.1:$port")
  fi
  echo "[reload] $transport c=$CONC for ${SECS} s, a reload every ${EVERY_MS} ms ..." >&2
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" POSTGRES_DSN="$POSTGRES_DSN" \
    "$LOADGEN" "${args[@]}" -- "${cmd[@]}" >"$work/out.json" 2>"$work/loadgen.log" || true
  applied=$(grep -c 'reload (SIGHUP): applied' "$work/server.log" || true)
  refused=$(grep -c 'reload (SIGHUP): refused' "$work/server.log" || true)
  line=$(node -e '
const fs = require("fs");
const run = JSON.parse(fs.readFileSync(process.argv[1], "utf8").trim().split("\n").pop());
const r = run.result ?? {};
const errors = (r.errors ?? 1) + (r.expect_ok === false ? 1 : 0);
console.log(`${r.completed ?? 0} ${errors} ${Math.round(r.throughput_rps ?? 0)}`);
' "$work/out.json" 2>/dev/null || echo "0 1 0")
  read -r calls errors rps <<<"$line"
  echo "$transport c=$CONC: $calls calls ($rps req/s), $errors error(s), $applied reload(s) applied, $refused refused"
  if ((errors != 0 || applied == 0 || refused != 0)); then
    failed=1
    grep -v '^{' "$work/server.log" | tail -5 >&2 || true
    tail -3 "$work/loadgen.log" >&2 || true
  fi
done
exit "$failed"
