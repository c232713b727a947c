#!/usr/bin/env bash
# make bench-keys: bench/scale/keys_bench.py against a DynamoDB Local of its
# own (2 GiB heap, free loopback port), stopped by PID whatever happens.
# Arguments go to keys_bench.py ([DELAY_MS] [N]).  Prints only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/tests/harness/lib.sh"
set_test_aws_env
ensure_boto3_python "$ROOT" || true
mkdir -p .test-tmp
STATE="$(mktemp -d "$ROOT/.test-tmp/bench-keys.XXXXXX")"
trap 'tests/harness/ddblocal.sh stop "$STATE" >/dev/null 2>&1 || true; rm -rf "$STATE"' EXIT
AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start --heap 2g "$STATE")"
export AWS_ENDPOINT_URL_DYNAMODB
echo "# make bench-keys: DynamoDB Local at $AWS_ENDPOINT_URL_DYNAMODB (java -Xms2g -Xmx2g)"
python3 bench/scale/keys_bench.py "$@"
