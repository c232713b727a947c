#!/usr/bin/env bash
# make bench-warm: warm (cached) lookups of the virtual
# table against a native SQLite table holding the same rows, in
# instructions (callgrind: the load of a shared machine does not move
# them), for items of 5, 12 and 40 attributes, selecting the key column,
# the whole item, and three json_extract(item, ...).
#
# Starts its own DynamoDB Local, loads Warm5, Warm12 and Warm40
# (bench/warm_load.py: BENCH_WARM_KEYS items each, default 5,000), copies
# each into a native table and a driver table of every key in a random
# order, then runs build/bench-warm-instr (bench/warm_instr.c) under
# valgrind --tool=callgrind, which counts only the lookup statement's
# sqlite3_step (prepared before, a first run uncounted), the same lookups
# in the same order on both tables:
#   SELECT <sel> FROM drive JOIN <t> x ON x.PK = drive.k AND x.SK = 'S'
# and checks that the virtual table's run hit the item cache for every
# key and sent no request.
#
# The native table is n(PK TEXT, SK TEXT, item TEXT, PRIMARY KEY (PK, SK))
# WITHOUT ROWID: the rows clustered by their key, one B-tree descent from
# key to item, as the item cache goes from key to item in one hash lookup
# (a rowid table would look the key up in its PRIMARY KEY index and then
# the row in the table, two descents for the item, which would flatter the
# virtual table; for the key column alone its covering index is one
# descent too).  BENCH_NATIVE=rowid measures the rowid table instead.
#
# Prints a table and a RESULT line per shape and selection (unit
# instructions/lookup, goal 1.15).  BENCH_EXT: the extension to measure
# (default build/dynamodb), e.g. a build of an older commit.  About 3
# minutes on 2 CPUs; nothing is asserted.  BENCH_KEEP=1 keeps the callgrind
# dumps (one a measurement) for callgrind_annotate.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/bench/lib.sh"
bench_env
command -v valgrind >/dev/null || { echo "bench-warm: valgrind not found" >&2; exit 1; }
[ -f build/dynamodb.so ] || { echo "bench-warm: build/dynamodb.so missing (make loadable)" >&2; exit 1; }
[ -x build/bench-warm-instr ] || { echo "bench-warm: build/bench-warm-instr missing (make bench-warm)" >&2; exit 1; }

KEYS="${BENCH_WARM_KEYS:-5000}"
SHAPES="5 12 40"
EXT="${BENCH_EXT:-$ROOT/build/dynamodb}"
ROWID="WITHOUT ROWID"
[ "${BENCH_NATIVE:-}" = rowid ] && ROWID=""
bench_work warm
mkdir -p "$WORK/ddb"
AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start "$WORK/ddb")"
export AWS_ENDPOINT_URL_DYNAMODB
echo "# make bench-warm: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# extension: $EXT; native: ${ROWID:-rowid} table; $KEYS lookups a run"
# shellcheck disable=SC2086
python3 bench/warm_load.py "$KEYS" $SHAPES

for s in $SHAPES; do
    sqlite3 "$WORK/n.db" <<SQL
.load $EXT
CREATE VIRTUAL TABLE temp.d USING dynamodb(table=Warm$s);
CREATE TABLE n$s(PK TEXT, SK TEXT, item TEXT, PRIMARY KEY (PK, SK)) $ROWID;
INSERT INTO n$s SELECT PK, SK, item FROM d;
CREATE TABLE drive$s(k TEXT);
INSERT INTO drive$s SELECT PK FROM n$s ORDER BY random();
SQL
done

# shellcheck disable=SC2086
valgrind --tool=callgrind --collect-atstart=no \
    --callgrind-out-file="$WORK/cg.out" \
    build/bench-warm-instr "$WORK/n.db" "$EXT" "$KEYS" $SHAPES \
    2>"$WORK/valgrind.log" || { cat "$WORK/valgrind.log" >&2; exit 1; }

# each dump: "desc: Trigger: Client Request: <shape> <sel> <kind>", "totals: N"
for f in "$WORK"/cg.out.*; do
    awk '/^desc: Trigger: Client Request:/ { sub(/.*Request: /, ""); name = $0 }
         /^totals:/ { print name "|" $2 }' "$f"
done >"$WORK/counts"

awk -F'|' -v n="$KEYS" '
    { split($1, a, " "); v[a[1] " " a[2] " " a[3]] = $2 / n }
    END {
        nshape = split("5 12 40", shapes, " ")
        nsel = split("key item json3", sels, " ")
        split("key column only|whole item (JSON text)|3 json_extract(item)", what, "|")
        printf "    %-10s %-24s %10s %10s %7s\n", "attributes", "selected", "native", "dynamodb", "ratio"
        for (i = 1; i <= nshape; i++)
            for (j = 1; j <= nsel; j++) {
                k = shapes[i] " " sels[j]
                printf "    %-10s %-24s %10.0f %10.0f %6.2fx\n", shapes[i], what[j],
                    v[k " native"], v[k " dynamodb"], v[k " dynamodb"] / v[k " native"]
            }
        print "    instructions a lookup (callgrind, only the lookup statement counted)"
        for (i = 1; i <= nshape; i++)
            for (j = 1; j <= nsel; j++) {
                k = shapes[i] " " sels[j]
                printf "RESULT warm-%s-%sattrs ours=%.0f floor=%.0f ratio=%.2f unit=instructions/lookup goal=1.15\n",
                    sels[j], shapes[i], v[k " dynamodb"], v[k " native"], v[k " dynamodb"] / v[k " native"]
            }
    }' "$WORK/counts"
