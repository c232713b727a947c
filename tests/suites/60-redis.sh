#!/usr/bin/env bash
# The shared cache tier (docs/cache.md, "The shared tier"): a real
# redis-server on a free loopback port (tests/harness/redis.sh, stopped by
# its PID), on DynamoDB Local (run-all's) and on a dynalite started here.
#   * tests/redis/shared_check.py: two processes share hits; other
#     credentials get no hit and no planted value; tampered and moved
#     values are misses, counted; negative entries; writes through the
#     extension update Redis and retire pages, writes outside stay until
#     the TTL; ConsistentRead bypasses both tiers; dynamodb_log's rows;
#     bad URLs; hostile servers (wrong types, a huge bulk length,
#     garbage, values not ours, OOM); a slow Redis (timeouts); the
#     progress line; Redis killed mid-run and started again.
#   * tests/redis/shared_fork.c (libdyndb): 8 threads; fork() with pooled
#     connections, plain and TLS (rediss:// with AUTH, and an ACL user).
# Without redis-server the suite fails in CI (tools/install-deps.sh
# installs it there, as `make test` does everywhere) and elsewhere is
# skipped, saying so; it never passes without running.  TAP lines.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
TMP="$ROOT/.test-tmp/redis060"
rm -rf "$TMP"
mkdir -p "$TMP"
# shellcheck source=../harness/redis_suite.sh
. "$ROOT/tests/harness/redis_suite.sh" # tap, relay, need_redis
need_redis redis 60-redis.sh

stop_all() {
  tests/harness/redis.sh stop "$TMP/plain" >/dev/null 2>&1
  tests/harness/redis.sh stop "$TMP/tls" >/dev/null 2>&1
  [ -n "${DYNALITE_STARTED:-}" ] && tests/harness/dynalite.sh stop "$TMP/dynalite" >/dev/null 2>&1
}
trap stop_all EXIT

# --- the SQL checks on both servers ----------------------------------
run_check() { # SERVER_NAME
  local out
  if ! out=$(tests/harness/redis.sh start "$TMP/plain" 2>&1); then
    tap 1 "$1: shared: redis-server started" "$out"
    return
  fi
  relay < <(REDIS_STATE="$TMP/plain" timeout 900 python3 tests/redis/shared_check.py "$1" 2>&1)
  tests/harness/redis.sh stop "$TMP/plain"
}
run_check ddblocal
if out=$(tests/harness/dynalite.sh start "$TMP/dynalite" 2>&1); then
  DYNALITE_STARTED=1
  AWS_ENDPOINT_URL_DYNAMODB="$(tail -n1 <<<"$out")" run_check dynalite
  tests/harness/dynalite.sh stop "$TMP/dynalite" >/dev/null 2>&1
  DYNALITE_STARTED=
else
  tap 1 "dynalite: started" "$out"
fi

# --- the C API: threads and fork(), plain and TLS ----------------------
. tests/harness/sanitize.sh
FORK="$TMP/shared_fork"
if build_driver "$FORK" tests/redis/shared_fork.c; then
  URL=$(tests/harness/redis.sh start "$TMP/plain")
  REDIS_STATE="$TMP/plain" python3 tests/redis/shared_check.py --setup-only >"$TMP/setup.log" 2>&1 ||
    tap 1 "shared: setup of the C API's table" "$(cat "$TMP/setup.log")"
  relay < <(timeout 600 "$FORK" "$AWS_ENDPOINT_URL_DYNAMODB" "$URL" Shared060 40 2>&1 |
    sed 's/ - shared: / - C API, redis: shared: /')
  tests/harness/redis.sh stop "$TMP/plain"
  # TLS, a password (requirepass) and then an ACL user
  if TURL=$(tests/harness/redis.sh start --tls --password tlspw "$TMP/tls" 2>"$TMP/tls.err"); then
    # (the environment's password goes only to DYNAMODB_SHARED_CACHE's Redis)
    relay < <(DYNAMODB_SHARED_CACHE_CA="$TMP/tls/ca.pem" DYNAMODB_SHARED_CACHE_PASSWORD=tlspw \
      DYNAMODB_SHARED_CACHE="$TURL" timeout 600 "$FORK" "$AWS_ENDPOINT_URL_DYNAMODB" "$TURL" Shared060 40 2>&1 |
      sed 's/ - shared: / - C API, rediss + AUTH: shared: /')
    TPORT=$(cat "$TMP/tls/port")
    redis-cli --tls --cacert "$TMP/tls/ca.pem" -p "$TPORT" --no-auth-warning -a tlspw \
      ACL SETUSER app on '>apppw' '~*' '+@all' >/dev/null
    relay < <(DYNAMODB_SHARED_CACHE_CA="$TMP/tls/ca.pem" DYNAMODB_SHARED_CACHE_PASSWORD=apppw \
      DYNAMODB_SHARED_CACHE="rediss://app@127.0.0.1:$TPORT" timeout 600 "$FORK" "$AWS_ENDPOINT_URL_DYNAMODB" "rediss://app@127.0.0.1:$TPORT" Shared060 10 2>&1 |
      sed 's/ - shared: / - C API, rediss + ACL user: shared: /')
    # a wrong password, and a certificate not trusted: misses, never errors
    for bad in "wrongpw|$TMP/tls/ca.pem|wrong password" "tlspw||certificate not trusted"; do
      IFS='|' read -r pw ca what <<<"$bad"
      out=$(DYNAMODB_SHARED_CACHE_CA="$ca" DYNAMODB_SHARED_CACHE_PASSWORD="$pw" \
        DYNAMODB_SHARED_CACHE="$TURL" ${SQLITE3:-sqlite3} :memory: ".load ${DDB_EXT:-build/dynamodb}" \
        "CREATE VIRTUAL TABLE temp.t USING dynamodb(table=Shared060, shared_cache='$TURL', shared_cache_timeout=1)" \
        "SELECT json_extract(item, '\$.v') FROM t WHERE PK='P#3' AND SK='S#003'" \
        "SELECT value FROM dynamodb_stats WHERE name IN ('shared_errors', 'shared_hits') ORDER BY name" 2>&1)
      [ "$(echo $out)" = "v3 1 0" ]
      tap $? "rediss: $what: the right answer, one shared error, no hit" "$out"
    done
    tests/harness/redis.sh stop "$TMP/tls"
  else
    tap 1 "rediss: redis-server --tls started" "$(cat "$TMP/tls.err")"
  fi
else
  tap 1 "shared: build tests/redis/shared_fork.c"
fi
python3 tests/harness/fixtures.py drop Shared060 >/dev/null 2>&1
echo "1..$N"
