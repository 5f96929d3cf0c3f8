# shellcheck shell=bash
# A throwaway MariaDB 10.11 server under .run/mariadb for tests and the demo (sourced by servers.sh).
#
# Access model:
# - the administrative account is the server's OS owner (`mysql` when we run as root, else the
#   calling user) over the server's own Unix socket with unix_socket authentication: no password
#   exists for it, and the socket's directory is mode 0700, so only root or that OS user reach it;
# - everything else goes over TCP on 127.0.0.1 with passwords from .run/secrets.env:
#   mcpdb_ro (SELECT on demo.* only: the agent's principal) and mcpdb_admin (all on demo.*: the
#   demo loader and test fixtures). Both exist only @'127.0.0.1' (skip-name-resolve);
# - the doctor's test accounts (mcpdb_doc_*@'127.0.0.1', one password MARIADB_DOCTOR_PASSWORD):
#   one write path each, reached through a role of its own, plus a clean SELECT-only one, and the
#   demo.mcpdb_doc_* routines and views the stored-function check is tested on (see
#   mariadb_doctor_sql and tests/integration/mysql/doctor.cmake).

MARIADB_DIR="$RUN_DIR/mariadb"
MARIADB_DATA="$MARIADB_DIR/data"
MARIADB_LOG="$MARIADB_DIR/mariadbd.log"
MARIADB_PIDFILE="$MARIADB_DIR/mariadbd.pid"
MARIADB_CNF="$MARIADB_DIR/my.cnf"
MARIADB_DB=demo
MARIADB_PORT="${MCPDB_MARIADB_PORT:-$(recorded_port mariadb 23306)}"

# As root (CI), the server runs as an unprivileged OS user; otherwise as the calling user.
if [[ $(id -u) -eq 0 ]]; then
  MARIADB_OS_USER="${MCPDB_MARIADB_OS_USER:-mysql}"
else
  MARIADB_OS_USER="$(id -un)"
fi

# as_mariadb CMD...: run CMD as the server's OS owner (fd 9, servers.sh's lock, closed so that a
# daemon started here never inherits it).
as_mariadb() {
  if [[ $(id -u) -eq 0 ]]; then
    (cd "$MARIADB_DIR" && runuser -u "$MARIADB_OS_USER" -- "$@" 9>&-)
  else
    (cd "$MARIADB_DIR" && "$@" 9>&-)
  fi
}

# The Unix socket path has a ~107-byte limit; fall back to a private /tmp directory when the
# repository sits too deep.
mariadb_socket() {
  local sock="$MARIADB_DIR/mariadbd.sock"
  if ((${#sock} > 100)); then
    sock="/tmp/mcpdb-mariadb-$(printf '%s' "$ROOT" | md5sum | cut -c1-12)/mariadbd.sock"
  fi
  printf '%s' "$sock"
}

mariadb_port() { recorded_port mariadb "$MARIADB_PORT"; }

# TLS material of the local server, made once: a throwaway CA and a server certificate for
# IP 127.0.0.1 only (no DNS name), so that tests can prove both a verified connection to
# 127.0.0.1 and a refused one to "localhost" (name mismatch). The CA certificate is public
# (MCPDB_MARIADB_CA in servers.sh env); the keys stay in the server's 0700 directory.
MARIADB_TLS_DIR="$MARIADB_DIR/tls"
MARIADB_CA="$MARIADB_TLS_DIR/ca.pem"

mariadb_make_tls() {
  [[ -s $MARIADB_TLS_DIR/server-cert.pem && -s $MARIADB_CA ]] && return 0
  command -v openssl >/dev/null || die "openssl not found; run scripts/install.sh"
  local tmp="$MARIADB_DIR/tls.init"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  (
    cd "$tmp" || exit 1
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=mcp-dbserver local test CA" \
      -keyout ca-key.pem -out ca.pem
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server-key.pem -out server.csr
    printf 'subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\n' >ext.cnf
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 \
      -extfile ext.cnf -out server-cert.pem
    # The CA signs this one certificate and is then thrown away: nothing else can be issued.
    rm -f server.csr ext.cnf ca.srl ca-key.pem
    chmod 0644 ca.pem server-cert.pem
  ) >"$MARIADB_DIR/tls.log" 2>&1 || {
    show_log_tail "$MARIADB_DIR/tls.log"
    die "mariadb: making the test TLS certificates failed"
  }
  [[ $(id -u) -eq 0 ]] && chown -R "$MARIADB_OS_USER:" "$tmp"
  rm -rf "$MARIADB_TLS_DIR"
  mv "$tmp" "$MARIADB_TLS_DIR"
}

# mariadb_load_secrets: the two passwords, generated once per .run directory and appended to the
# shared secrets file (which may predate this server), then read.
mariadb_load_secrets() {
  load_secrets
  local key
  for key in MARIADB_RO_PASSWORD MARIADB_ADMIN_PASSWORD MARIADB_DOCTOR_PASSWORD; do
    if ! grep -q "^$key=" "$SECRETS_FILE"; then
      (umask 077 && echo "$key=$(random_secret)" >>"$SECRETS_FILE")
    fi
  done
  local line
  while IFS= read -r line; do
    [[ $line =~ ^(MARIADB_RO_PASSWORD|MARIADB_ADMIN_PASSWORD|MARIADB_DOCTOR_PASSWORD)=([0-9a-f]+)$ ]] || continue
    printf -v "${BASH_REMATCH[1]}" '%s' "${BASH_REMATCH[2]}"
  done <"$SECRETS_FILE"
  [[ -n ${MARIADB_RO_PASSWORD:-} && -n ${MARIADB_ADMIN_PASSWORD:-} && -n ${MARIADB_DOCTOR_PASSWORD:-} ]] ||
    die "$SECRETS_FILE has no MariaDB passwords; delete it (and .run/mariadb) and run start again"
}

# mariadb_running: the server recorded in the pid file is alive (zombies count as dead).
mariadb_running() {
  local pid
  pid=$(cat "$MARIADB_PIDFILE" 2>/dev/null) || return 1
  pid_alive "$pid" mariadbd
}

# mariadb_ready PORT: the server answers the protocol's ping on 127.0.0.1:PORT (no login needed).
mariadb_ready() {
  # --skip-ssl: the client would otherwise try TLS, which this server does not offer.
  mariadb-admin --no-defaults --skip-ssl --protocol=tcp -h "$BIND_HOST" -P "$1" --connect-timeout=2 ping
}

mariadb_prepare_dirs() {
  command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]] ||
    die "MariaDB not found; run scripts/install.sh"
  ensure_run_dir
  mkdir -p "$MARIADB_DIR" "$(dirname "$(mariadb_socket)")"
  if [[ $(id -u) -eq 0 ]]; then
    id -u "$MARIADB_OS_USER" >/dev/null 2>&1 || die "OS user '$MARIADB_OS_USER' does not exist (set MCPDB_MARIADB_OS_USER)"
    chown "$MARIADB_OS_USER:" "$MARIADB_DIR" "$(dirname "$(mariadb_socket)")"
    if ! runuser -u "$MARIADB_OS_USER" -- test -w "$MARIADB_DIR"; then
      die "OS user '$MARIADB_OS_USER' cannot reach $MARIADB_DIR (a parent directory is not traversable); move the checkout or set MCPDB_MARIADB_OS_USER"
    fi
  fi
  chmod 0700 "$MARIADB_DIR" "$(dirname "$(mariadb_socket)")"
}

# mariadb_write_config PORT: the only option file the server reads (--defaults-file), written on
# every start so that a changed port takes effect; Debian's /etc/mysql files are never read.
mariadb_write_config() {
  as_mariadb tee "$MARIADB_CNF" >/dev/null <<EOF
# Managed by scripts/servers.sh: a throwaway local server, loopback only.
[mariadbd]
datadir = $MARIADB_DATA
socket = $(mariadb_socket)
pid-file = $MARIADB_PIDFILE
log-error = $MARIADB_LOG
port = $1
bind-address = $BIND_HOST
skip-name-resolve
# TLS offered (not required): the client's ssl-mode decides; see mariadb_make_tls.
ssl-ca = $MARIADB_CA
ssl-cert = $MARIADB_TLS_DIR/server-cert.pem
ssl-key = $MARIADB_TLS_DIR/server-key.pem
# No file import from the client's disk, whatever a client asks for.
local-infile = 0
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
max_connections = 100
# Test data only: trade durability and features for start-up speed and memory.
skip-log-bin
performance-schema = OFF
innodb_buffer_pool_size = 64M
innodb_log_file_size = 16M
innodb_flush_log_at_trx_commit = 0
innodb_doublewrite = 0
EOF
}

mariadb_install_db() {
  local tmp="$MARIADB_DIR/data.init"
  log "mariadb: install-db (${MARIADB_DATA#"$ROOT"/})"
  as_mariadb rm -rf "$tmp"
  # Root and the OS owner authenticate with unix_socket only (no password anywhere).
  # The server's own option file (small redo log and buffer pool) keeps the bootstrap fast.
  if ! as_mariadb mariadb-install-db --defaults-file="$MARIADB_CNF" --datadir="$tmp" --user="$MARIADB_OS_USER" \
    --auth-root-authentication-method=socket --skip-test-db --skip-name-resolve \
    >"$MARIADB_DIR/install-db.log" 2>&1; then
    show_log_tail "$MARIADB_DIR/install-db.log"
    show_log_tail "$MARIADB_LOG"
    die "mariadb: install-db failed"
  fi
  as_mariadb mv "$tmp" "$MARIADB_DATA"
}

# mariadb_launch: the server in its own session, detached from this script (no init system).
mariadb_launch() {
  local -a user_opt=()
  [[ $(id -u) -eq 0 ]] && user_opt=(--user="$MARIADB_OS_USER")
  rm -f "$MARIADB_PIDFILE"
  # exec all the way down: no shell of ours is left waiting for it (holding the lock's fd 9).
  (
    exec 9>&-
    cd "$MARIADB_DIR" || exit 1
    exec setsid -f mariadbd --defaults-file="$MARIADB_CNF" "${user_opt[@]}" \
      </dev/null >>"$MARIADB_DIR/stdout.log" 2>&1
  )
}

mariadb_start() {
  local t0 port
  t0=$(now_ms)
  mariadb_prepare_dirs
  if mariadb_running; then
    port=$(mariadb_port)
    note_port_override mariadb "$port" "$MARIADB_PORT" MCPDB_MARIADB_PORT
    wait_until "$READY_TIMEOUT" mariadb "$MARIADB_LOG" "" "" mariadb_ready "$port" || die "mariadb is running but not answering on $BIND_HOST:$port"
    log "mariadb: already running on $BIND_HOST:$port"
  else
    port=$MARIADB_PORT
    check_port_number MCPDB_MARIADB_PORT "$port"
    ensure_port_free mariadb "$port" MCPDB_MARIADB_PORT
    mariadb_make_tls
    mariadb_write_config "$port"
    [[ -d $MARIADB_DATA/mysql ]] || mariadb_install_db
    record_port mariadb "$port"
    log "mariadb: starting on $BIND_HOST:$port"
    mariadb_launch
    wait_until "$READY_TIMEOUT" mariadb "$MARIADB_LOG" "" "" mariadb_ready "$port" || die "mariadb did not accept TCP connections on $BIND_HOST:$port"
    log "mariadb: accepting connections after $(elapsed "$t0")"
  fi
  mariadb_provision
  log "mariadb: ready (database $MARIADB_DB, users provisioned) after $(elapsed "$t0")"
}

# mariadb_provision: idempotent database, users and grants. Passwords are applied on every start
# so they always match .run/secrets.env; the SQL (with them) goes through stdin, never argv.
mariadb_provision() {
  mariadb_load_secrets
  rm -f "$MARIADB_DIR/provision.log"
  if ! (umask 077 && as_mariadb mariadb --no-defaults --protocol=socket --socket="$(mariadb_socket)" \
    -u "$MARIADB_OS_USER" --batch --silent >"$MARIADB_DIR/provision.log" 2>&1) <<SQL; then
SET SESSION sql_log_off = 1;
CREATE DATABASE IF NOT EXISTS $MARIADB_DB CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
CREATE USER IF NOT EXISTS 'mcpdb_ro'@'127.0.0.1';
CREATE USER IF NOT EXISTS 'mcpdb_admin'@'127.0.0.1';
ALTER USER 'mcpdb_ro'@'127.0.0.1' IDENTIFIED BY '$MARIADB_RO_PASSWORD';
ALTER USER 'mcpdb_admin'@'127.0.0.1' IDENTIFIED BY '$MARIADB_ADMIN_PASSWORD';
-- Exactly these privileges, whatever an earlier start or a test granted.
REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'mcpdb_ro'@'127.0.0.1', 'mcpdb_admin'@'127.0.0.1';
GRANT SELECT ON $MARIADB_DB.* TO 'mcpdb_ro'@'127.0.0.1';
GRANT ALL PRIVILEGES ON $MARIADB_DB.* TO 'mcpdb_admin'@'127.0.0.1';
$(mariadb_doctor_sql)
SQL
    show_log_tail "$MARIADB_DIR/provision.log"
    die "mariadb: provisioning failed"
  fi
}

# The doctor's test accounts: NAME (after mcpdb_doc_), the env suffix, and the role that carries
# its one write path (none for the clean account and the routines account).
MARIADB_DOCTOR_ACCOUNTS=(
  "safe SAFE -"
  "insert INSERT mcpdb_doc_r_insert"
  "file FILE mcpdb_doc_r_file"
  "execute EXECUTE mcpdb_doc_r_execute"
  "process PROCESS mcpdb_doc_r_process"
  "temp TEMP mcpdb_doc_r_temp"
  "nested ROLE_NESTED mcpdb_doc_r_outer"
  "grant GRANT_OPTION mcpdb_doc_r_grant"
  "routines ROUTINES -"
)

# mariadb_doctor_sql: idempotent SQL (run by the server's administrator) for those accounts,
# their roles, and the demo.mcpdb_doc_* routines and views. Every account and role is reset to
# exactly these privileges on each start: the roles are dropped and made again (REVOKE ALL fails
# on a role that holds nothing), which also takes them from whoever a test gave them to.
mariadb_doctor_sql() {
  local db=$MARIADB_DB entry name suffix role user
  local routines="'mcpdb_doc_routines'@'127.0.0.1'"
  cat <<SQL
CREATE TABLE IF NOT EXISTS $db.mcpdb_doc_log (id INT AUTO_INCREMENT PRIMARY KEY);
SQL
  for role in insert file execute process temp outer inner deep grant; do
    cat <<SQL
DROP ROLE IF EXISTS mcpdb_doc_r_$role;
CREATE ROLE mcpdb_doc_r_$role;
SQL
    # Granting or revoking a role takes its ADMIN OPTION (global privileges do not suffice): the
    # administrator account of MYSQL_DOCTOR_ROOT_DSN gets it when it is not the one running this.
    if [[ $(mariadb_admin_user) != "$MARIADB_OS_USER" ]]; then
      echo "GRANT mcpdb_doc_r_$role TO '$(mariadb_admin_user)'@'localhost' WITH ADMIN OPTION;"
    fi
  done
  for entry in "${MARIADB_DOCTOR_ACCOUNTS[@]}"; do
    read -r name suffix role <<<"$entry"
    user="'mcpdb_doc_$name'@'127.0.0.1'"
    cat <<SQL
CREATE USER IF NOT EXISTS $user;
ALTER USER $user IDENTIFIED BY '$MARIADB_DOCTOR_PASSWORD';
REVOKE ALL PRIVILEGES, GRANT OPTION FROM $user;
GRANT SELECT ON $db.* TO $user;
SQL
    if [[ $role != - ]]; then
      printf 'GRANT %s TO %s;
SET DEFAULT ROLE %s FOR %s;
' "$role" "$user" "$role" "$user"
    fi
  done
  # Routines and views first (EXECUTE needs them to exist). DEFINER decides who may read a body
  # in information_schema: the routines account for the visible ones, root for the hidden one.
  cat <<SQL
DELIMITER //
CREATE OR REPLACE DEFINER='root'@'localhost' PROCEDURE $db.mcpdb_doc_write_proc() MODIFIES SQL DATA
BEGIN INSERT INTO $db.mcpdb_doc_log () VALUES (); END //
CREATE OR REPLACE DEFINER=$routines FUNCTION $db.mcpdb_doc_pure(x INT) RETURNS INT DETERMINISTIC
RETURN x + 1 //
CREATE OR REPLACE DEFINER=$routines FUNCTION $db.mcpdb_doc_calls_pure() RETURNS INT
RETURN mcpdb_doc_pure(1) * 2 //
CREATE OR REPLACE DEFINER=$routines FUNCTION $db.mcpdb_doc_writer() RETURNS INT MODIFIES SQL DATA
BEGIN INSERT INTO $db.mcpdb_doc_log () VALUES (); RETURN 1; END //
CREATE OR REPLACE DEFINER=$routines FUNCTION $db.mcpdb_doc_calls_writer() RETURNS INT
RETURN $db.mcpdb_doc_writer() + 1 //
CREATE OR REPLACE DEFINER=$routines FUNCTION $db.mcpdb_doc_cycle_a() RETURNS INT
RETURN $db.mcpdb_doc_cycle_b() //
CREATE OR REPLACE DEFINER=$routines FUNCTION $db.mcpdb_doc_cycle_b() RETURNS INT
RETURN $db.mcpdb_doc_cycle_a() //
CREATE OR REPLACE DEFINER='root'@'localhost' FUNCTION $db.mcpdb_doc_hidden() RETURNS INT
RETURN 1 //
DELIMITER ;
SQL
  # EXECUTE before the views: a view's definer must be able to call what it calls.
  for name in pure calls_pure writer calls_writer cycle_a cycle_b hidden; do
    echo "GRANT EXECUTE ON FUNCTION $db.mcpdb_doc_$name TO $routines;"
  done
  cat <<SQL
CREATE OR REPLACE DEFINER=$routines SQL SECURITY DEFINER VIEW $db.mcpdb_doc_v_pure AS
  SELECT $db.mcpdb_doc_pure(1) AS x;
CREATE OR REPLACE DEFINER=$routines SQL SECURITY DEFINER VIEW $db.mcpdb_doc_v_writer AS
  SELECT $db.mcpdb_doc_writer() AS x;
CREATE OR REPLACE DEFINER=$routines SQL SECURITY DEFINER VIEW $db.mcpdb_doc_v_nested AS
  SELECT x FROM $db.mcpdb_doc_v_writer;
GRANT INSERT ON $db.* TO mcpdb_doc_r_insert;
GRANT FILE ON *.* TO mcpdb_doc_r_file;
GRANT EXECUTE ON PROCEDURE $db.mcpdb_doc_write_proc TO mcpdb_doc_r_execute;
GRANT PROCESS ON *.* TO mcpdb_doc_r_process;
GRANT CREATE TEMPORARY TABLES ON $db.* TO mcpdb_doc_r_temp;
GRANT mcpdb_doc_r_inner TO mcpdb_doc_r_outer;
GRANT mcpdb_doc_r_deep TO mcpdb_doc_r_inner;
GRANT UPDATE ON $db.* TO mcpdb_doc_r_inner;
GRANT DELETE ON $db.* TO mcpdb_doc_r_deep;
GRANT SELECT ON $db.* TO mcpdb_doc_r_grant WITH GRANT OPTION;
SQL
}

# mariadb_doctor_env PORT: NAME=VALUE lines of the doctor's test accounts (for servers.sh env).
mariadb_doctor_env() {
  local entry name suffix role
  for entry in "${MARIADB_DOCTOR_ACCOUNTS[@]}"; do
    read -r name suffix role <<<"$entry"
    printf 'MYSQL_DOCTOR_DSN_%s=mysql://mcpdb_doc_%s:%s@%s:%s/%s\n' "$suffix" "$name" \
      "$MARIADB_DOCTOR_PASSWORD" "$BIND_HOST" "$1" "$MARIADB_DB"
  done
  # The server's administrator over its Unix socket (unix_socket authentication: only the OS
  # user root or the server's owner gets in), for tests that apply a fix to a throwaway account.
  printf 'MYSQL_DOCTOR_ROOT_DSN=mysql://%s@localhost/%s?socket=%s\n' \
    "$(mariadb_admin_user)" "$MARIADB_DB" "$(mariadb_socket)"
}

# The server account of the OS user running the tests: root as root, else the calling user (then
# the server's owner), both authenticated by unix_socket.
mariadb_admin_user() {
  if [[ $(id -u) -eq 0 ]]; then echo root; else id -un; fi
}

mariadb_stop() {
  if ! mariadb_running; then
    log "mariadb: not running"
    return 0
  fi
  log "mariadb: stopping"
  # SIGTERM is the server's clean shutdown; stop_pid escalates after 10 s.
  stop_pid mariadb "$(cat "$MARIADB_PIDFILE")" mariadbd
  log "mariadb: stopped"
}

mariadb_status() {
  local port
  port=$(mariadb_port)
  if mariadb_running; then
    if mariadb_ready "$port" >/dev/null 2>&1; then
      log "mariadb: running, ready on $BIND_HOST:$port (database $MARIADB_DB)"
      return 0
    fi
    log "mariadb: running but NOT answering on $BIND_HOST:$port"
    return 1
  fi
  log "mariadb: stopped"
  return 1
}
