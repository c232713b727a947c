#!/usr/bin/env bash
# make bench-request: what one request costs the client, in instructions
# (callgrind), from the sqlite3 shell: N cold GetItems (a CROSS JOIN of N
# keys with the virtual table, one GetItem a row) against its own DynamoDB
# Local, only the timed statement counted (--instr-atstart=no, switched on
# and off around it with callgrind_control, as bench/scale/profile.sh
# does).  Prints, per request, the inclusive instructions of the client's
# call (ddb_http_call), of the signing (ddb_sign_request, and in it
# ddb_sigv4_sign_json), of curl_easy_perform and of the CRC-32 check.
# Callgrind counts user code only: the kernel (sockets) and waiting are not
# in it.  Nothing is asserted.
#
#   EXT=path/to/dynamodb      the extension to load (build/dynamodb)
#   BENCH_REQUESTS=N          GetItems (2000)
#   BENCH_KEEP=DIR            keep the callgrind output there (cg.out,
#                             incl.txt)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/tests/harness/lib.sh"
set_test_aws_env
export AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=/dev/null \
       AWS_SHARED_CREDENTIALS_FILE=/dev/null
for t in valgrind callgrind_control callgrind_annotate sqlite3 python3; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench-request: $t not found" >&2; exit 1; }
done
EXT="${EXT:-$ROOT/build/dynamodb}"
[ -f "$EXT.so" ] || { echo "bench-request: $EXT.so missing (make loadable)" >&2; exit 1; }
N="${BENCH_REQUESTS:-2000}"
mkdir -p .test-tmp
WORK="$(mktemp -d "$ROOT/.test-tmp/request-instr.XXXXXX")"
cleanup() {
    tests/harness/ddblocal.sh stop "$WORK/ddb" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
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
if [ -n "${BENCH_KEEP:-}" ]; then
    mkdir -p "$BENCH_KEEP" && cp "$WORK/cg.out" "$WORK/incl.txt" "$BENCH_KEEP/"
fi
echo "# bench-request: $(basename "$EXT"), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), rows $(head -n 2 "$WORK/out" | tail -n 1), $requests GetItems"
for f in ddb_http_call ddb_sign_request ddb_sigv4_sign_json curl_easy_perform \
         ddb_crc32 crc32_z; do
    # callgrind_annotate: "1,234,567 (12.3%)  file:function [object]"
    v=$(awk -v f="$f" '{ n = $NF == "]" ? NF - 2 : NF;
            for (i = 1; i <= NF; i++) if ($i ~ (":" f "$") || $i ~ (":" f " ")) { gsub(",", "", $1); print $1; exit } }' \
        "$WORK/incl.txt")
    [ -n "$v" ] || continue
    awk -v f="$f" -v v="$v" -v r="$requests" \
        'BEGIN { printf "    %-24s %10.0f instructions a request\n", f, v / (r > 0 ? r - 1 : 1) }'
done
