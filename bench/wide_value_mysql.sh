#!/usr/bin/env bash
# Peak memory of a MySQL/MariaDB call that reads values far over the byte cap, the sibling of
# wide_value.sh: a row of COLUMNS values of VALUE_BYTES each (default 4 x 15 MiB: one value cannot
# pass the server's max_allowed_packet, 16 MiB by default, but a row of several can) is stored in
# a schema of its own (created with the server administrator's DSN, readable by the reader for the
# bench's length, dropped at the end); the server (stdio) runs a tool reading it with a 256 KiB
# byte cap, and the script reports the process's peak RSS (VmHWM) against its RSS when idle (after
# a small call of the same tool). libmariadb reads a row whole: without the cap at the source the
# peak grows by the row's size at least. A second figure runs two such calls at once.
#
#   bash bench/wide_value_mysql.sh [SERVER_BINARY] [VALUE_BYTES] [COLUMNS]
#
# Defaults: build/release/src/mcp-dbserver, 15728640, 4. Needs the local servers
# (bash scripts/servers.sh start) and the mariadb client. Compare builds by running it for each.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVER="${1:-$ROOT/build/release/src/mcp-dbserver}"
SIZE="${2:-15728640}"
COLUMNS="${3:-4}"
[[ -x $SERVER && $SIZE =~ ^[0-9]+$ && $COLUMNS =~ ^[1-9][0-9]?$ ]] ||
  { echo "usage: wide_value_mysql.sh [SERVER] [VALUE_BYTES] [COLUMNS]" >&2; exit 2; }
[[ -n ${MYSQL_DSN:-} && -n ${MYSQL_DOCTOR_ROOT_DSN:-} ]] || eval "$(bash "$ROOT/scripts/servers.sh" env)"
[[ -n ${MYSQL_DSN:-} && -n ${MYSQL_DOCTOR_ROOT_DSN:-} ]] ||
  { echo "MYSQL_DSN and MYSQL_DOCTOR_ROOT_DSN must be set: bash scripts/servers.sh start" >&2; exit 1; }
# The administrator connects over the server's socket (the root DSN's ?socket=).
socket=${MYSQL_DOCTOR_ROOT_DSN#*socket=}
socket=${socket%%&*}
reader=${MYSQL_DSN#mysql://}
reader=${reader%%:*}
admin() { mariadb -uroot -S "$socket" -e "$1"; }
schema=bench_wide_value_mysql
cfg=$(mktemp --suffix=.yaml)
cleanup() {
  rm -f "$cfg"
  admin "REVOKE SELECT ON $schema.* FROM '$reader'@'127.0.0.1'" 2>/dev/null || true
  admin "DROP DATABASE IF EXISTS $schema" || true
}
trap cleanup EXIT
cols="" values="" small="" list=""
for ((i = 1; i <= COLUMNS; i++)); do
  cols+=", b$i LONGTEXT"
  values+=", REPEAT('x', $SIZE)"
  small+=", 'small'"
  list+=", b$i"
done
admin "DROP DATABASE IF EXISTS $schema; CREATE DATABASE $schema;
  CREATE TABLE $schema.v (id INT PRIMARY KEY$cols);
  INSERT INTO $schema.v VALUES (1$small);
  INSERT INTO $schema.v SELECT 2$values;
  GRANT SELECT ON $schema.* TO '$reader'@'127.0.0.1';"
cat >"$cfg" <<YAML
server: {self_check: off}
limits: {max_bytes: 262144, timeout_ms: 120000}
mysql:
  tools:
    read_value:
      description: One stored row by id.
      statement: SELECT id$list FROM $schema.v WHERE id = ?
      parameters: [{name: id, type: integer, description: Row.}]
YAML
# shellcheck source=bench/lib/stdio_server.sh
source "$ROOT/bench/lib/stdio_server.sh"
SERVER_DSN=MYSQL_DSN start_server "$cfg" wide_value_mysql
measure_wide "a row of $COLUMNS values of $SIZE bytes"
