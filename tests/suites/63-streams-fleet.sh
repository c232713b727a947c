#!/usr/bin/env bash
# One DynamoDB Stream reader per table per fleet (docs/cache.md, "One
# reader per fleet"; cache/fleet.c), on a real redis-server on a free
# loopback port (tests/harness/redis.sh, stopped by its PID).
#   * tests/redis/fleet_check.c: the transport alone (members of a fleet
#     driven by hand in one process, no DynamoDB): the election, ordered
#     delivery of 250 records, freshness, nothing readable in Redis, a
#     trimmed stream's gap, the checkpoint, a takeover after the leader
#     stops renewing (fencing of the stale leader), a clean release, a
#     flushed Redis with its connections dropped, no Redis at all.
#   * tests/redis/fleet_streams.py, on DynamoDB Local (run-all's): three
#     processes with coherence=streams and the shared tier: one sends
#     GetRecords; an outside write (boto3) shows in every process's
#     cached read; kill -9 of the leader: another takes over within
#     seconds, resumes from the checkpoint (no cache cleared), and a write
#     made during the takeover is not lost; the control without
#     coherence=streams keeps the old answer; Redis stopped: each process
#     reads the stream itself; Redis back: one reader again.
# Without redis-server the suite fails in CI and is skipped elsewhere,
# saying so, as suite 60.  TAP lines.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
TMP="$ROOT/.test-tmp/fleet063"
rm -rf "$TMP"
mkdir -p "$TMP"
# shellcheck source=../harness/redis_suite.sh
. "$ROOT/tests/harness/redis_suite.sh" # tap, relay, need_redis
need_redis fleet 63-streams-fleet.sh
trap 'tests/harness/redis.sh stop "$TMP/redis" >/dev/null 2>&1' EXIT

# --- the transport: tests/redis/fleet_check.c ------------------------------
# shellcheck source=../harness/sanitize.sh
. "$ROOT/tests/harness/sanitize.sh" # build_driver
CHECK="$TMP/fleet_check"
if build_driver "$CHECK" tests/redis/fleet_check.c; then
  if URL=$(tests/harness/redis.sh start "$TMP/redis" 2>&1); then
    out=$(timeout 300 "$CHECK" "$URL" 2>&1)
    rc=$?
    relay <<<"$out"
    # a driver that died before its plan line is a failure of its own
    grep -q '^1\.\.' <<<"$out" || tap 1 "fleet: fleet_check ran to its end (exit $rc)"
    tests/harness/redis.sh stop "$TMP/redis" >/dev/null 2>&1
  else
    tap 1 "fleet: redis-server started" "$URL"
  fi
else
  tap 1 "fleet: build tests/redis/fleet_check.c"
fi

# --- end to end: tests/redis/fleet_streams.py on DynamoDB Local -------------
if make -s --no-print-directory loadable >&2 && URL=$(tests/harness/redis.sh start "$TMP/redis" 2>&1); then
  out=$(REDIS_URL="$URL" REDIS_STATE="$TMP/redis" timeout 600 python3 tests/redis/fleet_streams.py 2>&1)
  rc=$?
  relay <<<"$out"
  grep -q '^1\.\.' <<<"$out" || tap 1 "fleet: fleet_streams.py ran to its end (exit $rc)"
  tests/harness/redis.sh stop "$TMP/redis" >/dev/null 2>&1
else
  tap 1 "fleet: the extension built, redis-server started" "$URL"
fi
echo "1..$N"
