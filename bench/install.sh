#!/usr/bin/env bash
# Installs the pinned peer MCP servers (bench/package.json + package-lock.json) under
# bench/node_modules. Idempotent: does nothing when the lockfile has not changed since the last
# install. npm 11 skips dependency install scripts, so nothing runs at install time; run.sh calls
# each peer's entry point by path (never npx), and this script only marks the Toolbox Go binary
# executable (its launcher would otherwise do that at every start).
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf '[bench-install] %s\n' "$*" >&2; }

command -v npm >/dev/null || { log "npm is missing: run scripts/install.sh first"; exit 1; }
stamp="$BENCH/node_modules/.install-stamp"
if [[ ! -f $stamp || "$BENCH/package-lock.json" -nt $stamp || "$BENCH/package.json" -nt $stamp ]]; then
  log "npm: installing pinned peers (bench/package-lock.json)"
  (cd "$BENCH" && npm install --no-audit --no-fund --loglevel=error)
  touch "$stamp"
else
  log "npm: peers present"
fi
chmod +x "$BENCH/node_modules/@toolbox-sdk/server-linux-x64/bin/toolbox"

# The entry points run.sh uses; fail early when a package changed its layout.
for f in \
  node_modules/@modelcontextprotocol/server-postgres/dist/index.js \
  node_modules/@toolbox-sdk/server-linux-x64/bin/toolbox \
  node_modules/@bytebase/dbhub/dist/index.js \
  node_modules/mongodb-mcp-server/dist/esm/index.js; do
  [[ -e "$BENCH/$f" ]] || { log "missing $f after install"; exit 1; }
done
log "peers ready"
