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
