#!/usr/bin/env bash
# The Mongo wire-protocol test server (CongoServer from @push.rocks/smartmongo@2.2.0) cannot be
# installed by a plain `npm i` (a missing transitive version); its runtime dependencies are in
# package.json and the package itself is unpacked here, pinned by version (INFRA-NOTES).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
dest=node_modules/@push.rocks/smartmongo
if [[ ! -f $dest/package.json ]] || ! grep -q '"version": "2.2.0"' $dest/package.json; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @push.rocks/smartmongo@2.2.0 >/dev/null)
  rm -rf "$dest" && mkdir -p "$dest"
  tar -xzf "$tmp"/push.rocks-smartmongo-2.2.0.tgz -C "$dest" --strip-components=1
  rm -rf "$tmp"
  echo "[install] smartmongo 2.2.0 unpacked" >&2
fi
