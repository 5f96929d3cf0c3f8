# shellcheck shell=bash
# A throwaway PostgreSQL 15 cluster under .run/pg for tests and the demo (sourced by servers.sh).
#
# Access model:
# - the superuser `postgres` connects only over the cluster's own Unix socket (trust, socket mode
#   0700 so only the cluster's OS owner can reach it); it is used here for provisioning, and by
#   the tests that create throwaway roles (MCPDB_PG_SUPERUSER_DSN);
# - everything else goes over TCP on 127.0.0.1 with scram-sha-256 passwords (real credentials);
# - database mcpdemo (owner mcp_admin, extension vector), roles mcp_admin / mcp_reader /
#   mcp_overpriv as described in pg_provision below, with every remedy `doctor` prints applied
#   (see SECURITY.md), so that the reader's `doctor` pass is honest.

PG_BIN="${MCPDB_PG_BINDIR:-/usr/lib/postgresql/15/bin}"
PG_DIR="$RUN_DIR/pg"
PG_DATA="$PG_DIR/data"
PG_LOG="$PG_DIR/postgres.log"
PG_DB=mcpdemo

# As root (CI), the cluster runs as an unprivileged OS user; otherwise as the calling user.
if [[ $(id -u) -eq 0 ]]; then
  PG_OS_USER="${MCPDB_PG_OS_USER:-postgres}"
else
  PG_OS_USER="$(id -un)"
fi

# as_pg CMD...: run CMD as the cluster's OS owner, from a directory that user can read. Fd 9
# (servers.sh's lock) is closed so that a daemon started here never inherits the lock.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    (cd "$PG_DIR" && runuser -u "$PG_OS_USER" -- "$@" 9>&-)
  else
    (cd "$PG_DIR" && "$@" 9>&-)
  fi
}

# The Unix socket path has a ~107-byte limit; fall back to a private /tmp directory when the
# repository sits too deep.
pg_socket_dir() {
  local dir="$PG_DIR/sock"
  if ((${#dir} + 20 > 100)); then
    dir="/tmp/mcpdb-pg-$(printf '%s' "$ROOT" | md5sum | cut -c1-12)"
  fi
  printf '%s' "$dir"
}

# pg_running: the postmaster recorded in postmaster.pid is alive (zombies count as dead).
pg_running() {
  local pid
  [[ -f $PG_DATA/PG_VERSION ]] || return 1
  pid=$(head -n1 "$PG_DATA/postmaster.pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && proc_live "$pid"
}

# pg_clear_stale: after a crash, postmaster.pid and the socket lock may name a dead (or zombie)
# postmaster; PostgreSQL's own check uses kill(pid, 0), which a zombie passes, so remove them.
pg_clear_stale() {
  local pidfile="$PG_DATA/postmaster.pid" pid port sockdir
  [[ -f $pidfile ]] || return 0
  pid=$(sed -n 1p "$pidfile")
  port=$(sed -n 4p "$pidfile")
  sockdir=$(sed -n 5p "$pidfile")
  if [[ $pid =~ ^[0-9]+$ ]] && proc_live "$pid"; then return 0; fi
  log "postgres: removing the stale postmaster.pid of dead process $pid"
  as_pg rm -f "$pidfile"
  if [[ $port =~ ^[0-9]+$ && -n $sockdir && -f $sockdir/.s.PGSQL.$port.lock ]]; then
    as_pg rm -f "$sockdir/.s.PGSQL.$port.lock" "$sockdir/.s.PGSQL.$port"
  fi
}

pg_port() { recorded_port pg "$PG_PORT"; }

# pg_ready PORT: the server accepts TCP connections on 127.0.0.1:PORT.
pg_ready() {
  "$PG_BIN/pg_isready" -q -h "$BIND_HOST" -p "$1" -d "$PG_DB" -t 2
}

pg_prepare_dirs() {
  [[ -x $PG_BIN/initdb ]] || die "PostgreSQL 15 not found in $PG_BIN; run scripts/install.sh (or set MCPDB_PG_BINDIR)"
  ensure_run_dir
  mkdir -p "$PG_DIR"
  local sock
  sock=$(pg_socket_dir)
  mkdir -p "$sock"
  if [[ $(id -u) -eq 0 ]]; then
    id -u "$PG_OS_USER" >/dev/null 2>&1 || die "OS user '$PG_OS_USER' does not exist (set MCPDB_PG_OS_USER)"
    chown "$PG_OS_USER:" "$PG_DIR" "$sock"
    [[ -d $PG_DATA ]] && chown -R "$PG_OS_USER:" "$PG_DATA"
    if ! runuser -u "$PG_OS_USER" -- test -w "$PG_DIR"; then
      die "OS user '$PG_OS_USER' cannot reach $PG_DIR (a parent directory is not traversable); move the checkout or set MCPDB_PG_OS_USER"
    fi
  fi
  chmod 0700 "$PG_DIR" "$sock"
}

pg_write_config() {
  local datadir=$1 port=$2 sock
  sock=$(pg_socket_dir)
  # Written on every start so that a changed port or socket directory takes effect.
  as_pg tee "$datadir/mcpdb.conf" >/dev/null <<EOF
# Managed by scripts/servers.sh: a throwaway local cluster, loopback only.
listen_addresses = '$BIND_HOST'
port = $port
unix_socket_directories = '$sock'
unix_socket_permissions = 0700
password_encryption = 'scram-sha-256'
# Test data only: trade durability for speed.
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
max_connections = 100
log_line_prefix = '%m [%p] %q%u@%d '
log_min_error_statement = error
EOF
  as_pg tee "$datadir/pg_hba.conf" >/dev/null <<'EOF'
# Managed by scripts/servers.sh.
# TYPE  DATABASE  USER      ADDRESS        METHOD
local   all       postgres                 trust
host    all       all       127.0.0.1/32   scram-sha-256
EOF
}

pg_initdb() {
  local tmp="$PG_DIR/data.init"
  log "postgres: initdb (${PG_DATA#"$ROOT"/})"
  as_pg rm -rf "$tmp"
  if ! as_pg "$PG_BIN/initdb" -D "$tmp" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C --no-sync >"$PG_DIR/initdb.log" 2>&1; then
    show_log_tail "$PG_DIR/initdb.log"
    die "postgres: initdb failed"
  fi
  printf "\ninclude_if_exists = 'mcpdb.conf'\n" | as_pg tee -a "$tmp/postgresql.conf" >/dev/null
  as_pg mv "$tmp" "$PG_DATA"
}

pg_start() {
  local t0 port
  t0=$(now_ms)
  pg_prepare_dirs
  if pg_running; then
    port=$(pg_port)
    note_port_override postgres "$port" "$PG_PORT" MCPDB_PG_PORT
    wait_until "$READY_TIMEOUT" "postgres" "$PG_LOG" "" "" pg_ready "$port" || die "postgres is running but not answering on $BIND_HOST:$port"
    log "postgres: already running on $BIND_HOST:$port"
  else
    port=$PG_PORT
    check_port_number MCPDB_PG_PORT "$port"
    ensure_port_free postgres "$port" MCPDB_PG_PORT
    [[ -f $PG_DATA/PG_VERSION ]] || pg_initdb
    pg_clear_stale
    pg_write_config "$PG_DATA" "$port"
    record_port pg "$port"
    log "postgres: starting on $BIND_HOST:$port"
    if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t "$READY_TIMEOUT" start >/dev/null 2>&1; then
      show_log_tail "$PG_LOG"
      die "postgres: failed to start within ${READY_TIMEOUT}s"
    fi
    wait_until "$READY_TIMEOUT" "postgres" "$PG_LOG" "" "" pg_ready "$port" || die "postgres did not accept TCP connections on $BIND_HOST:$port"
    log "postgres: accepting connections after $(elapsed "$t0")"
  fi
  pg_provision "$port"
  log "postgres: ready (database $PG_DB, roles provisioned) after $(elapsed "$t0")"
}

# pg_provision PORT: idempotent database, extension, roles and grants. Passwords are applied on
# every start so they always match .run/secrets.env.
pg_provision() {
  local port=$1 sock
  sock=$(pg_socket_dir)
  load_secrets
  # The SQL (with the passwords) goes through stdin, never the command line; errors are not
  # allowed to echo the statement into the server log.
  rm -f "$PG_DIR/provision.log"
  if ! (umask 077 && as_pg "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=terse -h "$sock" -p "$port" \
    -U postgres -d postgres >"$PG_DIR/provision.log" 2>&1) <<SQL; then
SET log_min_error_statement = panic;
SET log_statement = 'none';
SET client_min_messages = warning;
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mcp_admin') THEN CREATE ROLE mcp_admin; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mcp_reader') THEN CREATE ROLE mcp_reader; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mcp_overpriv') THEN CREATE ROLE mcp_overpriv; END IF;
END
\$\$;
ALTER ROLE mcp_admin    LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$PG_ADMIN_PASSWORD';
ALTER ROLE mcp_reader   LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$PG_READER_PASSWORD';
ALTER ROLE mcp_overpriv LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$PG_OVERPRIV_PASSWORD';
ALTER ROLE mcp_reader SET default_transaction_read_only = on;
SELECT 'CREATE DATABASE $PG_DB OWNER mcp_admin'
  WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '$PG_DB') \gexec
ALTER DATABASE $PG_DB OWNER TO mcp_admin;
REVOKE ALL ON DATABASE $PG_DB FROM PUBLIC;
GRANT CONNECT ON DATABASE $PG_DB TO mcp_reader, mcp_overpriv;
-- doctor cannot inspect databases it is not connected to: PUBLIC connects to none of them
-- (in each, PUBLIC could create temporary tables and large objects).
REVOKE CONNECT, TEMPORARY ON DATABASE postgres FROM PUBLIC;
REVOKE CONNECT, TEMPORARY ON DATABASE template1 FROM PUBLIC;
\connect $PG_DB
SET log_min_error_statement = panic;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
-- The demo tables live in schema public (owned by the database owner, mcp_admin).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM mcp_reader;
-- The large-object functions that create, change, delete, import or export one are executable by
-- PUBLIC and work inside a READ ONLY transaction: nobody but an admin needs them here.
REVOKE EXECUTE ON FUNCTION pg_catalog.lo_creat(integer), pg_catalog.lo_create(oid),
  pg_catalog.lo_from_bytea(oid, bytea), pg_catalog.lo_open(oid, integer),
  pg_catalog.lowrite(integer, bytea), pg_catalog.lo_put(oid, bigint, bytea),
  pg_catalog.lo_truncate(integer, integer), pg_catalog.lo_truncate64(integer, bigint),
  pg_catalog.lo_unlink(oid), pg_catalog.lo_import(text), pg_catalog.lo_import(text, oid),
  pg_catalog.lo_export(oid, text) FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO mcp_reader, mcp_overpriv;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO mcp_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE mcp_admin IN SCHEMA public GRANT SELECT ON TABLES TO mcp_reader;
-- Deliberately over-privileged, for the doctor tests: it can write everything.
GRANT pg_write_all_data TO mcp_overpriv;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO mcp_overpriv;
ALTER DEFAULT PRIVILEGES FOR ROLE mcp_admin IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO mcp_overpriv;
SQL
    show_log_tail "$PG_DIR/provision.log"
    die "postgres: provisioning failed"
  fi
}

pg_stop() {
  if [[ ! -d $PG_DIR ]] || ! pg_running; then
    log "postgres: not running"
    return 0
  fi
  log "postgres: stopping"
  if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1; then
    show_log_tail "$PG_LOG"
    die "postgres: pg_ctl stop failed"
  fi
  log "postgres: stopped"
}

pg_status() {
  local port
  port=$(pg_port)
  if [[ -d $PG_DIR ]] && pg_running; then
    if pg_ready "$port"; then
      log "postgres: running, ready on $BIND_HOST:$port (database $PG_DB)"
      return 0
    fi
    log "postgres: running but NOT answering on $BIND_HOST:$port"
    return 1
  fi
  log "postgres: stopped"
  return 1
}
