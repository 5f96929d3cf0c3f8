#!/usr/bin/env bash
# The Debian package, end to end, as an operator meets it (root on Debian 12, no systemd running):
# build it (scripts/package.sh), check its metadata, install an older build and upgrade over it
# with `apt install ./...deb`, check the unit (`systemd-analyze verify`, and `security --offline`
# against an exposure threshold), start the INSTALLED binary as the package's user with the
# unit's command line and credentials file against the local servers, call tools with the
# official MCP SDK, then `apt remove` and `apt purge` and check nothing of it is left.
# Idempotent: a previous install (or a half-finished run) is purged first. It installs and purges
# the package on this machine: don't run it where a real mcp-dbserver package is in use.
# Usage: tests/package/run.sh [DEB]   (default: build it)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
log() { printf '[package-test] %3ds %s\n' "$SECONDS" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (apt install, runuser)"

PORT="${MCPDB_PACKAGE_TEST_PORT:-18431}"
EXPOSURE_MAX=2.0            # systemd-analyze security: 0 (locked down) .. 10 (unprotected)
UNIT=/lib/systemd/system/mcp-dbserver.service
ETC=/etc/mcp-dbserver
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -y -q -o Dpkg::Use-Pty=0)
WORK=$(mktemp -d)
server_pid=""
cleanup() {
  [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

deb="${1:-$(bash scripts/package.sh)}"
[[ -f $deb ]] || fail "no package at $deb"
deb=$(readlink -f "$deb")
log "package: $deb ($(du -h "$deb" | cut -f1))"

check_metadata() {
  local depends names files
  depends=$(dpkg-deb -f "$deb" Depends)
  log "Depends: $depends"
  names=$(tr ',|' '\n' <<<"$depends" | awk '{print $1}')
  # Linked (found by dpkg-shlibdeps) and loaded on first use (named in cmake/Packaging.cmake).
  for lib in libc6 libstdc++6 libssl3 libyaml-cpp0.7 libre2-9 libpq5 libmariadb3 libmongoc-1.0-0 \
             libcurl4 libopenblas0 libjemalloc2 libhiredis0.14 adduser; do
    grep -qxF "$lib" <<<"$names" || fail "Depends lacks $lib"
  done
  files=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for f in ./usr/bin/mcp-dbserver ./usr/share/mcp-dbserver/model/model.json \
           ./usr/share/mcp-dbserver/model/vocab.json ./usr/share/mcp-dbserver/model/group1-shard7of7 \
           ./usr/share/man/man1/mcp-dbserver.1.gz ./lib/systemd/system/mcp-dbserver.service \
           ./etc/mcp-dbserver/config.yaml ./usr/share/mcp-dbserver/env.template \
           ./usr/share/doc/mcp-dbserver/examples/memory.conf ./usr/share/doc/mcp-dbserver/copyright; do
    grep -qxF "$f" <<<"$files" || fail "the package lacks $f"
  done
  ! grep -q 'mcp-dbserver-load' <<<"$files" || fail "the demo loader (write code) is in the package"
  [[ $(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles) == "$ETC/config.yaml" ]] \
    || fail "conffiles is not exactly $ETC/config.yaml"
}

purge_previous() {
  local status
  status=$(dpkg-query -W -f='${Status}' mcp-dbserver 2>/dev/null || true)
  if [[ -n $status && $status != *not-installed ]]; then
    log "purging a previous install"
    "${APT[@]}" purge mcp-dbserver >/dev/null
  fi
}

# The same package with a lower version: what an upgrade starts from.
older_package() {
  local tree="$WORK/older"
  dpkg-deb -R "$deb" "$tree"
  sed -i 's/^Version: .*/Version: 0.0.1~older/' "$tree/DEBIAN/control"
  dpkg-deb -b "$tree" "$WORK/mcp-dbserver_0.0.1~older_amd64.deb" >/dev/null
  echo "$WORK/mcp-dbserver_0.0.1~older_amd64.deb"
}

# The credentials file is the local servers' variables (scripts/test.sh exported them; else
# scripts/servers.sh prints them), in systemd's EnvironmentFile syntax.
write_credentials() {
  [[ -n ${POSTGRES_DSN:-} ]] || eval "$(bash scripts/servers.sh env)"
  {
    echo "# written by tests/package/run.sh"
    for v in POSTGRES_DSN MYSQL_DSN MONGODB_URI MONGODB_DATABASE AWS_REGION \
             AWS_ENDPOINT_URL_DYNAMODB AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY; do
      printf '%s="%s"\n' "$v" "${!v}"
    done
  } >"$ETC/env"
}

check_env_file_mode() {
  [[ $(stat -c '%U:%G %a' "$ETC/env") == "root:mcp-dbserver 640" ]] \
    || fail "$ETC/env is $(stat -c '%U:%G %a' "$ETC/env"), not root:mcp-dbserver 640"
  runuser -u mcp-dbserver -- test -r "$ETC/env" || fail "the service user cannot read $ETC/env"
  ! runuser -u nobody -- test -r "$ETC/env" || fail "another user can read $ETC/env"
}

install_and_upgrade() {
  local older
  older=$(older_package)
  log "install the older build, then upgrade to this one"
  "${APT[@]}" install "$older" >/dev/null
  getent passwd mcp-dbserver >/dev/null || fail "postinst made no mcp-dbserver user"
  check_env_file_mode
  write_credentials
  make_client_key
  cp "$ETC/env" "$WORK/env.before"; cp "$ETC/config.yaml" "$WORK/config.before"
  "${APT[@]}" install "$deb" >/dev/null
  [[ $(dpkg-query -W -f='${Version}' mcp-dbserver) == "$(dpkg-deb -f "$deb" Version)" ]] \
    || fail "the upgrade did not install $(dpkg-deb -f "$deb" Version)"
  cmp -s "$ETC/env" "$WORK/env.before" || fail "the upgrade changed $ETC/env"
  cmp -s "$ETC/config.yaml" "$WORK/config.before" || fail "the upgrade changed the edited conffile"
  check_env_file_mode
  [[ $(getent passwd mcp-dbserver | cut -d: -f7) == /usr/sbin/nologin ]] || fail "the user has a shell"
}

# A client key scoped to postgres, added to the installed config as an operator would.
# The packaged binary is the release build: it runs on jemalloc (docs/ARCHITECTURE.md, Decisions).
check_allocator() {
  /usr/bin/mcp-dbserver --version | grep -q '^allocator: jemalloc ' ||
    fail "the installed binary does not run on jemalloc: $(/usr/bin/mcp-dbserver --version)"
}

make_client_key() {
  /usr/bin/mcp-dbserver keys new --name package-test --scope postgres --config "$ETC/config.yaml" \
    >"$WORK/key.txt"
  KEY=$(grep -o 'mcpdb_[A-Za-z0-9_-]*' "$WORK/key.txt" | head -n1)
  [[ -n $KEY ]] || fail "keys new printed no key"
  { echo 'http:'; sed -n '/^  clients:/,$p' "$WORK/key.txt"; } >>"$ETC/config.yaml"
}

check_unit() {
  log "systemd-analyze verify"
  systemd-analyze verify "$UNIT"
  local out score
  out=$(systemd-analyze security --offline=true --no-pager "$UNIT")
  score=$(grep -o 'Overall exposure level for mcp-dbserver.service: [0-9.]*' <<<"$out" | awk '{print $NF}')
  [[ -n $score ]] || fail "systemd-analyze security printed no score"
  log "systemd-analyze security: exposure $score (must be <= $EXPOSURE_MAX)"
  awk -v s="$score" -v m="$EXPOSURE_MAX" 'BEGIN { exit !(s <= m) }' || fail "exposure $score > $EXPOSURE_MAX"
}

# The unit's own command line and environment, run as its user, the way systemd would start it
# (without the sandbox, which needs a running systemd; the unit's settings are checked above).
start_installed_server() {
  local -a cmd
  read -r -a cmd <<<"$(sed -n 's/^ExecStart=//p' "$UNIT")"
  [[ ${cmd[0]} == /usr/bin/mcp-dbserver ]] || fail "ExecStart runs ${cmd[0]}"
  cmd=("${cmd[@]/127.0.0.1:8080/127.0.0.1:$PORT}")
  local model_env
  model_env=$(sed -n 's/^Environment=//p' "$UNIT")
  log "start as mcp-dbserver: ${cmd[*]}"
  (cd / && exec runuser -u mcp-dbserver -- env -i PATH=/usr/bin:/bin "$model_env" \
     sh -c 'set -a; . /etc/mcp-dbserver/env; set +a; exec "$@"' sh "${cmd[@]}") \
     2>"$WORK/server.log" &
  server_pid=$!
  for _ in $(seq 1 100); do
    grep -q 'listening on http://' "$WORK/server.log" && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$WORK/server.log" >&2; fail "the server exited"; }
    sleep 0.1
  done
  cat "$WORK/server.log" >&2
  fail "the server did not listen within 10 s"
}

call_and_stop() {
  node tests/package/call.mjs "http://127.0.0.1:$PORT/mcp" "$KEY"
  # runuser waits for its child, the server: that child must run as the package's user.
  local child rc=0
  child=$(pgrep -P "$server_pid" -x mcp-dbserver) || fail "no mcp-dbserver under runuser"
  [[ $(ps -o user= -p "$child") == mcp-dbserver ]] || fail "the server does not run as mcp-dbserver"
  log "server peak memory after the calls: $(awk '/^VmHWM/ {printf "%d MB", $2 / 1024}' "/proc/$child/status")"
  kill -TERM "$child"
  wait "$server_pid" || rc=$?
  server_pid=""
  [[ $rc -eq 0 ]] || { cat "$WORK/server.log" >&2; fail "the server exited $rc on SIGTERM"; }
  ! grep -qF "$KEY" "$WORK/server.log" || fail "the key is in the log"
}

remove_and_purge() {
  local files
  files=$(dpkg-query -L mcp-dbserver)
  mkdir -p /var/log/mcp-dbserver && touch /var/log/mcp-dbserver/audit.jsonl  # as the service would
  log "apt remove"
  "${APT[@]}" remove mcp-dbserver >/dev/null
  [[ ! -e /usr/bin/mcp-dbserver && ! -e /usr/share/mcp-dbserver && ! -e $UNIT ]] \
    || fail "apt remove left program files"
  [[ -f $ETC/config.yaml && -f $ETC/env ]] || fail "apt remove took the configuration (purge does that)"
  log "apt purge"
  "${APT[@]}" purge mcp-dbserver >/dev/null
  ! dpkg-query -W mcp-dbserver >/dev/null 2>&1 || fail "dpkg still knows mcp-dbserver"
  local f left=()
  while read -r f; do
    # Directories the package shares with others (/usr, /etc, ...) stay.
    if [[ -e $f && ! -d $f ]] || [[ -d $f && $f == *mcp-dbserver* ]]; then left+=("$f"); fi
  done <<<"$files"
  for f in "$ETC" /var/log/mcp-dbserver; do [[ ! -e $f ]] || mapfile -t -O "${#left[@]}" left < <(find "$f"); done
  ((${#left[@]} == 0)) || fail "purge left: $(printf '%s\n' "${left[@]}" | sort -u | tr '\n' ' ')"
  # Debian keeps system users on purge (their uid may still own files); it stays without a login.
  [[ $(getent passwd mcp-dbserver | cut -d: -f7) == /usr/sbin/nologin ]] || fail "the user has a shell"
}

check_metadata
purge_previous
install_and_upgrade
check_allocator
check_unit
start_installed_server
call_and_stop
remove_and_purge
log "ok: installed, upgraded, verified, served a call as mcp-dbserver, removed and purged"
