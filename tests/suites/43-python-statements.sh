#!/usr/bin/env bash
# Statements as Python's sqlite3 module runs them (Debian's /usr/bin/python3,
# which can load extensions): a cursor left half read while others run,
# and a program that sets its own trace callback.  Each statement's
# dynamodb_last() and max_requests count that statement alone.  TAP output.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
PY=/usr/bin/python3
if ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - python statements # SKIP $PY cannot load extensions"; echo "1..1"; exit 0
fi
python3 tests/harness/fixtures.py lesson PyStmt043 >/dev/null ||
  { echo "not ok 1 - python statements: fixtures"; echo "1..1"; exit 0; }
"$PY" - "${DDB_EXT:-build/dynamodb}" <<'PY' || echo "not ok 99 - python statements: the script died (status $?)"
import json, sqlite3, sys
n = 0
def tap(ok, name, detail=""):
    global n
    n += 1
    print("%s %d - python statements: %s" % ("ok" if ok else "not ok", n, name))
    if not ok:
        print("#   " + str(detail))
c = sqlite3.connect(":memory:", isolation_level=None)
c.enable_load_extension(True)
c.load_extension(sys.argv[1])
c.execute("CREATE VIRTUAL TABLE t USING dynamodb(table=PyStmt043, max_requests=2,"
          " item_ttl=0, query_ttl=0)")
last = lambda: json.loads(c.execute("SELECT dynamodb_last()").fetchone()[0])
half = c.execute("SELECT SK FROM t WHERE PK = 'CUSTOMER#alice'")
half.fetchone()
got = [c.execute("SELECT count(*) FROM t WHERE PK = 'CUSTOMER#bob'").fetchone()[0]
       for i in range(4)]
l = last()
tap(got == [2] * 4 and l["requests"] == {"Query": 1}
    and l["sql"] == "SELECT count(*) FROM t WHERE PK = 'CUSTOMER#bob'",
    "with a cursor left half read, each statement is its own (max_requests=2 "
    "is not reached by four Queries)", (got, l))
rest = half.fetchall()
tap(len(rest) == 3 and last()["sql"] == "SELECT SK FROM t WHERE PK = 'CUSTOMER#alice'",
    "the half-read statement, finished, is the last one", (rest, last()))
c.set_trace_callback(lambda sql: None)
got = [c.execute("SELECT count(*) FROM t WHERE PK = 'CUSTOMER#bob'").fetchone()[0]
       for i in range(4)]
l = last()
tap(got == [2] * 4 and l["requests"] == {"Query": 1},
    "with the program's own trace callback, statements still count apart", (got, l))
try:
    c.execute("SELECT count(*) FROM t a JOIN t b ON b.PK = a.PK AND b.SK = a.SK"
              " WHERE a.PK = 'CUSTOMER#alice'").fetchone()
    tap(False, "max_requests still stops a statement of three requests")
except sqlite3.OperationalError as e:
    tap("max_requests=2" in str(e), "max_requests still stops a statement of three requests", e)
print("1..%d" % n)
PY
python3 tests/harness/fixtures.py drop PyStmt043 >/dev/null 2>&1
