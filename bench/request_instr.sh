#!/usr/bin/env bash
# make bench-request: what one request costs the client, in instructions
# (callgrind), from the sqlite3 shell, against a bare libcurl loop of the
# same requests in the same run (the floor).
#
# Ours: N cold GetItems (a CROSS JOIN of N keys with the virtual table,
# one GetItem a row; the first key, asked before, is cached: N-1 requests)
# against its own DynamoDB Local, only the timed statement counted
# (--instr-atstart=no, switched on and off around it with
# callgrind_control, as bench/scale/profile.sh does).
# The floor: bench/scale/curl_floor.c built here and run under callgrind
# against the same server with the same N-1 keys (K#00001..): the same
# headers, body and answer (one item), one kept-alive handle, only its
# loop counted (CALLGRIND_START_INSTRUMENTATION around it).
# Prints, per request, the whole of each, the inclusive instructions of
# the client's call (ddb_http_call), of the signing (ddb_sign_request, and
# in it ddb_sigv4_sign_json), of curl_easy_perform, of libcurl's
# allocator (curl_wipe_free, curl_wipe_realloc), of reading the answer
# (take_item) and of the CRC-32 check; then the RESULT line.  Callgrind
# counts user code only: the kernel (sockets) and waiting are not in it.
# Nothing is asserted.
#
#   EXT=path/to/dynamodb      the extension to load (build/dynamodb)
#   BENCH_REQUESTS=N          GetItems (2000)
#   BENCH_KEEP=DIR            keep the callgrind output there (cg.out,
#                             incl.txt, floor.out, floor-incl.txt)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/bench/lib.sh"
bench_env
export AWS_CONFIG_FILE=/dev/null \
       AWS_SHARED_CREDENTIALS_FILE=/dev/null
for t in valgrind callgrind_control callgrind_annotate sqlite3 python3 cc; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench-request: $t not found" >&2; exit 1; }
done
EXT="${EXT:-$ROOT/build/dynamodb}"
[ -f "$EXT.so" ] || { echo "bench-request: $EXT.so missing (make loadable)" >&2; exit 1; }
N="${BENCH_REQUESTS:-2000}"
bench_work request-instr
mkdir -p "$WORK/ddb"
AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start "$WORK/ddb")"
export AWS_ENDPOINT_URL_DYNAMODB
python3 bench/load.py BenchItems "$N" >/dev/null

ON='.shell callgrind_control -i on $PPID >/dev/null'
OFF='.shell callgrind_control -i off $PPID >/dev/null'
{
    echo ".load $EXT"
    echo "CREATE VIRTUAL TABLE temp.t USING dynamodb(table=BenchItems);"
    echo "CREATE TEMP TABLE k(pk TEXT);"
    echo "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $N - 1)"
    echo "  INSERT INTO k SELECT printf('K#%05d', i) FROM c;"
    echo "SELECT count(*) FROM t WHERE PK = 'K#00000' AND SK = 'S';"
    echo "$ON"
    echo "SELECT count(*), sum(length(t.item)) FROM k CROSS JOIN t ON t.PK = k.pk AND t.SK = 'S';"
    echo "$OFF"
    echo "SELECT value FROM dynamodb_stats WHERE name = 'requests_GetItem';"
} >"$WORK/q.sql"
valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$WORK/cg.out" \
    sqlite3 :memory: <"$WORK/q.sql" >"$WORK/out" 2>"$WORK/valgrind.log"
requests=$(tail -n 1 "$WORK/out")
callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$WORK/cg.out" \
    >"$WORK/incl.txt" 2>/dev/null

# the floor: the same N-1 GetItems from a bare libcurl loop
cc -O2 -o "$WORK/curl_floor" bench/scale/curl_floor.c -lcurl
valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$WORK/floor.out" \
    "$WORK/curl_floor" "$AWS_ENDPOINT_URL_DYNAMODB/" "$((N - 1))" BenchItems \
    >"$WORK/floor.txt" 2>"$WORK/floor-valgrind.log"
callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$WORK/floor.out" \
    >"$WORK/floor-incl.txt" 2>/dev/null
if [ -n "${BENCH_KEEP:-}" ]; then
    mkdir -p "$BENCH_KEEP" && cp "$WORK/cg.out" "$WORK/incl.txt" \
        "$WORK/floor.out" "$WORK/floor-incl.txt" "$BENCH_KEEP/"
fi

# "383,951,615 (100.0%)  PROGRAM TOTALS"
total() { awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$1"; }
# the inclusive count of function $2 in the annotation $1, or nothing
incl() {
    awk -v f="$2" '{ for (i = 1; i <= NF; i++) if ($i ~ (":" f "$") || $i ~ (":" f " ")) { gsub(",", "", $1); print $1; exit } }' "$1"
}
ours_n=$((requests > 1 ? requests - 1 : 1))
floor_n=$((N - 1))
ours=$(awk -v v="$(total "$WORK/incl.txt")" -v r="$ours_n" 'BEGIN { printf "%.0f", v / r }')
floor=$(awk -v v="$(total "$WORK/floor-incl.txt")" -v r="$floor_n" 'BEGIN { printf "%.0f", v / r }')
echo "# bench-request: $(basename "$EXT"), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), rows $(head -n 2 "$WORK/out" | tail -n 1), $ours_n GetItems counted"
echo "# floor: curl_floor, $(cat "$WORK/floor.txt")"
printf "    %-24s %10s instructions a request\n" "ours (whole statement)" "$ours"
for f in ddb_http_call ddb_sign_request ddb_sigv4_sign_json curl_easy_perform \
         curl_wipe_free curl_wipe_realloc take_item ddb_crc32; do
    v=$(incl "$WORK/incl.txt" "$f")
    [ -n "$v" ] || continue
    awk -v f="$f" -v v="$v" -v r="$ours_n" \
        'BEGIN { printf "    %-24s %10.0f instructions a request\n", f, v / r }'
done
printf "    %-24s %10s instructions a request\n" "floor (curl loop)" "$floor"
v=$(incl "$WORK/floor-incl.txt" curl_easy_perform)
[ -z "$v" ] || awk -v v="$v" -v r="$floor_n" \
    'BEGIN { printf "    %-24s %10.0f instructions a request\n", "floor curl_easy_perform", v / r }'
awk -v o="$ours" -v f="$floor" 'BEGIN {
    printf "RESULT request-getitem ours=%d floor=%d ratio=%.2f unit=instructions/request goal=1.5\n",
        o, f, (f > 0 ? o / f : 0) }'
