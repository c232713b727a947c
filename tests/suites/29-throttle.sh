#!/usr/bin/env bash
# Throttling that explains itself: tests/faults/proxy.py answers
# one operation with each form of throttling DynamoDB sends (the old ones
# without reasons; ThrottlingException with throttlingReasons,
# ProvisionedThroughputExceededException and RequestLimitExceeded with
# ThrottlingReasons, for the table and an index, reads and writes): retried
# then answered, dynamodb_log's throttle column, dynamodb_hot's key_range,
# and the one-line error when the retries run out (see
# tests/faults/throttle_check.py).  Then libdyndb with a table's ARN
# (tests/api/api_arn.c; the SQL side is test-sql/100_table_arn.test).
# One TAP stream.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
. tests/harness/sanitize.sh
mkdir -p .test-tmp/api
OUT=.test-tmp/throttle29.$$
BIN=.test-tmp/api/api_arn.$$
TABLE="ApiArn029_$$"
cleanup() {
  python3 tests/harness/fixtures.py drop "$TABLE" >/dev/null 2>&1
  rm -f "$BIN" "$OUT.1" "$OUT.2"
}
trap cleanup EXIT
rc=0
python3 tests/faults/throttle_check.py >"$OUT.1" 2>&1 || rc=1
if build_driver "$BIN" tests/api/api_arn.c &&
  python3 tests/harness/fixtures.py lesson "$TABLE" >&2; then
  "$BIN" "$AWS_ENDPOINT_URL_DYNAMODB" "$TABLE" >"$OUT.2" 2>&1 || rc=1
else
  echo "not ok 1 - api arn: build tests/api/api_arn.c, table $TABLE" >"$OUT.2"
  rc=1
fi
cat "$OUT.1" "$OUT.2" | awk '
  /^1\.\./ { next }
  /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n) }
  { print }
  END { print "1.." n }'
exit $rc
