#!/usr/bin/python3
"""Interrupts and bounds through the fault proxy (tests/suites/25-trust-fork.sh).

Run with Debian's /usr/bin/python3, whose sqlite3 module loads extensions;
boto3 checks go through `python3` on PATH (tests/harness/fixtures.py).  Starts
tests/faults/proxy.py in front of AWS_ENDPOINT_URL_DYNAMODB and reads
TABLE (made by tests/trust/oracle.py setup) through it:

  * conn.interrupt() from a timer thread stops a statement whose request
    hangs (the proxy holds the answer 600 s) or whose calls keep failing
    (500s, throttles: a retry loop of about a minute), within BOUND seconds,
    with an error that says "interrupted"; a parallel Scan and a
    BatchGetItem too; a write says whether it may have been applied
  * SIGINT to the sqlite3 shell (its Ctrl-C) does the same
  * a LastEvaluatedKey that repeats the ExclusiveStartKey (Query, Scan,
    parallel Scan), or keys that go round in a circle of two (a Query's
    going back in its sort key order), are an error naming it, not an
    endless loop
  * UnprocessedKeys / UnprocessedItems for ever end after max_retries
  * a parallel Scan read by a slow consumer never holds more than
    2 x segments pages (dynamodb_stats scan_pages_peak)

    proxy_check.py TABLE

Prints TAP lines.
"""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build/dynamodb"))
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
BOUND = 5.0  # seconds: an interrupt ends a statement well within this
TAP = Tap("trust: ")
PROXY = None


def control(**cfg):
    req = urllib.request.Request(PROXY + "/__control",
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    urllib.request.urlopen(req, timeout=10).read()


def stats():
    return json.loads(urllib.request.urlopen(PROXY + "/__stats",
                                             timeout=10).read())


def connect(table, opts=""):
    conn = sqlite3.connect(":memory:", isolation_level=None,
                           check_same_thread=False)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    conn.execute("CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
                 "endpoint='%s', progress=off%s)" % (table, PROXY, opts))
    return conn


def run_interrupted(conn, sql, after=0.7):
    """Run sql, conn.interrupt() after `after` s; (error text or None,
    seconds from the interrupt to the end)."""
    t_int = [None]

    def fire():
        t_int[0] = time.monotonic()
        conn.interrupt()
    timer = threading.Timer(after, fire)
    timer.start()
    err = None
    try:
        conn.execute(sql).fetchall()
    except sqlite3.Error as e:
        err = str(e)
    end = time.monotonic()
    timer.cancel()
    return err, (end - t_int[0]) if t_int[0] else 0.0


def check_interrupt(name, table, fault, ops, sql, opts="", want=None,
                    unwanted=None, delay=600):
    control(fault=fault, mode="always", ops=ops, delay=delay)
    conn = connect(table, ", timeout=60, max_retries=10, item_ttl=0, "
                   "query_ttl=0" + opts)
    err, took = run_interrupted(conn, sql)
    control(fault="none")
    ok = err is not None and "interrupted" in err and took < BOUND
    for w in want or ():
        ok = ok and w in err
    for u in unwanted or ():
        ok = ok and u not in err
    TAP.ok(ok, "%s: ends %.1f s after the interrupt (bound %.0f s)"
           % (name, took, BOUND), "error: %r" % err)
    conn.close()
    return err


def item_exists(table, sk):
    out = subprocess.run(["python3", os.path.join(ROOT, "tests/harness/fixtures.py"),
                          "get", table, "PK=W", "SK=" + sk],
                         capture_output=True, text=True).stdout.strip()
    return out != "(no item)"


def shell(table, opts, sql, sigint_after=None, timeout=120):
    """The sqlite3 shell on sql (one statement a line); with sigint_after,
    SIGINT after that many seconds.  (output, seconds from the SIGINT to
    the shell's end, or the whole run)."""
    script = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
              "endpoint='%s', progress=off%s);\n%s\n"
              % (EXT, table, PROXY, opts, sql))
    p = subprocess.Popen([SQLITE3, ":memory:"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    p.stdin.write(script)
    p.stdin.close()
    p.stdin = None
    t0 = time.monotonic()
    if sigint_after is not None:
        time.sleep(sigint_after)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        out = "(killed after %d s)" % timeout
    return out, time.monotonic() - t0


def main():
    global PROXY
    table = sys.argv[1]
    upstream = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    proxy = subprocess.Popen(
        ["python3", os.path.join(ROOT, "tests/faults/proxy.py"),
         "--upstream", upstream], stdout=subprocess.PIPE, text=True)
    try:
        PROXY = "http://127.0.0.1:%s" % proxy.stdout.readline().strip()
        run(table)
    finally:
        proxy.kill()
        proxy.wait()
    return TAP.done()


def fork_check(table):
    """Parent and child of os.fork() share the connection's kept-alive
    curl handle: each runs GetItems and INSERTs at once; every answer must
    be the item asked for, every INSERT reported done written (boto3)."""
    endpoint = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("CREATE VIRTUAL TABLE f USING dynamodb(table=%s, "
                 "endpoint='%s', item_ttl=0, timeout=5, max_retries=2)"
                 % (table, endpoint))
    conn.execute("SELECT v FROM (SELECT json_extract(item, '$.v') AS v "
                 "FROM f WHERE PK = 'F' AND SK = 'k000')").fetchall()
    written = os.path.join(ROOT, ".test-tmp/trust/py-written")
    if os.path.exists(written):
        os.remove(written)
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    role = "child" if pid == 0 else "parent"
    wrong = errors = puts = 0
    rnd = __import__("random").Random(os.getpid())
    for i in range(300):
        k = "k%03d" % rnd.randrange(200)
        try:
            got = conn.execute("SELECT json_extract(item, '$.v') FROM f "
                               "WHERE PK = 'F' AND SK = ?", (k,)).fetchall()
            wrong += got != [(k,)]
        except sqlite3.Error:
            errors += 1
        if i % 6 == 0:
            sk = "py-%s-%d-%d" % (role, os.getpid(), i)
            try:
                conn.execute("INSERT INTO f(PK, SK, item) VALUES('W', ?, "
                             "json_object('v', ?))", (sk, sk))
                with open(written, "a") as fh:
                    fh.write(sk + "\n")
                puts += 1
            except sqlite3.Error:
                errors += 1
    if pid == 0:
        os.write(w, ("%d %d %d" % (wrong, errors, puts)).encode())
        os._exit(0)
    os.close(w)
    child = os.read(r, 100).decode().split()
    os.waitpid(pid, 0)
    cw, ce, cp = (int(x) for x in child) if len(child) == 3 else (-1,) * 3
    TAP.ok(wrong == 0 and errors == 0 and cw == 0 and ce == 0,
           "fork (Python sqlite3): parent and child on one kept-alive "
           "connection get the right items",
           "parent: wrong %d errors %d; child: wrong %d errors %d"
           % (wrong, errors, cw, ce))
    out = subprocess.run(["python3",
                          os.path.join(ROOT, "tests/trust/oracle.py"),
                          "written", table, written],
                         capture_output=True, text=True).stdout
    TAP.ok("written: %d of %d" % (puts + cp, puts + cp) in out,
           "fork (Python sqlite3): every INSERT reported done is written "
           "(boto3)", out)
    conn.close()


def run(table):
    fork_check(table)
    # --- interrupts ---------------------------------------------------
    key = "PK = 'F' AND SK = 'k001'"
    check_interrupt("interrupt: a GetItem whose answer never comes", table,
                    "delay", ["GetItem"],
                    "SELECT item FROM t WHERE " + key)
    check_interrupt("interrupt: a Query in a retry loop of 500s", table,
                    "500", ["Query"], "SELECT count(*) FROM t WHERE PK = 'F'")
    check_interrupt("interrupt: a Query in a retry loop of throttles", table,
                    "throttle", ["Query"],
                    "SELECT count(*) FROM t WHERE PK = 'F'")
    check_interrupt("interrupt: a parallel Scan (segments=4) that hangs",
                    table, "delay", ["Scan"],
                    "SELECT count(*) FROM t", opts=", segments=4")
    check_interrupt("interrupt: a BatchGetItem of 200 keys in 2 threads "
                    "that hangs", table, "delay", ["BatchGetItem"],
                    "SELECT count(*) FROM t WHERE PK = 'F' AND SK IN (%s)"
                    % ",".join("'k%03d'" % i for i in range(200)))
    # writes: what was written is said, never contradicted
    sk = "int-%d" % os.getpid()
    err = check_interrupt(
        "interrupt: an INSERT whose PutItem reached DynamoDB, answer held",
        table, "delay", ["PutItem"],
        "INSERT INTO t(PK, SK, item) VALUES('W', '%s', '{}')" % sk,
        want=["may have been applied"], unwanted=["not applied"])
    time.sleep(0.5)
    TAP.ok(item_exists(table, sk),
           "interrupt: ... and it was applied (boto3), as the error allowed")
    sk2 = sk + "-t"
    err = check_interrupt(
        "interrupt: an INSERT throttled in a retry loop",
        table, "throttle", ["PutItem"],
        "INSERT INTO t(PK, SK, item) VALUES('W', '%s', '{}')" % sk2,
        want=["the write was not applied"], unwanted=["may have been"])
    TAP.ok(not item_exists(table, sk2),
           "interrupt: ... and it was not applied (boto3), as the error said")
    sk3 = sk + "-c"
    control(fault="delay", mode="always", ops=["PutItem"], delay=600)
    conn = connect(table, ", timeout=60, max_retries=10, item_ttl=0")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO t(PK, SK, item) VALUES('W', '%s', '{}')" % sk3)
    err, took = run_interrupted(conn, "COMMIT")
    control(fault="none")
    TAP.ok(err is not None and "interrupted" in err and took < BOUND
           and "may or may not have been applied" in err
           and "nothing written" not in err,
           "interrupt: a COMMIT whose write was sent says it may or may not "
           "be applied (%.1f s)" % took, "error: %r" % err)
    conn.close()

    # the shell's Ctrl-C
    control(fault="delay", mode="always", ops=["Query"], delay=600)
    out, took = shell(table, ", timeout=60, max_retries=10, query_ttl=0",
                      "SELECT count(*) FROM t WHERE PK = 'F';\n"
                      "SELECT 'after';", sigint_after=1.5)
    control(fault="none")
    TAP.ok("interrupted" in out and took < BOUND,
           "interrupt: SIGINT (Ctrl-C) to the sqlite3 shell stops a hung Query "
           "(%.1f s)" % took, out)

    # --- a repeated LastEvaluatedKey ------------------------------------
    for name, opts, sql, op in [
            ("a Query", "", "SELECT count(*) FROM t WHERE PK = 'P'",
             "Query"),
            ("a Scan", ", segments=1", "SELECT count(*) FROM t", "Scan"),
            ("a parallel Scan (segments=2)", ", segments=2",
             "SELECT count(*) FROM t", "Scan")]:
        control(fault="repeatkey", mode="always", ops=[op])
        out, took = shell(table, ", query_ttl=0, max_retries=1" + opts,
                          sql + ";", timeout=60)
        control(fault="none")
        TAP.ok("LastEvaluatedKey repeats" in out and took < 30,
               "LastEvaluatedKey: %s whose answer repeats its start key is an "
               "error, not a loop (%.1f s)" % (name, took), out)

    # a Query's keys must move forward in its sort key order (the rules of
    # client/lek.c): K1 after K2 goes back, caught before the circle is
    for name, opts, sql, op, want in [
            ("a Query", "", "SELECT count(*) FROM t WHERE PK = 'P'",
             "Query", "goes back"),
            ("a parallel Scan (segments=2)", ", segments=2",
             "SELECT count(*) FROM t", "Scan", "go round in a circle")]:
        control(fault="cyclekey", mode="always", ops=[op])
        out, took = shell(table, ", query_ttl=0, max_retries=1" + opts,
                          sql + ";", timeout=60)
        control(fault="none")
        TAP.ok(want in out and took < 30,
               "LastEvaluatedKey: %s whose keys go K1, K2, K1, ... is an "
               "error, not a loop (%.1f s)" % (name, took), out)

    # --- UnprocessedKeys / UnprocessedItems for ever --------------------
    control(fault="unprocessed", mode="always", ops=["BatchGetItem"])
    out, took = shell(table, ", item_ttl=0, max_retries=2",
                      "SELECT count(*) FROM t WHERE PK = 'F' AND SK IN "
                      "('k001', 'k002', 'k003');", timeout=300)
    n = stats()["requests"].get("BatchGetItem", 0)
    control(fault="none")
    TAP.ok("UnprocessedKeys" in out and n == 3,
           "UnprocessedKeys for ever: an error after max_retries=2 (%d "
           "BatchGetItem calls, %.1f s)" % (n, took), out)
    control(fault="unprocessed", mode="always", ops=["BatchWriteItem"])
    rows = ",".join("('W', 'bw-%d-%d', '{}')" % (os.getpid(), i)
                    for i in range(101))
    # one call at a time: the first call's 3 requests, the others unsent
    out, took = shell(table, ", max_retries=2, write_calls=1",
                      "BEGIN;\nINSERT OR REPLACE INTO t(PK, SK, item) VALUES "
                      + rows + ";\nCOMMIT;", timeout=300)
    n = stats()["requests"].get("BatchWriteItem", 0)
    control(fault="none")
    TAP.ok("UnprocessedItems" in out and n == 3,
           "UnprocessedItems for ever: an error after max_retries=2 (%d "
           "BatchWriteItem calls, %.1f s)" % (n, took), out)

    # --- the parallel Scan's queue --------------------------------------
    conn = connect(table, ", segments=2, query_ttl=0")
    conn.create_function("slow", 1, lambda x: time.sleep(0.01) or x)
    before = dict(conn.execute("SELECT name, value FROM dynamodb_stats"))
    rows = conn.execute("SELECT count(slow(SK)) FROM t").fetchone()[0]
    st = dict(conn.execute("SELECT name, value FROM dynamodb_stats"))
    peak = st.get("scan_pages_peak")
    pages = st.get("requests_Scan", 0) - before.get("requests_Scan", 0)
    TAP.ok(peak is not None and 0 < peak <= 4 and pages > 4 and rows > 0,
           "Scan queue: 2 segments, %s pages, a slow consumer: at most %s "
           "pages held at once (bound 2 x segments = 4)" % (pages, peak),
           "stats: %r" % st)
    conn.close()


if __name__ == "__main__":
    sys.exit(main())
