# shellcheck shell=bash
# Sourced by cpu_per_call.sh, ab.sh, instructions_per_call.sh and cost_hook.sh: what one server
# process, and the PostgreSQL backends serving it, cost over a measured window, read from /proc;
# the config both a baseline build and the current one accept; the local servers' environment.
# Needs psql (the PostgreSQL client) for the backends.
#
#   cost_begin SERVER_PID DSN   # resolves the backends, then samples
#   ... load runs ...
#   cost_end [DSN]              # samples again; sets the COST_* figures below
#
# COST_DT (s), COST_SERVER_TICKS and COST_PG_TICKS (user + system clock ticks; COST_HZ per s),
# COST_SERVER_SWITCHES and COST_PG_SWITCHES (voluntary + involuntary, every thread), COST_PG_N
# (backends counted). The load runs call these through cost_hook.sh (mcpdb-loadgen --hook), so the
# window is exactly the load client's measured phase.

# proc_ticks PID: user + system clock ticks of the whole process (/proc/PID/stat sums every
# thread, exited ones included); empty once the process is gone.
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || true; }

# proc_switches PID: voluntary + involuntary context switches summed over every thread of PID.
# (/proc/PID/status alone counts the main thread only, which barely runs in a threaded server.)
proc_switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null |
    awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {s += $2} END {print s + 0}'
}

# tcp_port_pairs PID: "local_port,remote_port" of each established TCP connection PID holds, as
# a SQL VALUES list; empty when there is none.
tcp_port_pairs() {
  local inodes
  inodes=$(find "/proc/$1/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n' | sort -u)
  [[ -n $inodes ]] || return 0
  # /proc/PID/net/tcp{,6}: "sl local rem st ... inode"; addresses are HEX_ADDR:HEX_PORT, st 01 is
  # ESTABLISHED, the inode is field 10.
  cat "/proc/$1/net/tcp" "/proc/$1/net/tcp6" 2>/dev/null |
    awk -v inodes="$inodes" '
      function hex(h,   v, i) {  # mawk has no strtonum
        for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789ABCDEF", substr(h, i, 1)) - 1
        return v
      }
      BEGIN { n = split(inodes, a, "\n"); for (i = 1; i <= n; i++) mine[a[i]] = 1 }
      $4 == "01" && ($10 in mine) {
        split($2, l, ":"); split($3, r, ":")
        printf "%s(%d,%d)", (k++ ? "," : ""), hex(l[2]), hex(r[2])
      }'
}

# pg_backends_of PID DSN: the pids of the PostgreSQL backends serving PID's connections, matched
# by the client port pg_stat_activity shows for each (the server names every connection
# "mcp-dbserver", as every other instance on the machine does, so application_name cannot tell
# them apart). The role in DSN must see those sessions: the server's own role does.
pg_backends_of() {
  local pairs
  pairs=$(tcp_port_pairs "$1")
  [[ -n $pairs ]] || return 0
  psql "$2" -XAtq -v ON_ERROR_STOP=1 -c "SELECT a.pid FROM pg_stat_activity a
      JOIN (VALUES $pairs) AS c(local_port, remote_port)
        ON a.client_port = c.local_port AND c.remote_port = inet_server_port()
      WHERE a.pid <> pg_backend_pid()"
}

cost_begin() {
  local p t pids
  COST_SERVER_PID=$1
  COST_PG_PIDS=()
  if ! pids=$(pg_backends_of "$1" "$2"); then
    echo "warning: could not read pg_stat_activity; PostgreSQL figures left out" >&2
    pids=""
  fi
  for p in $pids; do COST_PG_PIDS+=("$p"); done
  COST_T0=$(now)
  COST_S0=$(proc_ticks "$1")
  COST_W0=$(proc_switches "$1")
  COST_PT0=()
  COST_PW0=()
  for p in "${COST_PG_PIDS[@]}"; do
    t=$(proc_ticks "$p")
    COST_PT0+=("${t:--1}")
    COST_PW0+=("$(proc_switches "$p")")
  done
}

# shellcheck disable=SC2034  # the COST_* figures are for the caller
cost_end() {
  local s1 w1 i t p pids
  s1=$(proc_ticks "$COST_SERVER_PID")
  w1=$(proc_switches "$COST_SERVER_PID")
  COST_DT=$(awk -v a="$COST_T0" -v b="$(now)" 'BEGIN {printf "%.6f", b - a}')
  COST_HZ=$(getconf CLK_TCK)
  [[ -n $COST_S0 && -n $s1 ]] || { echo "the server exited during the measured window" >&2; return 1; }
  COST_SERVER_TICKS=$((s1 - COST_S0))
  COST_SERVER_SWITCHES=$((w1 - COST_W0))
  # A backend counts only if it lived through the whole window: one that exited (its connection
  # closed) would otherwise subtract what it had spent before the window.
  COST_PG_TICKS=0
  COST_PG_SWITCHES=0
  COST_PG_N=0
  for i in "${!COST_PG_PIDS[@]}"; do
    t=$(proc_ticks "${COST_PG_PIDS[i]}")
    [[ -n $t && ${COST_PT0[i]} -ge 0 ]] || continue
    COST_PG_TICKS=$((COST_PG_TICKS + t - COST_PT0[i]))
    COST_PG_SWITCHES=$((COST_PG_SWITCHES + $(proc_switches "${COST_PG_PIDS[i]}") - COST_PW0[i]))
    COST_PG_N=$((COST_PG_N + 1))
  done
  # With DSN: the backends the server connected during the window count whole (a forked backend
  # starts from zero), e.g. over HTTP, where the window opens before the first call.
  [[ -n ${1:-} ]] || return 0
  pids=$(pg_backends_of "$COST_SERVER_PID" "$1") || return 0
  for p in $pids; do
    [[ " ${COST_PG_PIDS[*]} " == *" $p "* ]] && continue
    t=$(proc_ticks "$p")
    [[ -n $t ]] || continue
    COST_PG_TICKS=$((COST_PG_TICKS + t))
    COST_PG_SWITCHES=$((COST_PG_SWITCHES + $(proc_switches "$p")))
    COST_PG_N=$((COST_PG_N + 1))
  done
}

# baseline_commit ROOT: the commit that committed bench/results/latest.md, the baseline every
# performance-sensitive change is measured against.
baseline_commit() { git -C "$1" log -1 --format=%H -- bench/results/latest.md; }

# bench_config ROOT COMMIT [http]: a config for get_document that COMMIT's build and every later
# one accept: COMMIT's own built-in PostgreSQL section (a later section may carry keys an older
# build refuses, e.g. `optional: true`), with the start-up self-check and the model preload off;
# with "http", a server-wide HTTP section without authentication or a limit in the way.
bench_config() {
  local section
  section=$(git -C "$1" show "$2:src/engines/postgres/default_section.yaml") ||
    { echo "commit $2 has no src/engines/postgres/default_section.yaml" >&2; return 1; }
  echo "server: {self_check: off}"
  echo "embedding: {preload: false}"
  printf '%s\n' "$section"
  if [[ ${3:-} == http ]]; then
    echo "http: {auth: none, max_concurrent_calls: 1024, rate_limit: {rate: 1000000, burst: 1000000}}"
  fi
}

# bench_env ROOT: the local servers' variables (POSTGRES_DSN...), unless the caller set
# POSTGRES_DSN already (e.g. from another checkout's `scripts/servers.sh env`).
bench_env() {
  if [[ -z ${POSTGRES_DSN:-} ]]; then eval "$(bash "$1/scripts/servers.sh" env)"; fi
  [[ -n ${POSTGRES_DSN:-} ]] ||
    { echo "POSTGRES_DSN is not set: bash scripts/servers.sh start" >&2; return 1; }
}

# now: seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }
