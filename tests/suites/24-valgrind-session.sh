#!/usr/bin/env bash
# A sqlite3 session that reads (GetItem, Query, parallel Scan, BatchGetItem,
# COUNT) and writes (INSERT, UPDATE, a transaction, DELETE) through the
# extension, under valgrind: no memory error, nothing definitely lost.
# Skipped (as ok) in a SANITIZE=1 build, which valgrind cannot run.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
if [ "${SANITIZE:-}" = 1 ] || ! command -v valgrind >/dev/null; then
  echo "ok 1 - valgrind session # SKIP (sanitizer build or no valgrind)"
  echo "1..1"
  exit 0
fi
python3 tests/harness/fixtures.py ecommerce Vg024 >/dev/null || { echo "not ok 1 - valgrind session: fixtures"; echo "1..1"; exit 0; }
TMP=$(mktemp -d "$ROOT/.test-tmp/vg.XXXXXX")
cat >"$TMP/s.sql" <<SQL
.load ${DDB_EXT:-build/dynamodb}
CREATE VIRTUAL TABLE t USING dynamodb(table=Vg024, columns='status, total N', segments=3);
SELECT count(*) FROM t WHERE PK = 'USER#alice';
SELECT SK FROM t WHERE GSI1PK = 'ORDER' ORDER BY GSI1SK DESC LIMIT 2;
SELECT count(*), sum(length(item)) FROM t;
SELECT count(*) FROM t WHERE status = 'PENDING';
SELECT PK FROM t WHERE PK IN ('USER#alice', 'USER#bob') AND SK IN ('USER#alice', 'USER#bob');
INSERT INTO t(PK, SK, item) VALUES ('VG#1', 'a', '{"x": [1, 2, {"y": "z"}]}');
UPDATE t SET item = json_set(item, '\$.x', 5) WHERE PK = 'VG#1';
BEGIN; INSERT INTO t(PK, SK) VALUES ('VG#1', 'b'); COMMIT;
DELETE FROM t WHERE PK = 'VG#1';
SELECT count(*) > 0 FROM dynamodb_stats;
SELECT count(*) > 0 FROM dynamodb_log;
SELECT dynamodb_cache_clear() >= 0;
SQL
valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
  "${SQLITE3:-sqlite3}" :memory: <"$TMP/s.sql" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q "Error\|error:" "$TMP/out"; then
  echo "ok 1 - valgrind session: no memory error, nothing definitely lost"
  [ -n "${KEEP_VG:-}" ] || rm -rf "$TMP"
else
  echo "not ok 1 - valgrind session: no memory error, nothing definitely lost"
  grep -E "definitely lost|ERROR SUMMARY|Invalid|Error" "$TMP/err" "$TMP/out" | head -20 | sed 's/^/#   /'
fi
python3 tests/harness/fixtures.py drop Vg024 >/dev/null 2>&1
echo "1..1"
