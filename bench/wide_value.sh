#!/usr/bin/env bash
# Peak memory of a call that reads one stored value far over the byte cap: a text value of
# VALUE_BYTES (default 300,000,000) is stored in a schema of its own (created with the admin DSN,
# dropped at the end), the server (stdio) runs a tool reading it with a 256 KiB byte cap, and the
# script reports the process's peak RSS (VmHWM) against its RSS when idle (after a small call, so
# the pool's connection and the statement's plan exist). With the cap held at the source the
# value never leaves the database: the peak stays within a few MiB of idle. A second figure runs
# two such calls at once.
#
#   bash bench/wide_value.sh [SERVER_BINARY] [VALUE_BYTES]
#
# Defaults: build/release/src/mcp-dbserver, 300000000. Needs the local servers
# (bash scripts/servers.sh start) and psql. Compare builds by running it for each.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVER="${1:-$ROOT/build/release/src/mcp-dbserver}"
SIZE="${2:-300000000}"
[[ -x $SERVER && $SIZE =~ ^[0-9]+$ ]] || { echo "usage: wide_value.sh [SERVER] [VALUE_BYTES]" >&2; exit 2; }
[[ -n ${POSTGRES_DSN:-} && -n ${MCPDB_PG_ADMIN_DSN:-} ]] || eval "$(bash "$ROOT/scripts/servers.sh" env)"
[[ -n ${POSTGRES_DSN:-} && -n ${MCPDB_PG_ADMIN_DSN:-} ]] ||
  { echo "POSTGRES_DSN and MCPDB_PG_ADMIN_DSN must be set: bash scripts/servers.sh start" >&2; exit 1; }
reader=$(psql "$POSTGRES_DSN" -Atc 'SELECT current_user')
admin() { psql "$MCPDB_PG_ADMIN_DSN" -q -v ON_ERROR_STOP=1 -c "$1" >/dev/null; }
cfg=$(mktemp --suffix=.yaml)
cleanup() {
  rm -f "$cfg"
  admin 'DROP SCHEMA IF EXISTS bench_wide_value CASCADE' || true
}
trap cleanup EXIT
admin "SET client_min_messages = warning; DROP SCHEMA IF EXISTS bench_wide_value CASCADE;
  CREATE SCHEMA bench_wide_value;
  CREATE TABLE bench_wide_value.v (id int PRIMARY KEY, body text);
  INSERT INTO bench_wide_value.v VALUES (1, 'small'), (2, repeat('x', $SIZE));
  GRANT USAGE ON SCHEMA bench_wide_value TO \"$reader\";
  GRANT SELECT ON bench_wide_value.v TO \"$reader\";"
cat >"$cfg" <<YAML
server: {self_check: off}
limits: {max_bytes: 262144, timeout_ms: 120000}
postgres:
  tools:
    read_value:
      description: One stored value by id.
      statement: SELECT id, body FROM bench_wide_value.v WHERE id = \$1
      parameters: [{name: id, type: integer, description: Row.}]
YAML
# shellcheck source=bench/lib/stdio_server.sh
source "$ROOT/bench/lib/stdio_server.sh"
start_server "$cfg" wide_value
measure_wide "value of $SIZE bytes"
