#!/usr/bin/env bash
# make bench-instr: the warm-lookup goal counted in instructions
# (callgrind), which the load of a shared machine does not change, beside
# the wall-time ratios of `make bench` part (a).
#
# Starts its own DynamoDB Local, loads 20,000 items (bench/load.py), copies
# them into an ordinary SQLite table n(PK, SK, item, PRIMARY KEY (PK, SK))
# and a driver table of every key in a random order, then counts, under
# valgrind --tool=callgrind, the instructions of the sqlite3 shell running
#   SELECT <cols> FROM drive JOIN <t> x ON x.PK = drive.k AND x.SK = 'S'
# twice, for t = n (the ordinary table) and t = d (the virtual table, its
# item cache warm), less a run that only sets up (loads the extension,
# warms the cache).  Prints instructions a query and the ratio.  Then the
# instructions of one full Scan of the 20,000 items through the extension
# (query_ttl=0: every page from DynamoDB Local, 8 segments), counted and
# with every item's JSON, the same way.  BENCH_EXT: the extension to
# measure (default build/dynamodb), e.g. a build of another commit to
# compare with.  About 8 minutes on 2 CPUs; nothing is asserted.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. "$ROOT/bench/lib.sh"
bench_env
command -v valgrind >/dev/null || { echo "bench-instr: valgrind not found" >&2; exit 1; }
[ -f build/dynamodb.so ] || { echo "bench-instr: build/dynamodb.so missing (make loadable)" >&2; exit 1; }

KEYS="${BENCH_KEYS:-20000}"
bench_work instr
mkdir -p "$WORK/ddb"
AWS_ENDPOINT_URL_DYNAMODB="$(tests/harness/ddblocal.sh start --heap 2g "$WORK/ddb")"
export AWS_ENDPOINT_URL_DYNAMODB
echo "# make bench-instr: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/load.py BenchItems "$KEYS" >/dev/null

EXT="${BENCH_EXT:-$ROOT/build/dynamodb}"
echo "# extension: $EXT"
sqlite3 "$WORK/n.db" <<SQL
.load $EXT
CREATE VIRTUAL TABLE temp.d USING dynamodb(table=BenchItems);
CREATE TABLE n(PK TEXT, SK TEXT, item TEXT, PRIMARY KEY (PK, SK));
INSERT INTO n SELECT PK, SK, item FROM d;
CREATE TABLE drive(k TEXT);
INSERT INTO drive SELECT PK FROM n ORDER BY random();
SQL

# instr TABLE COLS REPS: the instructions of the setup and REPS queries
instr() {
    local sql="$WORK/q.sql" out="$WORK/cg.out" i
    {
        echo ".load $EXT"
        echo "CREATE VIRTUAL TABLE temp.d USING dynamodb(table=BenchItems);"
        echo "SELECT count(*) FROM d WHERE SK = 'S' AND PK IN (SELECT PK FROM n);"
        for ((i = 0; i < $3; i++)); do
            echo "SELECT $2 FROM drive JOIN $1 x ON x.PK = drive.k AND x.SK = 'S';"
        done
    } >"$sql"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        sqlite3 "$WORK/n.db" <"$sql" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

base=$(instr n "1" 0)
printf "    %-24s %14s %14s %8s\n" "selected ($KEYS lookups)" "ordinary" "dynamodb" "ratio"
while IFS='|' read -r what cols; do
    n=$(instr n "$cols" 2)
    d=$(instr d "$cols" 2)
    awk -v w="$what" -v b="$base" -v n="$n" -v d="$d" 'BEGIN {
        qn = (n - b) / 2; qd = (d - b) / 2
        printf "    %-24s %12.1fM %12.1fM %7.2fx\n", w, qn / 1e6, qd / 1e6, qd / qn }'
done <<'Q'
key column only|count(*), sum(length(x.SK))
whole item (JSON text)|count(*), sum(length(x.item))
3 json_extract(item)|count(*), sum(length(json_extract(x.item, '$.name')) + json_extract(x.item, '$.total') + length(json_extract(x.item, '$.pad')))
Q
echo "    instructions a query (callgrind), the setup run subtracted"

# scan COLS REPS: the instructions of the setup and REPS full Scans
scan() {
    local sql="$WORK/s.sql" out="$WORK/cgs.out" i
    {
        echo ".load $EXT"
        echo "CREATE VIRTUAL TABLE temp.s USING dynamodb(table=BenchItems, query_ttl=0);"
        for ((i = 0; i < $2; i++)); do
            echo "SELECT $1 FROM s;"
        done
    } >"$sql"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        sqlite3 "$WORK/n.db" <"$sql" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
sbase=$(scan "1" 0)
printf "    %-36s %14s\n" "full Scan ($KEYS items, query_ttl=0)" "dynamodb"
while IFS='|' read -r what cols; do
    d=$(scan "$cols" 2)
    awk -v w="$what" -v b="$sbase" -v d="$d" 'BEGIN {
        printf "    %-36s %12.3fM\n", w, (d - b) / 2 / 1e6 }'
done <<'Q'
count(*)|count(*)
every item's JSON|count(*), sum(length(item))
Q
echo "    instructions a full Scan (callgrind), the setup run subtracted"
