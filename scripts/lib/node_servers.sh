# shellcheck shell=bash
# The two Node-based local servers (sourced by servers.sh):
# - dynalite: a DynamoDB-compatible HTTP server, in memory;
# - congo: CongoServer, a MongoDB wire-protocol server, in memory (tools/congo-server.mjs).
# Each keeps .run/NAME/pid and .run/NAME/server.log.

NODE_BIN="${MCPDB_NODE:-node}"
# Clearly fake credentials: dynalite demands a SigV4 Authorization header but never checks it.
LOCAL_AWS_ACCESS_KEY_ID=AKIDLOCALFAKEKEY0000
LOCAL_AWS_SECRET_ACCESS_KEY=local-fake-secret-not-a-real-aws-key
LOCAL_AWS_REGION=us-east-1

DYNALITE_MARKER="dynalite/cli.js"
CONGO_MARKER="congo-server.mjs"

dynalite_port() { recorded_port dynalite "$DYNALITE_PORT"; }
congo_port() { recorded_port congo "$CONGO_PORT"; }

# dynalite_ready PORT: a signed ListTables answers 200.
dynalite_ready() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
    --aws-sigv4 "aws:amz:$LOCAL_AWS_REGION:dynamodb" \
    --user "$LOCAL_AWS_ACCESS_KEY_ID:$LOCAL_AWS_SECRET_ACCESS_KEY" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -d '{}' "http://$BIND_HOST:$1/") || return 1
  [[ $code == 200 ]]
}

# congo_ready PORT: the wrapper announced itself and the port accepts connections.
congo_ready() {
  grep -q '^ready ' "$RUN_DIR/congo/server.log" 2>/dev/null && tcp_open "$1"
}

# node_server_pid NAME MARKER: the recorded pid when that process is still ours.
node_server_pid() {
  local file="$RUN_DIR/$1/pid" pid=""
  [[ -r $file ]] && pid=$(<"$file")
  if pid_alive "$pid" "$2"; then printf '%s' "$pid"; fi
}

# node_server_start NAME MARKER PORT PORTVAR READYFN CMD...: start detached unless running,
# then wait for READYFN PORT.
node_server_start() {
  local name=$1 marker=$2 port=$3 portvar=$4 readyfn=$5
  shift 5
  local dir="$RUN_DIR/$name" t0 pid
  local logfile="$dir/server.log"
  t0=$(now_ms)
  ensure_run_dir
  mkdir -p "$dir"
  pid=$(node_server_pid "$name" "$marker")
  if [[ -n $pid ]]; then
    local wanted=$port
    port=$(recorded_port "$name" "$port")
    note_port_override "$name" "$port" "$wanted" "$portvar"
    wait_until "$READY_TIMEOUT" "$name" "$logfile" "$pid" "$marker" "$readyfn" "$port" ||
      die "$name (pid $pid) is running but not answering on $BIND_HOST:$port"
    log "$name: already running (pid $pid) on $BIND_HOST:$port"
    return 0
  fi
  command -v "$NODE_BIN" >/dev/null || die "node not found (run scripts/install.sh or set MCPDB_NODE)"
  check_port_number "$portvar" "$port"
  ensure_port_free "$name" "$port" "$portvar"
  rm -f "$dir/pid"
  log "$name: starting on $BIND_HOST:$port"
  # setsid: its own session, so the server outlives this script and its terminal or job group.
  # A background child of a non-interactive shell is not a group leader, so setsid execs in place
  # and $! is the server's pid. Fd 9 (servers.sh's lock) must not be inherited by the daemon.
  (cd "$ROOT" && exec setsid "$@" </dev/null >"$logfile" 2>&1 9>&-) &
  pid=$!
  printf '%s\n' "$pid" >"$dir/pid"
  record_port "$name" "$port"
  if ! wait_until "$READY_TIMEOUT" "$name" "$logfile" "$pid" "" "$readyfn" "$port"; then
    stop_pid "$name" "$pid" ""
    die "$name: failed to become ready on $BIND_HOST:$port"
  fi
  # Record the pid that actually holds the port, in case anything in between forked.
  local lpid
  lpid=$(listener_pid "$port")
  if [[ -n $lpid && $lpid != "$pid" ]] && pid_alive "$lpid" "$marker"; then
    printf '%s\n' "$lpid" >"$dir/pid"
    pid=$lpid
  fi
  log "$name: ready (pid $pid) after $(elapsed "$t0")"
}

node_server_stop() {
  local name=$1 marker=$2 pid
  pid=$(node_server_pid "$name" "$marker")
  if [[ -z $pid ]]; then
    log "$name: not running"
    rm -f "$RUN_DIR/$name/pid"
    return 0
  fi
  log "$name: stopping (pid $pid)"
  stop_pid "$name" "$pid" "$marker"
  rm -f "$RUN_DIR/$name/pid"
  log "$name: stopped"
}

node_server_status() {
  local name=$1 marker=$2 port=$3 readyfn=$4 pid
  pid=$(node_server_pid "$name" "$marker")
  if [[ -z $pid ]]; then
    log "$name: stopped"
    return 1
  fi
  if "$readyfn" "$port"; then
    log "$name: running (pid $pid), ready on $BIND_HOST:$port"
    return 0
  fi
  log "$name: running (pid $pid) but NOT answering on $BIND_HOST:$port"
  return 1
}

dynalite_start() {
  [[ -f $TOOLS_DIR/node_modules/dynalite/cli.js ]] || die "dynalite is not installed under tools/node_modules; run scripts/install.sh"
  node_server_start dynalite "$DYNALITE_MARKER" "$DYNALITE_PORT" MCPDB_DYNALITE_PORT dynalite_ready \
    "$NODE_BIN" "$TOOLS_DIR/node_modules/dynalite/cli.js" --host "$BIND_HOST" --port "$DYNALITE_PORT" \
    --createTableMs 0 --deleteTableMs 0 --updateTableMs 0
}
dynalite_stop() { node_server_stop dynalite "$DYNALITE_MARKER"; }
dynalite_status() { node_server_status dynalite "$DYNALITE_MARKER" "$(dynalite_port)" dynalite_ready; }

congo_start() {
  [[ -f $TOOLS_DIR/node_modules/@push.rocks/smartmongo/dist_ts/congodb/index.js ]] ||
    die "smartmongo (CongoServer) is not installed under tools/node_modules; run scripts/install.sh"
  node_server_start congo "$CONGO_MARKER" "$CONGO_PORT" MCPDB_CONGO_PORT congo_ready \
    "$NODE_BIN" "$TOOLS_DIR/congo-server.mjs" --host "$BIND_HOST" --port "$CONGO_PORT"
}
congo_stop() { node_server_stop congo "$CONGO_MARKER"; }
congo_status() { node_server_status congo "$CONGO_MARKER" "$(congo_port)" congo_ready; }
