#!/usr/bin/env bash
# Leases in the shared tier (docs/cache.md, "Leases"): a real redis-server
# on a free loopback port (tests/harness/redis.sh, stopped by its PID),
# DynamoDB Local (run-all's) behind the recording, delaying fault proxy.
#   * tests/redis/lease_check.py: 8 sqlite3 processes released at one
#     instant (a FIFO) reading the same keys -- single GetItems, IN lists
#     (BatchGetItem), Query pages: DynamoDB asked about once a key with
#     leases, about 8 times without; a holder killed (SIGKILL) mid-read:
#     the other answers right within the wait; a write racing a lease: the
#     old value never served after it (and served without leases).
# On DynamoDB Local and on a dynalite started here (which has no
# TransactWriteItems: the COMMIT race is skipped there, saying so).
# Without redis-server the suite fails in CI and is skipped elsewhere,
# saying so.  TAP lines.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
TMP="$ROOT/.test-tmp/redis064"
rm -rf "$TMP"
mkdir -p "$TMP"

# shellcheck source=../harness/redis_suite.sh
. "$ROOT/tests/harness/redis_suite.sh" # tap, relay, need_redis
need_redis leases 64-leases.sh
stop_all() {
  tests/harness/redis.sh stop "$TMP/redis" >/dev/null 2>&1
  tests/harness/dynalite.sh stop "$TMP/dynalite" >/dev/null 2>&1
}
trap stop_all EXIT

# run_leases SERVER: lease_check.py against AWS_ENDPOINT_URL_DYNAMODB on a
# fresh redis-server, its lines numbered on and named after SERVER
run_leases() {
  local out rc
  if ! out=$(tests/harness/redis.sh start "$TMP/redis" 2>&1); then
    tap 1 "$1: leases: redis-server started" "$out"
    return
  fi
  out=$(REDIS_STATE="$TMP/redis" timeout 900 python3 tests/redis/lease_check.py 2>&1)
  rc=$?
  relay < <(sed "s/^\(\(not \)\{0,1\}ok [0-9]* - \)/\1$1: /" <<<"$out")
  grep -q '^1\.\.' <<<"$out" || tap 1 "$1: leases: lease_check.py ran to its end (exit $rc)"
  tests/harness/redis.sh stop "$TMP/redis" >/dev/null 2>&1
}
run_leases ddblocal
if out=$(tests/harness/dynalite.sh start "$TMP/dynalite" 2>&1); then
  AWS_ENDPOINT_URL_DYNAMODB="$(tail -n1 <<<"$out")" run_leases dynalite
  tests/harness/dynalite.sh stop "$TMP/dynalite" >/dev/null 2>&1
else
  tap 1 "dynalite: started" "$out"
fi
echo "1..$N"
