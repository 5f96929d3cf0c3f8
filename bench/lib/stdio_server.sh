# Sourced by the memory benches (row_memory.sh, wide_value.sh, wide_value_mysql.sh): one
# mcp-dbserver over stdio as a coproc, what they say to it and how they read its memory. Needs
# SERVER, and the DSN of the engine the bench reads: POSTGRES_DSN, or MYSQL_DSN with
# SERVER_DSN=MYSQL_DSN.
# start_server CONFIG CLIENT_NAME: starts it with CONFIG and initializes the session as CLIENT_NAME.
start_server() {
  local dsn="${SERVER_DSN:-POSTGRES_DSN}"
  coproc SRV { exec env -i PATH="$PATH" "$dsn=${!dsn}" MCPDB_CONFIG="$1" \
    MCPDB_LOG_LEVEL=warn "$SERVER" serve 2>/dev/null; }
  pid=$SRV_PID
  send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"'"$2"'","version":"1"}}}'
  IFS= read -r _ <&"${SRV[0]}"
  send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
send() { printf '%s\n' "$1" >&"${SRV[1]}"; }
# kib FIELD: a /proc/<pid>/status field of the server (VmRSS, VmHWM) in KiB.
kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }
# measure_wide WHAT: the wide-value benches' run over the tool `read_value` (row 1 small, row 2
# wide): one call after a warm-up, then two at once; prints what came back and the peak RSS
# over idle, each introduced by WHAT. Stops the server.
measure_wide() {
  local idle start took hwm_one hwm_two one cut truncated
  send "$(read_value_call 2 1)"
  IFS= read -r _ <&"${SRV[0]}"
  idle=$(kib VmRSS)
  start=$(date +%s%N)
  send "$(read_value_call 3 2)"
  IFS= read -r one <&"${SRV[0]}"
  took=$((($(date +%s%N) - start) / 1000000))
  hwm_one=$(kib VmHWM)
  send "$(read_value_call 4 2)"
  send "$(read_value_call 5 2)"
  IFS= read -r _ <&"${SRV[0]}"
  IFS= read -r _ <&"${SRV[0]}"
  hwm_two=$(kib VmHWM)
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  cut=$(grep -o '"cut":\[[^]]*\]' <<<"$one" | head -1 || true)
  truncated=$(grep -o '"truncated":[a-z]*' <<<"$one" | head -1 || true)
  echo "$1 against a 262144-byte cap: ${truncated:-no result} ${cut:-(no cut list)} in ${took} ms"
  echo "RSS idle $((idle / 1024)) MiB; peak after one call $((hwm_one / 1024)) MiB (+$(((hwm_one - idle) / 1024)) MiB);" \
    "after two at once $((hwm_two / 1024)) MiB (+$(((hwm_two - idle) / 1024)) MiB)"
}
read_value_call() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"read_value","arguments":{"id":%s}}}' "$1" "$2"; }
