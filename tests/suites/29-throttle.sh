#!/usr/bin/env bash
# Throttling that explains itself (issue 30): tests/faults/proxy.py answers
# one operation with each form of throttling DynamoDB sends (the old ones
# without reasons; ThrottlingException with throttlingReasons,
# ProvisionedThroughputExceededException and RequestLimitExceeded with
# ThrottlingReasons, for the table and an index, reads and writes): retried
# then answered, dynamodb_log's throttle column, dynamodb_hot's key_range,
# and the one-line error when the retries run out.  TAP lines; see
# tests/faults/throttle_check.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
exec python3 tests/faults/throttle_check.py "$@"
