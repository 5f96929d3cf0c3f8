#!/usr/bin/env bash
# Fails when the server binary contains any engine's demo loader (the only code that writes):
# demo loaders are linked only into mcp-dbserver-load. The loader binary is checked too, so that a
# renamed symbol makes this test fail instead of pass vacuously.
set -euo pipefail
server=$1
loader=$2
pattern='demoLoader|DemoLoadContext|allDemoLoaders'
count() { nm -C "$1" | grep -cE "$pattern" || true; }
in_loader=$(count "$loader")
[[ $in_loader -gt 0 ]] || { echo "no demo-loader symbols in $loader: the pattern is stale"; exit 1; }
in_server=$(count "$server")
if [[ $in_server -ne 0 ]]; then
  echo "the server binary contains demo-loader code:"
  nm -C "$server" | grep -E "$pattern"
  exit 1
fi
echo "ok: $in_loader demo-loader symbols in the loader, none in the server"
