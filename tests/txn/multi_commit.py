#!/usr/bin/python3
"""A COMMIT that writes through several virtual tables
(tests/suites/58-multi-commit.sh).

Writes of one connection to tables of one endpoint, region and credentials
commit as one TransactWriteItems (all or nothing) when they fit, and
otherwise as the calls of a split COMMIT whose error names, write by write
and with its table, what was applied.  Writes through another endpoint
cannot be in that transaction: when they fail after the others went, the
error says what went.  Debian's /usr/bin/python3 (its sqlite3 module at the
default isolation level, which wraps the DML in BEGIN ... COMMIT) is the
client, tests/faults/proxy.py records the requests and fails the calls it
is told to, boto3 (tests/txn/check.py, the python3 on PATH) is the oracle.
The TransactWriteItems cases skip, saying why, on a server without it.
Prints TAP lines.
"""
import base64
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build/dynamodb"))
TA, TB = "TxMulti057a", "TxMulti057b"
TAP = Tap("multi-table commit: ")
PORT = 0
LOG = ""
HEAD = ("dynamodb: COMMIT failed part way (over 100 writes or 4 MB are not "
        "one transaction): ")


def check(*args):
    """tests/txn/check.py with the python3 that has boto3."""
    return subprocess.run(["python3", os.path.join(ROOT, "tests/txn/check.py")]
                          + [str(a) for a in args], check=True,
                          capture_output=True, text=True).stdout.strip()


def control(**cfg):
    req = urllib.request.Request("http://127.0.0.1:%d/__control" % PORT,
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()


def via_proxy():
    return "endpoint='http://127.0.0.1:%d'" % PORT


def connect(a_endpoint=None, extra=""):
    """a and b over TA and TB, both through the proxy unless a_endpoint
    names another for a."""
    conn = sqlite3.connect(":memory:")  # the default isolation level
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    conn.execute("CREATE VIRTUAL TABLE a USING dynamodb(table=%s, %s, "
                 "progress=off%s)" % (TA, a_endpoint or via_proxy(), extra))
    conn.execute("CREATE VIRTUAL TABLE b USING dynamodb(table=%s, %s, "
                 "progress=off%s)" % (TB, via_proxy(), extra))
    return conn


def fresh():
    check("create", TA)
    check("create", TB)
    check("fill", TB, "P", 2)


def part(table, pk):
    return [line.split(" ")[0]
            for line in check("part", table, pk).splitlines()]


def logged():
    """(operation, body) of each request the proxy saw since the log was
    emptied."""
    out = []
    with open(LOG) as f:
        for line in f:
            rec = json.loads(line)
            hdrs = dict((k.lower(), v) for k, v in rec["headers"])
            op = hdrs.get("x-amz-target", "").rsplit(".", 1)[-1]
            out.append((op, json.loads(base64.b64decode(rec["body"]))))
    return out


def writes_logged():
    """The write calls: (operation, [table/PK/SK, ...]) each."""
    calls = []
    for op, body in logged():
        if op == "TransactWriteItems":
            one = []
            for ti in body["TransactItems"]:
                (_, spec), = ti.items()
                key = spec.get("Item") or spec.get("Key")
                one.append("%s/%s/%s" % (spec["TableName"], key["PK"]["S"],
                                         key["SK"]["S"]))
            calls.append((op, one))
        elif op in ("PutItem", "DeleteItem", "UpdateItem", "BatchWriteItem"):
            calls.append((op, [body.get("TableName", "")]))
    return calls


def commit(conn, statements):
    """The statements in one `with conn:` (BEGIN ... COMMIT); the error, or
    None."""
    try:
        with conn:
            for sql in statements:
                conn.execute(sql)
    except sqlite3.Error as e:
        return str(e)
    return None


def server_has_transactions():
    conn = connect()
    try:
        return commit(conn, ["INSERT INTO a(PK, SK, item) VALUES ('probe', "
                             "'1', '{}'), ('probe', '2', '{}')"])
    finally:
        conn.close()


def atomic_cases():
    # a's new key and b's existing key in one COMMIT: nothing written
    fresh()
    conn = connect()
    err = commit(conn, [
        "INSERT INTO a(PK, SK, item) VALUES ('N', '001', '{\"v\": 1}')",
        "INSERT INTO b(PK, SK, item) VALUES ('P', '000', '{\"v\": 2}')"])
    conn.close()
    want = ("dynamodb: COMMIT: nothing written: the item with key PK='P', "
            "SK='000' in b already exists")
    TAP.ok(err == want and check("get", TA, "N", "001") == "(no item)",
           "INSERT into a (new key) and into b (existing key), one COMMIT of "
           "Python's sqlite3: it fails, nothing written, and boto3 finds no "
           "row in a", "error: %r\na: %s" % (err, check("get", TA, "N", "001")))

    # both tables' writes in one TransactWriteItems
    fresh()
    open(LOG, "w").close()
    conn = connect()
    err = commit(conn, [
        "INSERT INTO a(PK, SK, item) VALUES ('N', '001', '{\"v\": 1}')",
        "DELETE FROM b WHERE PK = 'P' AND SK = '001'",
        "INSERT INTO a(PK, SK, item) VALUES ('N', '002', '{\"v\": 2}')"])
    conn.close()
    calls = writes_logged()
    want = [("TransactWriteItems", ["%s/N/001" % TA, "%s/P/001" % TB,
                                    "%s/N/002" % TA])]
    TAP.ok(err is None and calls == want and part(TA, "N") == ["001", "002"]
           and part(TB, "P") == ["000"],
           "two tables' writes in one COMMIT: one TransactWriteItems, in the "
           "order they were made; boto3 finds them all",
           "error: %r\ncalls: %r" % (err, calls))

    # 120 writes: cut into two TransactWriteItems, the second refused
    fresh()
    control(fault="throttle", mode="always", ops=["TransactWriteItems"],
            after=1)
    conn = connect(extra=", max_retries=1")
    err = commit(conn, ["INSERT INTO a(PK, SK, item) VALUES ('N', '%03d', "
                        "'{}')" % i for i in range(60)]
                 + ["INSERT INTO b(PK, SK, item) VALUES ('Q', '%03d', '{}')"
                    % i for i in range(60)])
    conn.close()
    control(fault="none")
    want = (HEAD + "writes 1-100 applied (PK='N', SK='000' in a; PK='N', "
            "SK='001' in a; 97 more; PK='Q', SK='039' in b); writes 101-120 "
            "not applied (PK='Q', SK='040' in b; PK='Q', SK='041' in b; 17 "
            "more; PK='Q', SK='059' in b): call 2 of 2 (TransactWriteItems): ")
    a_rows, b_rows = part(TA, "N"), part(TB, "Q")
    TAP.ok(err is not None and err.startswith(want)
           and a_rows == ["%03d" % i for i in range(60)]
           and b_rows == ["%03d" % i for i in range(40)],
           "60 INSERTs into a and 60 into b, the second of two "
           "TransactWriteItems throttled for ever: the error names each "
           "write's table and which were applied; boto3 finds exactly those",
           "error: %r\na: %d rows, b: %d rows" % (err, len(a_rows), len(b_rows)))


def other_endpoint_case():
    """a straight to the server, b through the proxy: two places, so two
    calls; b's fails after a's went, and the error says a's went."""
    fresh()
    conn = connect(a_endpoint="endpoint='%s'"
                   % os.environ["AWS_ENDPOINT_URL_DYNAMODB"])
    err = commit(conn, [
        "INSERT INTO a(PK, SK, item) VALUES ('N', '001', '{\"v\": 1}')",
        "INSERT INTO b(PK, SK, item) VALUES ('P', '000', '{\"v\": 2}')"])
    conn.close()
    want = ("dynamodb: COMMIT failed part way: earlier calls applied 1 write "
            "(PK='N', SK='001' in a), which cannot be in one transaction "
            "with the writes through b (another endpoint, region or "
            "credentials); the writes through b: nothing written: the item "
            "with key PK='P', SK='000' already exists")
    TAP.ok(err == want and check("get", TA, "N", "001") != "(no item)",
           "a and b at two endpoints: b's write fails after a's went; the "
           "error says a's write was applied, as boto3 finds",
           "error: %r\na: %s" % (err, check("get", TA, "N", "001")))


def main():
    global PORT, LOG
    fd, LOG = tempfile.mkstemp(prefix="multi_commit.", suffix=".log")
    os.close(fd)
    proxy = subprocess.Popen(
        ["python3", os.path.join(ROOT, "tests/faults/proxy.py"),
         "--upstream", os.environ["AWS_ENDPOINT_URL_DYNAMODB"],
         "--log", LOG], stdout=subprocess.PIPE, text=True)
    try:
        PORT = int(proxy.stdout.readline())
        fresh()
        why = server_has_transactions()
        if why is None:
            atomic_cases()
        else:
            for name in ("a new key and an existing one, one COMMIT",
                         "one TransactWriteItems",
                         "a split COMMIT across tables"):
                TAP.skip(name, "the server has no TransactWriteItems (%s)"
                         % why.splitlines()[0][:120])
        other_endpoint_case()
    finally:
        proxy.kill()
        proxy.wait()
        os.unlink(LOG)
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
