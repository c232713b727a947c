#!/usr/bin/env bash
# make bench-redis: the shared cache tier (Redis) for a fleet.  8 reader
# processes (build/bench-redis-reader, libdyndb) read the same 10,000 hot
# keys (100 a BatchGetItem) of a DynamoDB Local behind the fault proxy
# (tests/faults/proxy.py), which holds every read's answer back 20 ms: a
# DynamoDB round trip as a fleet sees it.  Without the shared tier and with
# it, side by side: the requests DynamoDB saw and the wall time.  Then the
# cost of one warm shared hit against a DynamoDB round trip on loopback
# (no proxy).  Cold cases: the readers start at one instant (a FIFO),
# without the tier, with it and no leases, with leases (docs/cache.md,
# "Leases").  Only prints; nothing is asserted (bench/README.md).
#
# Environment: BENCH_REDIS_KEYS (default 10000), BENCH_REDIS_PROCS (8),
# BENCH_REDIS_DELAY (seconds, 0.02).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/bench/lib.sh"
bench_env
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
# $3: first one alone first (yes|no), $4: lease wait (BENCH_LEASE_WAIT:
# "" the default, -1 no leases).  The readers of "no" are released at one
# instant: each blocks on a FIFO until all are started.  Prints
# "requests keys wall_ms slowest_ms lease_waits fallbacks".
fleet() {
    local shared="$1" order="$2" first="$3" lw="$4" i n off t0 t1 out
    redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
    : >"$STATE/fleet.out"
    rm -f "$STATE/go"
    mkfifo "$STATE/go"
    t0=$(date +%s%N)
    for i in $(seq 0 $((PROCS - 1))); do
        off=0
        [ "$order" = rotated ] && off=$((i * KEYS / PROCS))
        if [ "$first" = yes ] && [ "$i" = 0 ]; then
            BENCH_LEASE_WAIT="$lw" "$READER" fleet "$PROXY" "$shared" "$TABLE" "$KEYS" "$off" >>"$STATE/fleet.out"
            t0=$(date +%s%N)
            continue
        fi
        (read -r _ <"$STATE/go"; BENCH_LEASE_WAIT="$lw" exec "$READER" fleet "$PROXY" "$shared" "$TABLE" "$KEYS" "$off" >>"$STATE/fleet.out") &
    done
    sleep 0.5
    t0=$(date +%s%N)
    # one line each: every reader's read returns at once
    n=$PROCS
    [ "$first" = yes ] && n=$((PROCS - 1))
    for i in $(seq 1 "$n"); do echo go; done >"$STATE/go"
    wait
    t1=$(date +%s%N)
    out=$(grep -c 'missing=0$' "$STATE/fleet.out" || true)
    [ "$out" = "$PROCS" ] || { echo "bench-redis: a reader failed:" >&2; cat "$STATE/fleet.out" >&2; }
    [ "$first" = yes ] && sed -i 1d "$STATE/fleet.out" # the warm-up's line
    awk -v wall="$(( (t1 - t0) / 1000000 ))" '{
        for(i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        req += v["requests"]; keys += v["keys"]; w += v["lease_waits"]
        fb += v["lease_fallbacks"]; if(v["ms"] + 0 > slow) slow = v["ms"] + 0
    } END { print req + 0, keys + 0, wall, slow, w + 0, fb + 0 }' "$STATE/fleet.out"
}

echo "# $PROCS readers, each all $KEYS keys (BatchGetItem of 100): what DynamoDB saw and the time taken"
echo "    (requests and keys read from DynamoDB by all readers; wall: all of them; slowest: one reader's own time)"
printf '    %-44s %-26s %9s %8s %8s %8s %s\n' "" "" requests keys "wall ms" slowest "lease waits/fallbacks"
for c in "warm: one reads first, then the other $((PROCS - 1)) at once|same|yes" \
         "cold: all at once, each at another key|rotated|no" \
         "cold: all at once, the same keys in order|same|no"; do
    IFS='|' read -r what order first <<<"$c"
    for t in "without the tier|off|" "the tier, no leases|$REDIS|-1" "the tier with leases|$REDIS|"; do
        IFS='|' read -r how url lw <<<"$t"
        read -r r k w sl lw2 fb < <(fleet "$url" "$order" "$first" "$lw")
        printf '    %-44s %-26s %9s %8s %8s %8s %s\n' "$what" "$how" "$r" "$k" "$w" "$sl" "$lw2/$fb"
        what=""
    done
done
echo "    (each key once for all $PROCS: $((KEYS / 100)) requests, $KEYS keys; the goal of a cold fleet: keys <= 1.1 x $KEYS, slowest no later than without the tier)"

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
