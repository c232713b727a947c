#!/usr/bin/env bash
# make bench-decode: decoding Scan pages against its floor, in instructions
# (callgrind), and the CPU a full Scan costs with the default segments
# against one segment.
#
# 1. bench/decode_pages.py writes 4 Scan pages of 1,000 items each (the
#    shape of bench/scale/load.py: about 250 bytes an item as DynamoDB
#    counts it; deterministic, no server).  Ours: build/bench-decode
#    (bench/decode_bench.c on build/libddb.a): for each page the CRC-32
#    check, ddb_page_parse (the tape, the items, the counts: what a Scan
#    does with a body) and every item rendered by the `item` column's
#    renderer.  The floor: build/bench-decode-floor (bench/decode_floor.cc,
#    simdjson's DOM parser) rendering the same items into the same JSON.
#    The two outputs must be equal byte for byte (the script fails when
#    not).  Only each program's decode_pages() is counted
#    (--toggle-collect).  Prints instructions an item and the ratio.
# 2. (skipped with DECODE_SCAN=0) Starts its own DynamoDB Local, loads
#    BenchItems (bench/load.py, DECODE_SCAN_ITEMS items, 20,000), and runs
#    five full Scans of every item's JSON in one sqlite3 shell (query_ttl=0:
#    every page from the server) five times with the default segments and
#    five times with segments=1, and five times only the setup: the
#    shell's user+sys CPU (getrusage of the child) an item, medians, the
#    setup subtracted, and the ratio; then the same Scan once each way
#    under callgrind, in instructions an item.  The server's CPU is not in
#    either.
#
# Ends with RESULT lines (docs: bench/README.md).  Nothing is asserted but
# the equality of the outputs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/bench/lib.sh"
for t in valgrind python3; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench-decode: $t not found" >&2; exit 1; }
done
for b in build/bench-decode build/bench-decode-floor; do
    [ -x "$b" ] || { echo "bench-decode: $b missing (make bench-decode builds it)" >&2; exit 1; }
done
bench_work decode

echo "# make bench-decode: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/decode_pages.py "$WORK/pages" >"$WORK/pages.txt"
echo "# pages: $(cat "$WORK/pages.txt") in 4 pages"

# count BIN: the instructions of BIN's decode_pages over the pages
count() {
    valgrind --tool=callgrind --toggle-collect=decode_pages \
        --callgrind-out-file="$WORK/cg.$(basename "$1")" \
        "$1" "$WORK/out.$(basename "$1")" "$WORK"/pages/page-*.json \
        2>"$WORK/vg.$(basename "$1")" >"$WORK/run.$(basename "$1")" ||
        { cat "$WORK/vg.$(basename "$1")" >&2; exit 1; }
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/vg.$(basename "$1")"
}
ours=$(count build/bench-decode)
floor=$(count build/bench-decode-floor)
items=$(sed -n 's/^\([0-9]*\) items.*/\1/p' "$WORK/run.bench-decode")
if ! cmp -s "$WORK/out.bench-decode" "$WORK/out.bench-decode-floor"; then
    echo "bench-decode: the floor's JSON differs from ours:" >&2
    cmp "$WORK/out.bench-decode" "$WORK/out.bench-decode-floor" >&2 || true
    exit 1
fi
echo "# outputs equal: $items items, $(wc -c <"$WORK/out.bench-decode") bytes of JSON each ($(sed -n 's/.*(\(.*\))/simdjson kernel \1/p' "$WORK/run.bench-decode-floor"))"
callgrind_annotate --auto=no --inclusive=yes --threshold=100 \
    "$WORK/cg.bench-decode" >"$WORK/incl.txt" 2>/dev/null
# callgrind_annotate: "1,234,567 (12.3%)  file:function [object]"
for f in ddb_crc32 ddb_page_parse ddb_tape_value ddb_item_from_tape \
         ddb_item_to_json; do
    awk -v f="$f" -v n="$items" '$2 ~ /^\(/ && ($3 ~ (":" f "$")) {
        v = $1; gsub(",", "", v)
        printf "    ours, inclusive: %-20s %8.0f instructions an item\n", f, v / n
        exit }' "$WORK/incl.txt"
done
# the floor's parse alone (simdjson's stages 1 and 2, self cost), for
# comparison with figures that count no rendering
callgrind_annotate --auto=no --inclusive=no --threshold=100 \
    "$WORK/cg.bench-decode-floor" 2>/dev/null |
    awk -v n="$items" '$2 ~ /^\(/ && /dom_parser_implementation::stage[12]/ {
        v = $1; gsub(",", "", v); s += v }
        END { printf "    floor, of which simdjson parse %8.0f instructions an item\n", s / n }'
awk -v o="$ours" -v f="$floor" -v n="$items" 'BEGIN {
    printf "    ours  (tape, CRC-32, render) %10.0f instructions an item\n", o / n
    printf "    floor (simdjson, render)     %10.0f instructions an item\n", f / n
    printf "RESULT scan-decode-1thread ours=%.0f floor=%.0f ratio=%.2f unit=instructions/item goal=2.0\n", o / n, f / n, o / f }' >"$WORK/result1"
grep -v '^RESULT' "$WORK/result1"

if [ "${DECODE_SCAN:-1}" != 0 ]; then
    bench_env
    EXT="${DECODE_EXT:-$ROOT/build/dynamodb}" # the extension measured
    [ -f "$EXT.so" ] || { echo "bench-decode: $EXT.so missing (make loadable)" >&2; exit 1; }
    N="${DECODE_SCAN_ITEMS:-20000}"
    mkdir -p "$WORK/ddb"
    AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start --heap 2g "$WORK/ddb")"
    export AWS_ENDPOINT_URL_DYNAMODB
    python3 bench/load.py BenchItems "$N" >/dev/null
    # cpu SEGOPT [none]: the shell's user+sys seconds for REPS full Scans
    # in one session (with "none": the same setup without the Scans)
    REPS=5
    cpu() {
        local sql="$WORK/scan.sql" r
        {
            echo ".load $EXT"
            echo "CREATE VIRTUAL TABLE temp.s USING dynamodb(table=BenchItems, query_ttl=0$1);"
            for ((r = 0; r < REPS; r++)); do
                if [ "${2:-}" = none ]; then
                    echo "SELECT $N, 0;"
                else
                    echo "SELECT count(*), sum(length(item)) FROM s;"
                fi
            done
        } >"$sql"
        # getrusage(RUSAGE_CHILDREN) of a python3 that runs the shell
        python3 -c 'import resource, subprocess, sys
with open(sys.argv[1]) as i, open(sys.argv[2], "w") as o:
    subprocess.run(["sqlite3", ":memory:"], stdin=i, stdout=o, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (r.ru_utime + r.ru_stime))' "$sql" "$WORK/scan.out"
        [ "$(grep -c "^$N|" "$WORK/scan.out")" = "$REPS" ] ||
            { echo "bench-decode: the Scan did not read $N items: $(cat "$WORK/scan.out")" >&2; exit 1; }
    }
    # cg SEGOPT [SELECT]: the shell's instructions (callgrind, every thread;
    # callgrind runs one thread at a time, so this counts the work, not
    # what contention adds to it)
    cg() {
        {
            echo ".load $EXT"
            echo "CREATE VIRTUAL TABLE temp.s USING dynamodb(table=BenchItems, query_ttl=0$1);"
            [ -z "${2:-}" ] || echo "$2"
        } >"$WORK/cg.sql"
        valgrind --tool=callgrind --callgrind-out-file="$WORK/cgscan.out" \
            sqlite3 :memory: <"$WORK/cg.sql" 2>&1 >/dev/null |
            sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    cpu "" >/dev/null # the server's first Scan warms its path
    for r in 1 2 3 4 5; do
        cpu "" >>"$WORK/seg8"
        cpu ", segments=1" >>"$WORK/seg1"
        cpu "" none >>"$WORK/seg0"
    done
    med() { sort -n "$1" | sed -n 3p; }
    s0=$(med "$WORK/seg0")
    s8=$(awk -v a="$(med "$WORK/seg8")" -v b="$s0" 'BEGIN { print a - b }')
    s1=$(awk -v a="$(med "$WORK/seg1")" -v b="$s0" 'BEGIN { print a - b }')
    awk -v a="$s8" -v b="$s1" -v n="$((N * REPS))" 'BEGIN {
        printf "    %d items (5 full Scans in one shell), CPU of the shell (user+sys, medians of 5 shells, the setup subtracted)\n", n
        printf "    default segments %8.0f ns an item\n", a / n * 1e9
        printf "    segments=1       %8.0f ns an item\n", b / n * 1e9
        printf "RESULT scan-cpu-segments ours=%.0f floor=%.0f ratio=%.2f unit=ns-cpu/item goal=1.2\n", a / n * 1e9, b / n * 1e9, a / b }' >"$WORK/result2"
    grep -v '^RESULT' "$WORK/result2"
    q="SELECT count(*), sum(length(item)) FROM s;"
    i0=$(cg "")
    i8=$(cg "" "$q")
    i1=$(cg ", segments=1" "$q")
    awk -v b="$i0" -v a="$i8" -v c="$i1" -v n="$N" 'BEGIN {
        printf "    the same Scan in instructions (callgrind, the setup run subtracted)\n"
        printf "    default segments %8.0f instructions an item\n", (a - b) / n
        printf "    segments=1       %8.0f instructions an item\n", (c - b) / n
        printf "RESULT scan-instr-segments ours=%.0f floor=%.0f ratio=%.2f unit=instructions/item goal=1.2\n", (a - b) / n, (c - b) / n, (a - b) / (c - b) }' >"$WORK/result3"
    grep -v '^RESULT' "$WORK/result3"
    echo "    (the online cores: $(getconf _NPROCESSORS_ONLN))"
fi
grep -h '^RESULT' "$WORK"/result*
