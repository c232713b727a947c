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
# DynamoDB Local only: the race needs the delaying proxy in front of one
# server, and the logic under test is the tier's, not the server's.
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
. "$ROOT/tests/harness/redis_suite.sh" # need_redis
need_redis leases 64-leases.sh
trap 'tests/harness/redis.sh stop "$TMP/redis" >/dev/null 2>&1' EXIT
if ! out=$(tests/harness/redis.sh start "$TMP/redis" 2>&1); then
  echo "not ok 1 - leases: redis-server started"
  printf '%s\n' "$out" | sed 's/^/#   /'
  echo "1..1"
  exit 1
fi
REDIS_STATE="$TMP/redis" timeout 900 python3 tests/redis/lease_check.py 2>&1
