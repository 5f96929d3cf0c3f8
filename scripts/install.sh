#!/usr/bin/env bash
# One idempotent setup for a fresh Debian 12 machine: Debian packages, pgvector built from the
# Debian (trixie) source package, and the pinned npm tools the tests and demo use.
# Safe to run again: every step checks whether it is already done.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[install] %s\n' "$*" >&2; }

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl jq dpkg-dev
  g++-12 clang-14 libclang-rt-14-dev clang-format clang-tidy
  libpq-dev postgresql-15 postgresql-server-dev-15 libpg-query-dev libre2-dev
  mariadb-server mariadb-client libmariadb-dev
  libmongoc-dev libbson-dev
  redis-server libhiredis-dev
  libcurl4-openssl-dev libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  libboost-dev libboost-system-dev libboost-context-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libicu-dev libjemalloc-dev
  openjdk-17-jre-headless iproute2 util-linux curl openssl
  file procps adduser systemd
  gnuplot-nox hyperfine valgrind
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "apt: installing ${#missing[@]} package(s): ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "apt: all ${#APT_PACKAGES[@]} packages present"
fi

# Node.js: the machine image may ship its own build (with npm); use Debian's only when absent.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "apt: installing nodejs and npm"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi

# --- pgvector: not packaged for bookworm; build trixie's source package (INFRA-NOTES). ---------
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
if [[ ! -f "$($PG_CONFIG --sharedir)/extension/vector.control" ]]; then
  src_list=/etc/apt/sources.list.d/mcp-dbserver-trixie-src.sources
  if [[ ! -f $src_list ]]; then
    # Reuse the mirror URI and keyring of the machine's own bookworm entry; name no host here.
    uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    keyring=$(awk '/^Signed-By:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    [[ -n $uri ]] || { log "cannot read the mirror URI from debian.sources"; exit 1; }
    log "apt: adding deb-src for trixie from the existing mirror"
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' \
      "$uri" "$keyring" | $SUDO tee "$src_list" >/dev/null
    $SUDO apt-get update -q
  fi
  work=$(mktemp -d)
  log "pgvector: fetching and building the Debian source package"
  (cd "$work" && apt-get source -q pgvector >/dev/null 2>&1 && cd pgvector-*/ \
     && make -s PG_CONFIG=$PG_CONFIG >/dev/null && $SUDO make -s PG_CONFIG=$PG_CONFIG install >/dev/null)
  rm -rf "$work"
  log "pgvector: installed"
else
  log "pgvector: present"
fi

# --- npm tools (pinned by tools/package-lock.json) --------------------------------------------
if [[ -f "$ROOT/tools/package-lock.json" ]]; then
  if [[ ! -f "$ROOT/tools/node_modules/.install-stamp" || "$ROOT/tools/package-lock.json" -nt "$ROOT/tools/node_modules/.install-stamp" ]]; then
    log "npm: installing pinned tools (tools/package-lock.json)"
    # `npm install` honours the lockfile; `npm ci` refuses it over vite's Windows-only optional dependency.
    (cd "$ROOT/tools" && npm install --no-audit --no-fund --loglevel=error)
    touch "$ROOT/tools/node_modules/.install-stamp"
  else
    log "npm: tools present"
  fi
  if [[ -x "$ROOT/tools/post-install.sh" ]]; then "$ROOT/tools/post-install.sh"; fi
fi
log "done"
