#!/usr/bin/env bash
# make bench-scale: the side-by-side benchmark of reads at scale (see
# README.md beside this file).  Starts its own DynamoDB Local (2 GiB heap)
# and always stops it by PID, loads ~100,000 items, runs the extension,
# boto3 and the AWS SDK for JavaScript v3 one after another on the same
# data, through a proxy adding BENCH_DELAY_MS to every request and then
# without it, and prints the report (also in
# build/bench-scale/latest/report.md).  Nothing is asserted.
#
#   bench/scale/run.sh            everything (about 12-15 minutes on 2 CPUs)
#   BENCH_REPS=N                  repetitions of the Query and batched keys (3)
#   BENCH_COUNT_REPS=N            repetitions of the full Scan's count(*) (9)
#   BENCH_SCAN_REPS=N             repetitions of the full Scan of items (2)
#   BENCH_GET_REPS=N              of the 2,000 single GetItems (1)
#   BENCH_BUDGET=SECONDS          later runs are skipped past this (780)
#   BENCH_DELAY_MS=MS             the latency proxy's delay (20)
#   BENCH_PEER_SEGMENTS=N         the peers' parallel Scan segments (8)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# Each run in its own folder (make bench and make bench-scale may run at
# once in this tree); build/bench-scale/latest points to the newest.  Folders of
# finished runs older than an hour go.
BASE="$ROOT/build/bench-scale"
mkdir -p "$BASE"
find "$BASE" -mindepth 1 -maxdepth 1 -type d -name 'run-*' -mmin +60 \
    ! -exec test -e '{}/ddblocal/pid' ';' -exec rm -rf '{}' + 2>/dev/null || true
WORK="${BENCH_SCALE_DIR:-$BASE/run-$(date +%Y%m%d-%H%M%S)-$$}"
TABLE=Store
DDB="$WORK/ddblocal"

[ -f build/dynamodb.so ] || { echo "bench-scale: build/dynamodb.so missing (make loadable)" >&2; exit 1; }
for t in sqlite3 python3 node npm java /usr/bin/time; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench-scale: $t not found" >&2; exit 1; }
done
python3 -c 'import boto3' 2>/dev/null || { echo "bench-scale: python3 has no boto3" >&2; exit 1; }

# The JS SDK, pinned by package-lock.json, into bench/scale/node_modules.
if [ ! -f bench/scale/node_modules/@aws-sdk/client-dynamodb/package.json ] \
   || [ ! -f bench/scale/node_modules/@aws-sdk/util-dynamodb/package.json ]; then
    echo "bench-scale: npm ci in bench/scale" >&2
    (cd bench/scale && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

mkdir -p "$WORK" "$DDB"
ln -sfn "$WORK" "$BASE/latest"
cleanup() { tests/harness/ddblocal.sh stop "$DDB" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
URL=$(tests/harness/ddblocal.sh start --heap 2g "$DDB")
DDBLOCAL_VERSION="$(sed -n 's/^Version:[[:space:]]*//p' "$DDB/ddblocal.log")"
export DDBLOCAL_VERSION
echo "bench-scale: DynamoDB Local $DDBLOCAL_VERSION at $URL (pid $(cat "$DDB/pid"))" >&2

echo "bench-scale: loading $TABLE" >&2
python3 bench/scale/load.py "$URL" "$TABLE" "$WORK" >"$WORK/load.json"
cat "$WORK/load.json" >&2

python3 bench/scale/bench.py "$ROOT" "$URL" "$TABLE" "$WORK"
