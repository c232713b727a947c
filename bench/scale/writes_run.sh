#!/usr/bin/env bash
# make bench-writes: the bulk-writes benchmark (see writes.py beside
# this file).  Starts its own DynamoDB Local (2 GiB heap) and always stops
# it by PID, makes an empty table, runs the extension, boto3 and the AWS
# SDK for JavaScript v3 through a proxy adding BENCH_DELAY_MS (20) to every
# request and direct, checks every workload with boto3, and prints the
# report (also in build/bench-writes/latest/report.md).  Nothing is
# asserted.  About 12 minutes on 2 CPUs.
#
#   BENCH_WRITE_REPS=N            repetitions (3)
#   BENCH_DELAY_MS=MS             the latency proxy's delay (20)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BASE="$ROOT/build/bench-writes"
mkdir -p "$BASE"
find "$BASE" -mindepth 1 -maxdepth 1 -type d -name 'run-*' -mmin +60 \
    ! -exec test -e '{}/ddblocal/pid' ';' -exec rm -rf '{}' + 2>/dev/null || true
WORK="$BASE/run-$(date +%Y%m%d-%H%M%S)-$$"
TABLE=Writes
DDB="$WORK/ddblocal"

[ -f build/dynamodb.so ] || { echo "bench-writes: build/dynamodb.so missing (make loadable)" >&2; exit 1; }
for t in sqlite3 python3 node npm java /usr/bin/time; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench-writes: $t not found" >&2; exit 1; }
done
python3 -c 'import boto3' 2>/dev/null || { echo "bench-writes: python3 has no boto3" >&2; exit 1; }
if [ ! -f bench/scale/node_modules/@aws-sdk/client-dynamodb/package.json ]; then
    echo "bench-writes: npm ci in bench/scale" >&2
    (cd bench/scale && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

mkdir -p "$WORK" "$DDB"
ln -sfn "$WORK" "$BASE/latest"
cleanup() { tests/harness/ddblocal.sh stop "$DDB" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
URL=$(tests/harness/ddblocal.sh start --heap 2g "$DDB")
echo "bench-writes: DynamoDB Local at $URL (pid $(cat "$DDB/pid"))" >&2
AWS_ENDPOINT_URL_DYNAMODB="$URL" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
    AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
    python3 -c 'import sys; sys.path.insert(0, "tests/harness"); import fixtures; fixtures.create_table(fixtures.connect(), sys.argv[1], "PK", "SK")' "$TABLE"
python3 bench/scale/writes.py "$ROOT" "$URL" "$TABLE" "$WORK"
