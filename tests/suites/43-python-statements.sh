#!/usr/bin/env bash
# Statements as Python's sqlite3 module runs them (Debian's /usr/bin/python3,
# which can load extensions): a cursor left half read while others run,
# and a program that sets its own trace callback.  Each statement's
# dynamodb_last() and max_requests count that statement alone.  Then
# max_rcu and max_wcu's waits, without timing: at 0.01 units a second a
# request after one that consumed half a unit must wait (for about 50 s);
# another thread sees the wait start (dynamodb_stats' rate_waits) and
# interrupts it, which must end it.  TAP output.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
PY=/usr/bin/python3
if ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - python statements # SKIP $PY cannot load extensions"; echo "1..1"; exit 0
fi
# with SANITIZE=1 the extension is built with ASan: python3 gets its
# runtime first (as suites 36, 50 and 55 do)
. tests/harness/sanitize.sh
san_export
for t in PyStmt043 PyRate043 PyRate043b PyRate043w; do
  python3 tests/harness/fixtures.py lesson $t >/dev/null ||
    { echo "not ok 1 - python statements: fixtures"; echo "1..1"; exit 0; }
done
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

import threading, time
def connect():
    k = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    k.enable_load_extension(True)
    k.load_extension(sys.argv[1])
    return k
watcher = connect()
def waits():
    return watcher.execute(
        "SELECT value FROM dynamodb_stats WHERE name = 'rate_waits'").fetchone()[0]
def run_paced(conn, sql):
    """Run sql on conn; interrupt it once a wait for the bucket has started.
    Returns (the error, whether a wait started)."""
    before, seen, done = waits(), [], threading.Event()
    def watch():
        end = time.time() + 120
        while not done.is_set() and time.time() < end:
            if waits() > before:
                seen.append(1)
                conn.interrupt()
                return
            time.sleep(0.01)
    w = threading.Thread(target=watch)
    w.start()
    err = None
    try:
        conn.execute(sql).fetchall()
    except sqlite3.OperationalError as e:
        err = str(e)
    done.set()
    w.join()
    return err, bool(seen)

a = connect()
a.execute("CREATE VIRTUAL TABLE r USING dynamodb(table=PyRate043, item_ttl=0,"
          " query_ttl=0, max_rcu=0.01)")
err, seen = run_paced(a, "SELECT count(*) FROM r o JOIN r x ON x.PK = o.PK AND"
                         " x.SK = o.SK WHERE o.PK = 'CUSTOMER#alice'")
tap(seen and err and "interrupted" in err,
    "max_rcu: the GetItem after a Query waits for the bucket; an interrupt ends the wait",
    (err, seen))
b = connect()
b.execute("CREATE VIRTUAL TABLE r2 USING dynamodb(table=PyRate043, item_ttl=0,"
          " query_ttl=0, max_rcu=0.01)")
res = []
t = threading.Thread(target=lambda: res.append(run_paced(
    b, "SELECT count(*) FROM r2 WHERE PK = 'CUSTOMER#bob' AND SK = 'PROFILE'")))
t.start()
t.join()
err, seen = res[0]
tap(seen and err and "interrupted" in err,
    "max_rcu: another connection, on another thread, waits for the same table's bucket",
    (err, seen))
a.execute("CREATE VIRTUAL TABLE rb USING dynamodb(table=PyRate043b, query_ttl=0,"
          " max_rcu=0.01)")
err, seen = run_paced(a, "SELECT count(*) FROM rb WHERE PK IN ('CUSTOMER#alice',"
                         " 'CUSTOMER#bob')")
tap(seen and err and "interrupted" in err,
    "max_rcu: the two Queries of an IN list, on two worker threads, share the bucket: one waits",
    (err, seen))
a.execute("CREATE VIRTUAL TABLE w USING dynamodb(table=PyRate043w, max_wcu=0.01)")
a.execute("INSERT OR REPLACE INTO w(PK, SK, item) VALUES ('W', '1', '{}')")
err, seen = run_paced(a, "INSERT OR REPLACE INTO w(PK, SK, item) VALUES ('W', '2', '{}')")
tap(seen and err and "interrupted" in err and "not applied" in err,
    "max_wcu: the second write waits; interrupted, it is not applied", (err, seen))
a.execute("CREATE VIRTUAL TABLE free USING dynamodb(table=PyRate043b, item_ttl=0)")
before = waits()
a.execute("SELECT count(*) FROM free o JOIN free x ON x.PK = o.PK AND x.SK = o.SK"
          " WHERE o.PK = 'CUSTOMER#alice'").fetchall()
tap(waits() == before, "without max_rcu nothing waits", waits() - before)
print("1..%d" % n)
PY
for t in PyStmt043 PyRate043 PyRate043b PyRate043w; do
  python3 tests/harness/fixtures.py drop $t >/dev/null 2>&1
done
