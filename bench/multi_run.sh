#!/usr/bin/env bash
# bench/multi_run.sh: one thread driving curl_multi against a thread per
# segment, for a parallel Scan at 20 ms a request (docs/performance.md,
# "One thread for every call in flight?").  Builds bench/multi_proto.c
# against build/libddb.a, starts its own DynamoDB Local, loads BenchItems
# (bench/load.py), puts bench/scale/proxy.py in front with BENCH_DELAY_MS
# (20) of delay, records every answer once (live mode), then replays them
# (DynamoDB Local's own time out of the way) for each variant: best of
# BENCH_RUNS (3) wall times, their CPU and peak RSS, then the instructions
# of one run of each under callgrind.  Only prints.
#
#   BENCH_KEYS=N (20000) BENCH_SEGMENTS=S (16) BENCH_LIMIT=L (100, the
#   Limit of each Scan request: pages of L items)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/bench/lib.sh"
bench_env
KEYS="${BENCH_KEYS:-20000}"
SEGS="${BENCH_SEGMENTS:-16}"
LIMIT="${BENCH_LIMIT:-100}"
DELAY="${BENCH_DELAY_MS:-20}"
RUNS="${BENCH_RUNS:-3}"
make -s --no-print-directory build/libddb.a
${CC:-cc} -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -pthread \
    -o build/multi-proto bench/multi_proto.c build/libddb.a \
    -lcurl -lcrypto -lz -lcjson -lm
mkdir -p .test-tmp
WORK="$(mktemp -d "$ROOT/.test-tmp/multi.XXXXXX")"
PROXY_PID=
cleanup() {
    [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
    tests/harness/ddblocal.sh stop "$WORK/ddb" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/ddb"
AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start "$WORK/ddb")"
export AWS_ENDPOINT_URL_DYNAMODB
python3 bench/load.py BenchItems "$KEYS" >/dev/null
python3 bench/scale/proxy.py "${AWS_ENDPOINT_URL_DYNAMODB##*:}" "$DELAY" \
    "$WORK/port" 1800 &
PROXY_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat "$WORK/port")/"
mode() { curl -s -X POST "${URL}__bench/mode/$1" >/dev/null; }

echo "# multi_run: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $KEYS items, $SEGS segments, Limit $LIMIT, $DELAY ms a request, load $(cut -d' ' -f1-3 /proc/loadavg)"
mode live
build/multi-proto threads "$URL" BenchItems "$SEGS" "$LIMIT" >/dev/null
mode replay
for v in threads multi; do
    best=
    for _ in $(seq "$RUNS"); do
        line=$(build/multi-proto "$v" "$URL" BenchItems "$SEGS" "$LIMIT")
        wall=$(echo "$line" | sed 's/.*wall \([0-9]*\) ms.*/\1/')
        if [ -z "$best" ] || [ "$wall" -lt "${best%% *}" ]; then
            best="$wall $line"
        fi
    done
    echo "    ${best#* }"
done
# the scan alone: the segment threads' function, or the multi loop
for v in threads multi; do
    fn=seg_main
    [ "$v" = multi ] && fn=run_multi
    valgrind --tool=callgrind --toggle-collect="$fn" \
        --callgrind-out-file="$WORK/cg.$v" \
        build/multi-proto "$v" "$URL" BenchItems "$SEGS" "$LIMIT" \
        >"$WORK/out.$v" 2>"$WORK/vg.$v"
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/vg.$v")
    req=$(sed 's/.* \([0-9]*\) requests.*/\1/' "$WORK/out.$v")
    awk -v v="$v" -v ir="$ir" -v r="$req" 'BEGIN {
        printf "    %-8s %10.2fM instructions for the scan (callgrind), %7.0f a request\n",
               v, ir / 1e6, ir / r }'
done
