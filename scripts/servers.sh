#!/usr/bin/env bash
# Local throwaway servers for mcp-dbserver's integration tests, benchmarks and demo:
#   PostgreSQL 15 + pgvector, dynalite (DynamoDB API), CongoServer (MongoDB wire protocol),
#   MariaDB 10.11 (the MySQL engine's server), Redis 7 (the shared limits store, in memory).
# Everything listens on 127.0.0.1 only; all state lives in <repo>/.run/.
#
#   scripts/servers.sh start [SERVER...]    start (or verify) servers; default: all
#   scripts/servers.sh stop [SERVER...]     stop servers; default: all
#   scripts/servers.sh restart [SERVER...]
#   scripts/servers.sh status               exit 0 only when every server answers
#   scripts/servers.sh env                  print `export` lines: eval "$(scripts/servers.sh env)"
#   SERVER: postgres | dynalite | congo | mariadb (alias: mysql) | redis
#
# Ports (override, then restart): MCPDB_PG_PORT=25432, MCPDB_DYNALITE_PORT=28000,
# MCPDB_CONGO_PORT=27217, MCPDB_MARIADB_PORT=23306, MCPDB_REDIS_PORT=26379.
# MCPDB_READY_TIMEOUT (seconds, default 30).
# Progress goes to stderr.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"
# shellcheck source=scripts/lib/postgres.sh
source "$ROOT/scripts/lib/postgres.sh"
# shellcheck source=scripts/lib/node_servers.sh
source "$ROOT/scripts/lib/node_servers.sh"
# shellcheck source=scripts/lib/mariadb.sh
source "$ROOT/scripts/lib/mariadb.sh"
# shellcheck source=scripts/lib/redis.sh
source "$ROOT/scripts/lib/redis.sh"

ALL_SERVERS=(postgres dynalite congo mariadb redis)

usage() {
  sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# servers_from_args ARGS...: the selected server names (all when none given).
SELECTED=()
select_servers() {
  SELECTED=()
  (($#)) || set -- "${ALL_SERVERS[@]}"
  local s
  for s in "$@"; do
    case $s in
      postgres | pg | postgresql) SELECTED+=(postgres) ;;
      dynalite | dynamodb | dynamo) SELECTED+=(dynalite) ;;
      congo | mongo | mongodb) SELECTED+=(congo) ;;
      mariadb | mysql) SELECTED+=(mariadb) ;;
      redis | valkey) SELECTED+=(redis) ;;
      *) die "unknown server '$s' (expected: ${ALL_SERVERS[*]})" ;;
    esac
  done
}

# One start/stop at a time per .run directory (parallel CI jobs, several engineers).
take_lock() {
  ensure_run_dir
  exec 9>"$RUN_DIR/.servers.lock"
  flock -w 120 9 || die "another scripts/servers.sh is still running (lock $RUN_DIR/.servers.lock)"
}

# env_lines: the connection variables for tests, the server and the demo loaders.
env_lines() {
  local pg dyn congo my
  pg=$(pg_port)
  dyn=$(dynalite_port)
  congo=$(congo_port)
  my=$(mariadb_port)
  load_secrets
  mariadb_load_secrets
  local -a vars=(
    "POSTGRES_DSN=postgresql://mcp_reader:$PG_READER_PASSWORD@$BIND_HOST:$pg/$PG_DB"
    "MCPDB_PG_ADMIN_DSN=postgresql://mcp_admin:$PG_ADMIN_PASSWORD@$BIND_HOST:$pg/$PG_DB"
    "MCPDB_PG_OVERPRIV_DSN=postgresql://mcp_overpriv:$PG_OVERPRIV_PASSWORD@$BIND_HOST:$pg/$PG_DB"
    # The superuser, for tests that create roles: the cluster's Unix socket (mode 0700), so only
    # root or the cluster's OS user can use it.
    "MCPDB_PG_SUPERUSER_DSN=host=$(pg_socket_dir) port=$pg user=postgres dbname=$PG_DB"
    "AWS_REGION=$LOCAL_AWS_REGION"
    "AWS_ENDPOINT_URL_DYNAMODB=http://$BIND_HOST:$dyn"
    "AWS_ACCESS_KEY_ID=$LOCAL_AWS_ACCESS_KEY_ID"
    "AWS_SECRET_ACCESS_KEY=$LOCAL_AWS_SECRET_ACCESS_KEY"
    "MCPDB_DYNAMODB_SERVER=dynalite"
    "MONGODB_URI=mongodb://$BIND_HOST:$congo"
    "MONGODB_DATABASE=$PG_DB"
    "MCPDB_MARIADB_PORT=$my"
    "MCPDB_MARIADB_CA=$MARIADB_CA"
    "MYSQL_DSN=mysql://mcpdb_ro:$MARIADB_RO_PASSWORD@$BIND_HOST:$my/$MARIADB_DB"
    "MYSQL_ADMIN_DSN=mysql://mcpdb_admin:$MARIADB_ADMIN_PASSWORD@$BIND_HOST:$my/$MARIADB_DB"
    "MCPDB_REDIS_PORT=$(redis_port)"
  )
  mapfile -t -O "${#vars[@]}" vars < <(mariadb_doctor_env "$my")
  echo "# mcp-dbserver local test servers (scripts/servers.sh); throwaway credentials."
  local v
  for v in "${vars[@]}"; do
    printf 'export %s=%q\n' "${v%%=*}" "${v#*=}"
  done
}

write_env_file() {
  (
    umask 077
    env_lines >"$ENV_FILE.tmp"
    mv "$ENV_FILE.tmp" "$ENV_FILE"
  )
  chmod 0600 "$ENV_FILE"
}

cmd_start() {
  select_servers "$@"
  take_lock
  local t0 s
  t0=$(now_ms)
  load_secrets
  for s in "${SELECTED[@]}"; do "${s/postgres/pg}_start"; done
  write_env_file
  log "all requested servers ready after $(elapsed "$t0"); connection variables: eval \"\$(scripts/servers.sh env)\" (also in ${ENV_FILE#"$ROOT"/})"
}

cmd_stop() {
  select_servers "$@"
  take_lock
  local s
  for s in "${SELECTED[@]}"; do "${s/postgres/pg}_stop"; done
}

cmd_status() {
  local s rc=0
  for s in "${ALL_SERVERS[@]}"; do "${s/postgres/pg}_status" || rc=1; done
  return "$rc"
}

cmd_env() {
  [[ -s $SECRETS_FILE ]] || die "no .run/secrets.env yet: run scripts/servers.sh start first"
  env_lines
}

case ${1:-} in
  start) shift && cmd_start "$@" ;;
  stop) shift && cmd_stop "$@" ;;
  restart) shift && cmd_stop "$@" && cmd_start "$@" ;;
  status) cmd_status ;;
  env) cmd_env ;;
  -h | --help | help | "") usage ;;
  *)
    log "unknown command '$1'"
    usage
    ;;
esac
