#!/usr/bin/python3
"""sqlite3's interrupt() stops a slow credential_process (suite 21).

Run by tests/faults/creds_check.py with Debian's /usr/bin/python3 (its
sqlite3 loads extensions), as a user's report runs:

  argv: EXT ENDPOINT TABLE DIR

DIR/config has [profile slow] whose credential_process (DIR/slow.sh)
answers at once, with credentials good for DIR/ttl seconds, unless
DIR/slow exists: then it writes its PID and its sleep's PID to DIR/pids
and sleeps 40 s (longer than the extension's 30 s limit).  Two phases,
each a statement that interrupt() stops from another thread 1 s in:

  A. the first use of a table, which makes the client (the process runs
     to resolve the credentials);
  B. a refresh: credentials 2 s from expiry, used once, then expired;
  C. CREATE VIRTUAL TABLE, whose xCreate makes the client to describe
     the table.

Each must fail with "interrupted" (not the 30 s limit), and the process
and its sleep must be gone (killed and reaped) when the statement
returns; C within 1 s of the interrupt.  Then

  D. CREATE VIRTUAL TABLE against an endpoint that never answers its
     DescribeTable (a listener of this script that accepts and holds the
     connection): "interrupted" within 1 s of the interrupt, not the
     request's timeout.

Prints TAP lines (numbered from 1; the caller renumbers).
"""

import os
import socket
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "harness"))
from tap import Tap  # noqa: E402

EXT, ENDPOINT, TABLE, DIR = sys.argv[1:5]
DB = os.path.join(DIR, "interrupt.db")
QUERY = "SELECT count(*) FROM t WHERE PK = 'CUSTOMER#alice'"
TAP = Tap("creds: ")


def connect():
    conn = sqlite3.connect(DB)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    return conn


def gone(pid):
    """Is the process pid gone (or a zombie of another parent)?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] in ("Z", "X")
    except OSError:
        return True


def interrupted_run(conn, sql=QUERY):
    """sql on conn, interrupted 1 s in: (error text, seconds)."""
    timer = threading.Timer(1.0, conn.interrupt)
    t0 = time.monotonic()
    timer.start()
    try:
        conn.execute(sql).fetchall()
        err = "no error"
    except sqlite3.Error as e:
        err = str(e)
    timer.cancel()
    return err, time.monotonic() - t0


def check(name, err, secs, within=None):
    pids = []
    try:
        with open(os.path.join(DIR, "pids")) as f:
            pids = [int(x) for x in f.read().split()]
    except OSError:
        pass
    deadline = time.monotonic() + 5
    while pids and not all(gone(p) for p in pids) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if not gone(p)]
    ok = ("interrupted" in err and len(pids) == 2 and not left
          and (within is None or secs <= within))
    TAP.ok(ok, "interrupt() stops a slow credential_process (%s): %s after "
           "%.1f s%s, process and its child killed"
           % (name, err, secs,
              "" if within is None else " (at most %.1f)" % within),
           "error %r, pids %r, still running %r" % (err, pids, left))
    for p in left:
        try:
            os.kill(p, 9)
        except OSError:
            pass


def set_slow(on):
    path = os.path.join(DIR, "slow")
    if on:
        open(path, "w").close()
    elif os.path.exists(path):
        os.unlink(path)
    if os.path.exists(os.path.join(DIR, "pids")):
        os.unlink(os.path.join(DIR, "pids"))


def set_ttl(secs):
    with open(os.path.join(DIR, "ttl"), "w") as f:
        f.write("%d\n" % secs)


def main():
    set_slow(False)
    set_ttl(3600)
    conn = connect()
    conn.execute("CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
                 "endpoint='%s', profile=slow, item_ttl=0, query_ttl=0)"
                 % (TABLE, ENDPOINT))
    conn.close()
    # A: the client is made at the first use of the table
    set_slow(True)
    conn = connect()
    err, secs = interrupted_run(conn)
    conn.close()
    check("making the client", err, secs)
    # B: a refresh of expired credentials
    set_slow(False)
    set_ttl(2)
    conn = connect()
    conn.execute(QUERY).fetchall()
    time.sleep(3)
    set_slow(True)
    err, secs = interrupted_run(conn)
    conn.close()
    check("refreshing expired credentials", err, secs)
    # C: CREATE VIRTUAL TABLE makes the client to describe the table
    set_ttl(3600)
    set_slow(True)
    conn = connect()
    err, secs = interrupted_run(
        conn, "CREATE VIRTUAL TABLE c USING dynamodb(table=%s, endpoint='%s',"
        " profile=slow)" % (TABLE, ENDPOINT))
    conn.close()
    check("CREATE VIRTUAL TABLE", err, secs, within=2.0)
    # D: CREATE VIRTUAL TABLE whose DescribeTable gets no answer
    set_slow(False)
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(8)
    conn = connect()
    err, secs = interrupted_run(
        conn, "CREATE VIRTUAL TABLE d USING dynamodb(table=%s, "
        "endpoint='http://127.0.0.1:%d', profile=slow, timeout=8, max_retries=0)"
        % (TABLE, hung.getsockname()[1]))
    conn.close()
    hung.close()
    ok = "interrupted" in err and secs <= 2.0
    TAP.ok(ok, "interrupt() stops CREATE VIRTUAL TABLE's DescribeTable that "
           "gets no answer: %s after %.1f s (at most 2.0)" % (err, secs))
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
