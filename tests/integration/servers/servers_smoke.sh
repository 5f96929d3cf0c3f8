#!/usr/bin/env bash
# Smoke test of the local servers started by scripts/servers.sh (ctest: servers_smoke).
#   scripts/servers.sh start && eval "$(scripts/servers.sh env)"
#   bash tests/integration/servers/servers_smoke.sh <repo root>
# Checks: the Postgres reader role logs in over TCP with a real password and cannot write,
# pgvector is installed, dynalite answers a signed ListTables, the Mongo-compatible server answers
# ping, and every listener is bound to 127.0.0.1 only. Never prints a credential.
set -euo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"

failures=0
pass() { printf 'ok - %s\n' "$*"; }
fail() {
  printf 'not ok - %s\n' "$*"
  failures=$((failures + 1))
}

required=(POSTGRES_DSN MCPDB_PG_ADMIN_DSN AWS_REGION AWS_ENDPOINT_URL_DYNAMODB AWS_ACCESS_KEY_ID
  AWS_SECRET_ACCESS_KEY MONGODB_URI MONGODB_DATABASE)
missing=()
for v in "${required[@]}"; do [[ -n ${!v:-} ]] || missing+=("$v"); done
if ((${#missing[@]})); then
  echo "FAIL: missing environment: ${missing[*]}" >&2
  echo "FAIL: run scripts/servers.sh start, then eval \"\$(scripts/servers.sh env)\" (or source .run/env.sh) before this test" >&2
  exit 1
fi

# Only the credentials given here, never a password file or a PG* variable from the caller.
unset PGPASSWORD PGSERVICE PGHOST PGPORT PGUSER PGDATABASE
export PGPASSFILE=/dev/null PGCONNECT_TIMEOUT=5
PSQL=(psql -X -q -A -t -v ON_ERROR_STOP=1 -v VERBOSITY=verbose)

# --- Postgres: where it is -------------------------------------------------------------------
if [[ $POSTGRES_DSN =~ ^postgres(ql)?://([^:@/]+):([^@/]+)@([^:/]+):([0-9]+)/([^?]+) ]]; then
  pg_user=${BASH_REMATCH[2]}
  pg_host=${BASH_REMATCH[4]}
  pg_port=${BASH_REMATCH[5]}
  pg_db=${BASH_REMATCH[6]}
else
  fail "POSTGRES_DSN is not a postgresql://user:password@host:port/db URI"
  pg_user="" pg_host="" pg_port="" pg_db=""
fi

# sqlstate_of SQL...: run statements as the reader; print the SQLSTATE of the first error.
sqlstate_of() {
  local out
  if out=$("${PSQL[@]}" "$POSTGRES_DSN" "$@" 2>&1); then
    echo "none"
  else
    grep -oE '^(psql:[^:]*:[0-9]+: )?ERROR:  [0-9A-Z]{5}' <<<"$out" | head -n1 | grep -oE '[0-9A-Z]{5}$' || echo "unknown"
  fi
}

if [[ -n $pg_port ]]; then
  if [[ $pg_host == 127.0.0.1 ]]; then pass "POSTGRES_DSN uses TCP to 127.0.0.1"; else fail "POSTGRES_DSN host is '$pg_host', expected 127.0.0.1"; fi
  if who=$("${PSQL[@]}" "$POSTGRES_DSN" -c 'SELECT current_user' 2>&1); then
    if [[ $who == mcp_reader ]]; then pass "postgres: logged in over TCP as mcp_reader"; else fail "postgres: logged in as '$who', expected mcp_reader"; fi
  else
    fail "postgres: cannot log in with POSTGRES_DSN: $(tail -n1 <<<"$who")"
  fi
  # The password is really checked (scram-sha-256 on TCP), not trusted.
  if out=$("${PSQL[@]}" "postgresql://$pg_user:not-the-password@$pg_host:$pg_port/$pg_db" -c 'SELECT 1' 2>&1); then
    fail "postgres: a wrong password was accepted"
  elif grep -q 'password authentication failed' <<<"$out"; then
    pass "postgres: a wrong password is rejected"
  else
    fail "postgres: wrong password failed for another reason: $(tail -n1 <<<"$out")"
  fi

  ro=$("${PSQL[@]}" "$POSTGRES_DSN" -c 'SHOW default_transaction_read_only' 2>&1 || true)
  if [[ $ro == on ]]; then pass "postgres: mcp_reader sessions are read-only by default"; else fail "postgres: default_transaction_read_only is '$ro'"; fi

  ext=$("${PSQL[@]}" "$POSTGRES_DSN" -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'" 2>&1 || true)
  if [[ $ext =~ ^[0-9]+\.[0-9]+ ]]; then pass "postgres: extension vector $ext installed in $pg_db"; else fail "postgres: extension vector missing ($ext)"; fi
  hnsw=$("${PSQL[@]}" "$POSTGRES_DSN" -c "SELECT count(*) FROM pg_am WHERE amname = 'hnsw'" 2>&1 || true)
  if [[ $hnsw == 1 ]]; then pass "postgres: hnsw access method available"; else fail "postgres: hnsw access method missing ($hnsw)"; fi

  # A table owned by the admin role, to try writes against (dropped on exit).
  probe="servers_smoke_probe_$$"
  trap '"${PSQL[@]}" "$MCPDB_PG_ADMIN_DSN" -c "DROP TABLE IF EXISTS $probe" >/dev/null 2>&1 || true' EXIT
  if "${PSQL[@]}" "$MCPDB_PG_ADMIN_DSN" -c "CREATE TABLE $probe (id int PRIMARY KEY, note text)" \
    -c "INSERT INTO $probe VALUES (1, 'seed')" >/dev/null 2>&1; then
    pass "postgres: mcp_admin can create and fill a table"
  else
    fail "postgres: mcp_admin cannot create a table with MCPDB_PG_ADMIN_DSN"
  fi
  n=$("${PSQL[@]}" "$POSTGRES_DSN" -c "SELECT count(*) FROM $probe" 2>&1 || true)
  if [[ $n == 1 ]]; then pass "postgres: mcp_reader can SELECT a new admin table (default privileges)"; else fail "postgres: mcp_reader cannot read the admin table ($n)"; fi

  # expect_sqlstate WHAT EXPECTED... -- SQL...
  expect_sqlstate() {
    local what=$1 got
    shift
    local -a want=()
    while [[ $1 != -- ]]; do want+=("$1") && shift; done
    shift
    got=$(sqlstate_of "$@")
    if [[ " ${want[*]} " == *" $got "* ]]; then
      pass "postgres: mcp_reader $what is refused (SQLSTATE $got)"
    else
      fail "postgres: mcp_reader $what: expected SQLSTATE ${want[*]}, got $got"
    fi
  }
  expect_sqlstate "CREATE TABLE" 25006 42501 -- -c 'CREATE TABLE smoke_should_not_exist (x int)'
  expect_sqlstate "INSERT" 25006 42501 -- -c "INSERT INTO $probe VALUES (2, 'x')"
  expect_sqlstate "DELETE" 25006 42501 -- -c "DELETE FROM $probe"
  # Even after switching its session to read-write, the grants still refuse.
  expect_sqlstate "CREATE TABLE in a read-write transaction" 42501 -- \
    -c 'BEGIN READ WRITE' -c 'CREATE TABLE smoke_should_not_exist (x int)'
  expect_sqlstate "INSERT in a read-write transaction" 42501 -- \
    -c 'BEGIN READ WRITE' -c "INSERT INTO $probe VALUES (2, 'x')"
  expect_sqlstate "CREATE TEMP TABLE in a read-write transaction" 42501 -- \
    -c 'BEGIN READ WRITE' -c 'CREATE TEMP TABLE smoke_tmp (x int)'
  n=$("${PSQL[@]}" "$MCPDB_PG_ADMIN_DSN" -c "SELECT count(*) FROM $probe" 2>&1 || true)
  if [[ $n == 1 ]]; then pass "postgres: the probe table is unchanged"; else fail "postgres: the probe table changed ($n rows)"; fi

  if [[ -n ${MCPDB_PG_OVERPRIV_DSN:-} ]]; then
    if "${PSQL[@]}" "$MCPDB_PG_OVERPRIV_DSN" -c "INSERT INTO $probe VALUES (3, 'overpriv')" >/dev/null 2>&1; then
      pass "postgres: mcp_overpriv can write (as intended, for the doctor tests)"
    else
      fail "postgres: mcp_overpriv cannot write; it is meant to be over-privileged"
    fi
  fi
fi

# --- DynamoDB (dynalite) ----------------------------------------------------------------------
if body=$(curl -sS --fail --max-time 5 \
  --aws-sigv4 "aws:amz:$AWS_REGION:dynamodb" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
  -d '{}' "$AWS_ENDPOINT_URL_DYNAMODB/" 2>&1) && [[ $body == *'"TableNames"'* ]]; then
  pass "dynamodb: signed ListTables answered at $AWS_ENDPOINT_URL_DYNAMODB"
else
  fail "dynamodb: ListTables failed at $AWS_ENDPOINT_URL_DYNAMODB: $body"
fi

# --- MongoDB (CongoServer) --------------------------------------------------------------------
if out=$(timeout 30 node "$ROOT/tests/integration/servers/mongo_ping.mjs" "$ROOT" 2>&1); then
  pass "mongodb: ping answered at $MONGODB_URI"
else
  fail "mongodb: $out"
fi

# --- Redis (the shared limits store) ----------------------------------------------------------
if [[ -n ${MCPDB_REDIS_PORT:-} ]]; then
  if [[ $(redis-cli -h 127.0.0.1 -p "$MCPDB_REDIS_PORT" PING 2>&1) == PONG ]]; then
    pass "redis: PING answered on 127.0.0.1:$MCPDB_REDIS_PORT"
  else
    fail "redis: no PONG on 127.0.0.1:$MCPDB_REDIS_PORT"
  fi
  # In memory only: no snapshot, no append-only file (the limits are throwaway state).
  persist=$(redis-cli -h 127.0.0.1 -p "$MCPDB_REDIS_PORT" CONFIG GET save 2>&1 | sed -n 2p)
  aof=$(redis-cli -h 127.0.0.1 -p "$MCPDB_REDIS_PORT" CONFIG GET appendonly 2>&1 | sed -n 2p)
  if [[ -z $persist && $aof == no ]]; then pass "redis: no persistence"; else fail "redis: persistence on (save '$persist', appendonly '$aof')"; fi
else
  fail "redis: MCPDB_REDIS_PORT is not set (scripts/servers.sh env)"
fi

# --- Every listener on 127.0.0.1 only ---------------------------------------------------------
ports=()
[[ -n $pg_port ]] && ports+=("postgres:$pg_port")
[[ $AWS_ENDPOINT_URL_DYNAMODB =~ :([0-9]+)/?$ ]] && ports+=("dynamodb:${BASH_REMATCH[1]}")
[[ $MONGODB_URI =~ ^mongodb://[^/]*:([0-9]+)(/|$) ]] && ports+=("mongodb:${BASH_REMATCH[1]}")
[[ -n ${MCPDB_REDIS_PORT:-} ]] && ports+=("redis:$MCPDB_REDIS_PORT")
for entry in "${ports[@]}"; do
  name=${entry%%:*}
  port=${entry#*:}
  lines=$(ss -ltnpH "sport = :$port" 2>/dev/null || true)
  if [[ -z $lines ]]; then
    fail "$name: nothing listens on port $port"
    continue
  fi
  bad=$(awk -v p="127.0.0.1:$port" '$4 != p {print $4}' <<<"$lines")
  if [[ -n $bad ]]; then
    fail "$name: port $port is also bound to: $bad"
  else
    pass "$name: port $port is bound to 127.0.0.1 only"
  fi
  # The owning processes must not listen anywhere else either (needs ss -p visibility).
  while read -r pid; do
    [[ -n $pid ]] || continue
    others=$(ss -ltnpH 2>/dev/null | grep -E "pid=$pid," | awk '$4 !~ /^127\.0\.0\.1:/ {print $4}' || true)
    if [[ -n $others ]]; then
      fail "$name: process $pid also listens on: $others"
    else
      pass "$name: process $pid listens on loopback only"
    fi
  done < <(grep -oE 'pid=[0-9]+' <<<"$lines" | cut -d= -f2 | sort -u)
done

if ((failures)); then
  echo "FAILED: $failures check(s)" >&2
  exit 1
fi
echo "all server smoke checks passed"
