#!/usr/bin/env bash
# mcpdb-loadgen's --hook for cpu_per_call.sh and ab.sh: called as `cost_hook.sh start|end
# SERVER_PID` at the edges of the measured phase, it samples the server, the PostgreSQL backends
# serving it and the load client (its parent) and, at the end, writes the differences to
# $MCPDB_COST_FILE as NAME=VALUE lines (dt, hz, server_ticks, server_switches, pg_ticks,
# pg_switches, pg_backends, client_ticks). Needs POSTGRES_DSN and psql.
set -euo pipefail
# shellcheck source=bench/lib/server_cost.sh
source "$(dirname "${BASH_SOURCE[0]}")/server_cost.sh"
: "${MCPDB_COST_FILE:?}" "${POSTGRES_DSN:?}"
state="$MCPDB_COST_FILE.state"
case "${1:-}" in
  start)
    cost_begin "$2" "$POSTGRES_DSN"
    COST_CLIENT_T0=$(proc_ticks "$PPID")
    declare -p COST_SERVER_PID COST_T0 COST_S0 COST_W0 COST_PG_PIDS COST_PT0 COST_PW0 \
      COST_CLIENT_T0 >"$state"
    ;;
  end)
    # shellcheck source=/dev/null
    source "$state"
    client=$(proc_ticks "$PPID")
    cost_end "$POSTGRES_DSN"
    cat >"$MCPDB_COST_FILE" <<EOT
dt=$COST_DT
hz=$COST_HZ
server_ticks=$COST_SERVER_TICKS
server_switches=$COST_SERVER_SWITCHES
pg_ticks=$COST_PG_TICKS
pg_switches=$COST_PG_SWITCHES
pg_backends=$COST_PG_N
client_ticks=$((client - COST_CLIENT_T0))
EOT
    ;;
  *) echo "usage: cost_hook.sh start|end SERVER_PID" >&2; exit 2 ;;
esac
