#!/usr/bin/env bash
# make bench-scale-profile: where the extension's CPU goes, by callgrind, on
# workload 2 (full Scan rendering every item's JSON), workload 4 (2,000
# GetItems, cold) and workload 5 (the same from the warm cache), in the
# real sqlite3 shell.  Starts
# its own DynamoDB Local (2 GiB heap), loads the same data as run.sh, and
# always stops the server by PID.  Only the timed statement is counted
# (--instr-atstart=no, switched on and off around it with
# callgrind_control from the shell's .shell).  Writes build/bench-scale-
# profile/latest/{w2,w4,w5}.callgrind and .txt (callgrind_annotate, self cost) and
# prints the top functions of each.  Callgrind counts instructions of user
# code only: time in the kernel (sockets) and waiting are not in it.
#
#   BENCH_PROFILE_TOP=N   functions listed per workload (25)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# Each run in its own folder (make bench and make bench-scale may run at
# once in this tree); build/bench-scale-profile/latest points to the newest.  Folders of
# finished runs older than an hour go.
BASE="$ROOT/build/bench-scale-profile"
mkdir -p "$BASE"
find "$BASE" -mindepth 1 -maxdepth 1 -type d -name 'run-*' -mmin +60 \
    ! -exec test -e '{}/ddblocal/pid' ';' -exec rm -rf '{}' + 2>/dev/null || true
WORK="${BENCH_SCALE_PROFILE_DIR:-$BASE/run-$(date +%Y%m%d-%H%M%S)-$$}"
TABLE=Store
DDB="$WORK/ddblocal"
TOP="${BENCH_PROFILE_TOP:-25}"

for t in valgrind callgrind_control callgrind_annotate sqlite3 python3 java; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench-scale-profile: $t not found (apt-get install valgrind)" >&2; exit 1; }
done
[ -f build/dynamodb.so ] || { echo "bench-scale-profile: build/dynamodb.so missing" >&2; exit 1; }

mkdir -p "$WORK" "$DDB"
ln -sfn "$WORK" "$BASE/latest"
cleanup() { tests/harness/ddblocal.sh stop "$DDB" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
URL=$(tests/harness/ddblocal.sh start --heap 2g "$DDB")
echo "bench-scale-profile: DynamoDB Local at $URL" >&2
python3 bench/scale/load.py "$URL" "$TABLE" "$WORK" >"$WORK/load.json"
cat "$WORK/load.json" >&2

export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 \
       AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null \
       AWS_ENDPOINT_URL_DYNAMODB="$URL"

# $PPID in .shell's sh is the sqlite3 process, which valgrind runs as itself.
ON='.shell callgrind_control -i on $PPID >/dev/null'
OFF='.shell callgrind_control -i off $PPID >/dev/null'

cat >"$WORK/w2.sql" <<SQL
.load build/dynamodb
CREATE VIRTUAL TABLE t USING dynamodb(table=$TABLE);
$ON
SELECT count(*), sum(length(item)) FROM t;
$OFF
SQL
cat >"$WORK/w4.sql" <<SQL
.load build/dynamodb
CREATE VIRTUAL TABLE t USING dynamodb(table=$TABLE);
.read $WORK/keys.sql
$ON
SELECT count(*), sum(length(t.item)) FROM k CROSS JOIN t ON t.PK = k.pk AND t.SK = k.sk;
$OFF
SQL
cat >"$WORK/w5.sql" <<SQL
.load build/dynamodb
CREATE VIRTUAL TABLE t USING dynamodb(table=$TABLE);
.read $WORK/keys.sql
SELECT count(*), sum(length(t.item)) FROM k CROSS JOIN t ON t.PK = k.pk AND t.SK = k.sk;
$ON
SELECT count(*), sum(length(t.item)) FROM k CROSS JOIN t ON t.PK = k.pk AND t.SK = k.sk;
$OFF
SELECT name, value FROM dynamodb_stats WHERE name IN ('item_hits', 'item_misses', 'requests_GetItem');
SQL

for w in w2 w4 w5; do
    echo "bench-scale-profile: callgrind, $w" >&2
    timeout 1200 valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file="$WORK/$w.callgrind" \
        sqlite3 :memory: <"$WORK/$w.sql" >"$WORK/$w.out" 2>"$WORK/$w.valgrind.log"
    cat "$WORK/$w.out" >&2
    callgrind_annotate --auto=no --inclusive=no --threshold=100 "$WORK/$w.callgrind" \
        >"$WORK/$w.txt" 2>/dev/null
    callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$WORK/$w.callgrind" \
        >"$WORK/$w.inclusive.txt" 2>/dev/null
done

python3 bench/scale/top.py "$TOP" "$WORK" w2 w4 w5 | tee "$WORK/profile.md"
