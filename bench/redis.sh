#!/usr/bin/env bash
# make bench-redis: the shared cache tier (Redis) for a fleet.  8 reader
# processes (build/bench-redis-reader, libdyndb) read the same 10,000 hot
# keys (100 a BatchGetItem) of a DynamoDB Local behind the fault proxy
# (tests/faults/proxy.py), which holds every read's answer back 20 ms: a
# DynamoDB round trip as a fleet sees it.  Without the shared tier and with
# it, side by side: the requests DynamoDB saw and the wall time.  Then the
# cost of one warm shared hit against a DynamoDB round trip on loopback
# (no proxy).  Only prints; nothing is asserted (bench/README.md).
#
# Environment: BENCH_REDIS_KEYS (default 10000), BENCH_REDIS_PROCS (8),
# BENCH_REDIS_DELAY (seconds, 0.02).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/tests/harness/lib.sh"
set_test_aws_env
export AWS_EC2_METADATA_DISABLED=true
ensure_boto3_python "$ROOT" || true

KEYS="${BENCH_REDIS_KEYS:-10000}"
PROCS="${BENCH_REDIS_PROCS:-8}"
DELAY="${BENCH_REDIS_DELAY:-0.02}"
TABLE=BenchRedis
READER="$ROOT/build/bench-redis-reader"
mkdir -p .test-tmp
STATE="$(mktemp -d "$ROOT/.test-tmp/bench-redis.XXXXXX")"
PROXY_PID=""
cleanup() {
    [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
    tests/harness/redis.sh stop "$STATE/redis" >/dev/null 2>&1 || true
    tests/harness/ddblocal.sh stop "$STATE/ddb" >/dev/null 2>&1 || true
    rm -rf "$STATE"
}
trap cleanup EXIT

tests/harness/redis.sh have || { echo "bench-redis: redis-server missing (tools/install-deps.sh)" >&2; exit 1; }
echo "# make bench-redis (bench/redis.sh): $PROCS processes, $KEYS hot keys, ${DELAY}s a DynamoDB request"
echo "    load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs (other work on the machine makes the times noisy)"
DDB="$(tests/harness/ddblocal.sh start --heap 1g "$STATE/ddb")"
export AWS_ENDPOINT_URL_DYNAMODB="$DDB"
python3 bench/load.py "$TABLE" "$KEYS"
REDIS="$(tests/harness/redis.sh start "$STATE/redis")"
REDIS_PORT="$(cat "$STATE/redis/port")"
python3 tests/faults/proxy.py --upstream "$DDB" >"$STATE/proxy.port" 2>"$STATE/proxy.err" &
PROXY_PID=$!
for _ in $(seq 1 100); do [ -s "$STATE/proxy.port" ] && break; sleep 0.1; done
PROXY="http://127.0.0.1:$(head -n1 "$STATE/proxy.port")"
curl -s -X POST "$PROXY/__control" -d "{\"fault\": \"delay\", \"mode\": \"always\", \
\"ops\": [\"GetItem\", \"BatchGetItem\"], \"delay\": $DELAY}" >/dev/null
echo "    DynamoDB Local $DDB, behind the proxy $PROXY (+${DELAY}s a read); Redis $REDIS"

# run PROCS readers; $1: shared URL or off, $2: offsets (same|rotated),
# $3: first one alone first (yes|no).  Prints "requests wall_ms".
fleet() {
    local shared="$1" order="$2" first="$3" i off t0 t1 req=0 out
    redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
    t0=$(date +%s%N)
    : >"$STATE/fleet.out"
    for i in $(seq 0 $((PROCS - 1))); do
        off=0
        [ "$order" = rotated ] && off=$((i * KEYS / PROCS))
        "$READER" fleet "$PROXY" "$shared" "$TABLE" "$KEYS" "$off" >>"$STATE/fleet.out" &
        if [ "$first" = yes ] && [ "$i" = 0 ]; then wait; fi
    done
    wait
    t1=$(date +%s%N)
    req=$(awk -F'[= ]' '{ s += $2 } END { print s + 0 }' "$STATE/fleet.out")
    out=$(grep -c 'missing=0$' "$STATE/fleet.out" || true)
    [ "$out" = "$PROCS" ] || { echo "bench-redis: a reader failed:" >&2; cat "$STATE/fleet.out" >&2; }
    echo "$req $(( (t1 - t0) / 1000000 ))"
}

echo "# $PROCS readers, each all $KEYS keys (BatchGetItem of 100): requests DynamoDB saw, wall time"
printf '    %-52s %22s %18s\n' "" "without the tier" "with it"
for c in "one warms up, then the other $((PROCS - 1)) at once|same|yes" \
         "all at once, each starting at another key|rotated|no" \
         "all at once, the same order (no coalescing)|same|no"; do
    IFS='|' read -r what order first <<<"$c"
    read -r r0 w0 < <(fleet off "$order" "$first")
    read -r r1 w1 < <(fleet "$REDIS" "$order" "$first")
    printf '    %-52s %9s req %7s ms %6s req %6s ms\n' "$what" "$r0" "$w0" "$r1" "$w1"
done
echo "    (each key once for all $PROCS: $((KEYS / 100)) requests)"

echo "# one GetItem, the process's cache off (budget 0): a warm shared hit vs a DynamoDB round trip, loopback"
redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
shared=$("$READER" latency "$DDB" "$REDIS" "$TABLE" "$KEYS" 2000)
direct=$("$READER" latency "$DDB" off "$TABLE" "$KEYS" 2000)
proxied=$("$READER" latency "$PROXY" off "$TABLE" "$KEYS" 100)
echo "    shared hit (Redis):              $shared"
echo "    DynamoDB Local, loopback:        $direct"
echo "    DynamoDB through the 20 ms proxy: $proxied"
awk -v a="$shared" -v b="$direct" -v c="$proxied" 'function mean(s) { sub(/^mean_us=/, "", s); sub(/ .*/, "", s); return s + 0 }
    BEGIN { printf "    a shared hit costs %.3f of a loopback DynamoDB round trip, %.4f of a 20 ms one\n",
            mean(a) / mean(b), mean(a) / mean(c) }'
