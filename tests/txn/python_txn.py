#!/usr/bin/python3
"""Writes keep their meaning from Python (tests/suites/50-python.sh).

Debian's /usr/bin/python3 loads the extension into its sqlite3 module and
keeps its default isolation level, which wraps every INSERT, UPDATE and
DELETE in a transaction: every Python user's writes go through the
extension's transactions.  boto3 (in the python3 on PATH, run as
tests/txn/check.py) is the oracle.  The retried-write case runs through
tests/faults/proxy.py, which drops a write's first answer after
DynamoDB Local applied it.  Prints TAP lines.
"""
import json
import os
import sqlite3
import subprocess
import sys
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build/dynamodb"))
TABLE = "TxPy050"
TAP = Tap("python: ")


def check(*args):
    """tests/txn/check.py with the python3 that has boto3."""
    return subprocess.run(["python3", os.path.join(ROOT, "tests/txn/check.py")]
                          + [str(a) for a in args], check=True, capture_output=True,
                          text=True).stdout.strip()


def connect(endpoint=None, **kw):
    conn = sqlite3.connect(":memory:", **kw)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    opt = ", endpoint='%s'" % endpoint if endpoint else ""
    conn.execute("CREATE VIRTUAL TABLE t USING dynamodb(table=%s%s)"
                 % (TABLE, opt))
    return conn


def expect(name, got, want):
    TAP.ok(got == want, name, "expected: %r\n     got: %r" % (want, got))


def n_of(conn, sk):
    return conn.execute("SELECT json_extract(item, '$.n') FROM t "
                        "WHERE PK = 'P' AND SK = ?", (sk,)).fetchone()[0]


def transactions():
    conn = connect()  # the default isolation level
    with conn:
        conn.execute("UPDATE t SET item = json_set(item, '$.a', 'x') "
                     "WHERE PK = 'P' AND SK = '000'")
        conn.execute("UPDATE t SET item = json_set(item, '$.b', 'y') "
                     "WHERE PK = 'P' AND SK = '000'")
    expect("two UPDATEs of one item in one `with conn:` both apply",
           json.loads(check("get", TABLE, "P", "000")),
           {"Grp": "P", "Num": 0, "a": "x", "b": "y", "n": 0})

    with conn:
        for _ in range(2):
            conn.execute("UPDATE t SET item = json_set(item, '$.n', "
                         "json_extract(item, '$.n') + 1) "
                         "WHERE PK = 'P' AND SK = '001'")
        inside = n_of(conn, "001")
    expect("n = n + 1 twice adds 2 (and the transaction reads 2)",
           (inside, json.loads(check("get", TABLE, "P", "001"))["n"]), (2, 2))

    with conn:
        conn.execute("INSERT INTO t(PK, SK, item) VALUES ('P', 'new', "
                     "'{\"n\": 5}')")
        cur = conn.execute("UPDATE t SET item = json_set(item, '$.n', 6) "
                           "WHERE PK = 'P' AND SK = 'new'")
        changed = cur.rowcount
    expect("an UPDATE after an INSERT of the same key finds the row",
           (changed, json.loads(check("get", TABLE, "P", "new"))),
           (1, {"n": 6}))

    err = None
    try:
        with conn:
            conn.execute("INSERT INTO t(PK, SK, item) VALUES ('P', 'dup', "
                         "'{\"v\": 1}')")
            try:
                conn.execute("INSERT INTO t(PK, SK, item) VALUES ('P', "
                             "'dup', '{\"v\": 2}')")
            except sqlite3.IntegrityError as e:
                err = str(e)
            conn.execute("UPDATE t SET item = json_set(item, '$.v', 3) "
                         "WHERE PK = 'P' AND SK = 'dup'")
    except sqlite3.Error as e:
        err = "COMMIT: %s" % e
    expect("a second INSERT of a key raises IntegrityError at that "
           "statement; the transaction commits the rest",
           (err, check("get", TABLE, "P", "dup")),
           ("dynamodb: INSERT: an item with key PK='P', SK='dup' already "
            "exists (written earlier in this transaction; INSERT OR REPLACE "
            "overwrites it)", '{"v": 3}'))

    err = None
    try:
        with conn:  # the idempotent load: rows that exist are skipped
            cur = conn.executemany(
                "INSERT OR IGNORE INTO t(PK, SK, item) VALUES ('P', ?, ?)",
                [("000", '{"n": 9}'), ("ign", '{"n": 8}')])
            inserted = cur.rowcount
            inside = n_of(conn, "000")
    except sqlite3.Error as e:
        err = "COMMIT: %s" % e
        inserted = inside = None
    expect("INSERT OR IGNORE of an existing and a new key in one `with "
           "conn:` skips the existing one at the statement and commits",
           (err, inserted, inside, json.loads(check("get", TABLE, "P", "000")),
            check("get", TABLE, "P", "ign")),
           (None, 1, 0, {"Grp": "P", "Num": 0, "a": "x", "b": "y", "n": 0},
            '{"n": 8}'))

    with conn:
        conn.execute("DELETE FROM t WHERE PK = 'P' AND SK = '002'")
        seen = conn.execute("SELECT count(*) FROM t WHERE PK = 'P' "
                            "AND SK = '002'").fetchone()[0]
        conn.rollback()
    expect("a DELETE then a SELECT does not see the row; rollback() keeps it",
           (seen, json.loads(check("get", TABLE, "P", "002"))["n"]), (0, 0))
    conn.close()


def control(port, **cfg):
    req = urllib.request.Request("http://127.0.0.1:%d/__control" % port,
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()


def stats(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/__stats" % port,
                                timeout=10) as r:
        return json.loads(r.read())


def gsi(conn, grp):
    return [r[0] for r in conn.execute(
        "SELECT SK FROM t WHERE Grp = ? ORDER BY Num", (grp,))]


def retried_writes():
    proxy = subprocess.Popen(
        ["python3", os.path.join(ROOT, "tests/faults/proxy.py"),
         "--upstream", os.environ["AWS_ENDPOINT_URL_DYNAMODB"]],
        stdout=subprocess.PIPE, text=True)
    try:
        port = int(proxy.stdout.readline())
        url = "http://127.0.0.1:%d" % port
        check("fill", TABLE, "R", 4)
        for auto in (True, False):
            how = "autocommit" if auto else "default isolation"
            op = "DeleteItem"  # a COMMIT of one write: its own call too
            kw = {"isolation_level": None} if auto else {}
            conn = connect(url, **kw)
            check("fill", TABLE, "R", 4)
            conn.execute("SELECT dynamodb_cache_clear()")
            before = gsi(conn, "R")
            gsi(conn, "R")  # the second one from the cache
            control(port, fault="reset", mode="first", ops=[op])
            with conn:
                conn.execute("DELETE FROM t WHERE PK = 'R' AND SK = '001'")
            faults = stats(port)["faults"].get(op, 0)
            control(port, fault="none")
            after = gsi(conn, "R")
            expect("%s: a DELETE whose first answer was lost (%s retried "
                   "%d time) leaves no cached GSI page showing the item"
                   % (how, op, faults),
                   (before, after, faults),
                   (["000", "001", "002", "003"], ["000", "002", "003"], 1))

            # an UPDATE that moves an item to another GSI partition
            gsi(conn, "R")
            gsi(conn, "S")
            control(port, fault="reset", mode="first",
                    ops=["UpdateItem", "TransactWriteItems"])
            with conn:
                conn.execute("UPDATE t SET Grp = 'S' WHERE PK = 'R' "
                             "AND SK = '002'")
            control(port, fault="none")
            expect("%s: an UPDATE whose first answer was lost leaves no "
                   "cached GSI page showing the item where it was" % how,
                   (gsi(conn, "R"), gsi(conn, "S")), (["000", "003"], ["002"]))
            conn.close()
            check("create", TABLE)
            check("fill", TABLE, "P", 3)

        # the C API: dyn_delete_item
        exe = os.environ.get("API_RETRY", "")
        check("fill", TABLE, "R", 4)
        control(port, fault="reset", mode="first", ops=["DeleteItem"])
        try:
            out = subprocess.run([exe, url, TABLE], capture_output=True,
                                 text=True, timeout=120).stdout
        except OSError as e:
            out = "cannot run %r: %s" % (exe, e)
        faults = stats(port)["faults"].get("DeleteItem", 0)
        control(port, fault="none")
        expect("C API: a dyn_delete_item whose first answer was lost "
               "(retried %d time) leaves no cached GSI page showing the item"
               % faults, (out.split("\n"), faults),
               (["000 001 002 003 ", "000 001 002 003 ", "deleted",
                 "000 002 003 ", ""], 1))
    finally:
        proxy.kill()
        proxy.wait()


def main():
    check("create", TABLE)
    check("fill", TABLE, "P", 3)
    transactions()
    retried_writes()
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
