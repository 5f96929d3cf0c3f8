# shellcheck shell=bash
# The shared limits store for the tests of http.shared_limits (sourced by servers.sh): Debian's
# redis-server, in memory only (no RDB snapshot, no AOF), bound to 127.0.0.1, no password (the
# tests that need one set it with CONFIG SET on their own connection). Started like the Node
# servers (.run/redis/pid, .run/redis/server.log). Valkey speaks the same protocol.

REDIS_PORT="${MCPDB_REDIS_PORT:-$(recorded_port redis 26379)}"
REDIS_MARKER="redis-server"

redis_port() { recorded_port redis "$REDIS_PORT"; }

# redis_ready PORT: PING answers PONG.
redis_ready() {
  [[ $(redis-cli -h "$BIND_HOST" -p "$1" --no-auth-warning PING 2>/dev/null) == PONG ]]
}

redis_start() {
  command -v redis-server >/dev/null || die "redis-server not found (run scripts/install.sh)"
  mkdir -p "$RUN_DIR/redis"
  node_server_start redis "$REDIS_MARKER" "$REDIS_PORT" MCPDB_REDIS_PORT redis_ready \
    redis-server --bind "$BIND_HOST" --port "$REDIS_PORT" --protected-mode yes \
    --save "" --appendonly no --dir "$RUN_DIR/redis" --daemonize no --loglevel warning
}
redis_stop() { node_server_stop redis "$REDIS_MARKER"; }
redis_status() { node_server_status redis "$REDIS_MARKER" "$(redis_port)" redis_ready; }
