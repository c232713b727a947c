#!/usr/bin/env bash
# make bench-streams: the lag of an outside write seen by a
# coherence=streams reader under a steady write load (bench/streams_lag.py)
# on a DynamoDB Local of its own (or DDB_ENDPOINT).  Only prints.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/tests/harness/lib.sh"
set_test_aws_env
ensure_boto3_python "$ROOT" || true
STATE=""
cleanup() {
    if [ -n "$STATE" ]; then
        tests/harness/ddblocal.sh stop "$STATE" >/dev/null 2>&1 || true
        rm -rf "$STATE"
    fi
}
trap cleanup EXIT
echo "# coherence=streams: an outside write seen by a cached read (bench/streams_lag.py)"
if [ -n "${DDB_ENDPOINT:-}" ]; then
    export AWS_ENDPOINT_URL_DYNAMODB="$DDB_ENDPOINT"
else
    STATE="$(mktemp -d)"
    AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start "$STATE")"
    export AWS_ENDPOINT_URL_DYNAMODB
fi
# idle (the reader's polls backed off to READER_POLL_IDLE), then under load
for rate in 0 "${STREAMS_RATE:-50}"; do
    STREAMS_RATE=$rate READER_PY=/usr/bin/python3 DDB_EXT="$ROOT/build/dynamodb" \
        python3 bench/streams_lag.py
done
