#!/usr/bin/env bash
# make bench: start a DynamoDB Local of its own (2 GiB heap), load the
# table, run build/bench-cache, stop the server.  Prints the machine and
# the commands first.  Arguments go to build/bench-cache (e.g. --only c).
#
# Environment: BENCH_KEYS (items in the table, default 20000),
# BENCH_LOOKUPS (lookups of the SQL join, default 100000), DDB_ENDPOINT
# (use that running server instead of starting one).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/tests/harness/lib.sh"
set_test_aws_env
ensure_boto3_python "$ROOT" || true

KEYS="${BENCH_KEYS:-20000}"
LOOKUPS="${BENCH_LOOKUPS:-100000}"
TABLE=BenchItems
STATE=""

cleanup() {
    if [ -n "$STATE" ]; then
        tests/harness/ddblocal.sh stop "$STATE" >/dev/null 2>&1 || true
        rm -rf "$STATE"
    fi
}
trap cleanup EXIT

echo "# make bench (bench/run.sh $*)"
echo "# machine"
echo "    cpu:      $(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//') ($(nproc) CPUs online)"
echo "    kernel:   $(uname -sr)"
echo "    compiler: $(${CC:-cc} --version | head -n1)"
echo "    sqlite:   $(sqlite3 --version | cut -d' ' -f1) (shell), java $(java -version 2>&1 | head -n1 | cut -d'"' -f2)"
echo "    date:     $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "    load:     $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine makes the times noisy)"

if [ -n "${DDB_ENDPOINT:-}" ]; then
    export AWS_ENDPOINT_URL_DYNAMODB="$DDB_ENDPOINT"
    echo "# DynamoDB at $AWS_ENDPOINT_URL_DYNAMODB (DDB_ENDPOINT)"
else
    mkdir -p .test-tmp
    STATE="$(mktemp -d "$ROOT/.test-tmp/bench.XXXXXX")"
    echo "# tests/harness/ddblocal.sh start --heap 2g $STATE"
    AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start --heap 2g "$STATE")"
    export AWS_ENDPOINT_URL_DYNAMODB
    echo "    DynamoDB Local $(sed -n 's/^Version:[[:space:]]*//p' "$STATE/ddblocal.log") at $AWS_ENDPOINT_URL_DYNAMODB (java -Xms2g -Xmx2g)"
fi

echo "# python3 bench/load.py $TABLE $KEYS"
t0=$(date +%s.%N)
python3 bench/load.py "$TABLE" "$KEYS"
awk -v n="$KEYS" -v t0="$t0" -v t1="$(date +%s.%N)" \
    'BEGIN { printf "    loaded %d items in %.1f s\n", n, t1 - t0 }'

echo "# build/bench-cache --table $TABLE --keys $KEYS --lookups $LOOKUPS $*"
build/bench-cache --table "$TABLE" --keys "$KEYS" --lookups "$LOOKUPS" "$@"
