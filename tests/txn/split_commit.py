#!/usr/bin/python3
"""A COMMIT cut into several calls never splits a key move, and says which
writes went when it fails part way (tests/suites/55-split-commit.sh).

A COMMIT of more than 100 writes goes as several TransactWriteItems, each
atomic, not together.  The Delete and the Put of an UPDATE that changes a
key must land in the same one: apart, a failure between the two calls (a
persistent error, kill -9, Ctrl-C) leaves the item nowhere.  The case:
99 INSERTs, then the move, the 101st and 102nd writes, through
tests/faults/proxy.py, which records every request and makes the second
call fail for ever (`after`: 1).  boto3 (tests/txn/check.py,
run with the python3 on PATH) is the oracle.  Debian's /usr/bin/python3
(its sqlite3 module at the default isolation level) and the sqlite3 shell
are the clients.  Needs TransactWriteItems: on a server without it (dynalite)
every test is skipped, saying so.  Prints TAP lines.
"""
import base64
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build/dynamodb"))
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
TABLE = "TxSplit055"
TAP = Tap("split commit: ")
PORT = 0
LOG = ""

# the writes of every case: 99 INSERTs (P/000..P/098), then M/000 moved
INSERTS = ["%03d" % i for i in range(99)]
APPLIED = ("writes 1-99 applied (PK='P', SK='000'; PK='P', SK='001'; "
           "96 more; PK='P', SK='098')")
MOVE = "(PK='M', SK='000'; PK='M', SK='moved')"
# the operations of the second call: a TransactWriteItems, or the PutItem
# of a lone Put (how the move's Put went when it was cut from its Delete)
SECOND = ["TransactWriteItems", "PutItem"]
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


def stats():
    with urllib.request.urlopen("http://127.0.0.1:%d/__stats" % PORT,
                                timeout=10) as r:
        return json.loads(r.read())


def opts(extra=""):
    return ("table=%s, endpoint='http://127.0.0.1:%d', progress=off%s"
            % (TABLE, PORT, extra))


def connect(extra=""):
    conn = sqlite3.connect(":memory:")  # the default isolation level
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    conn.execute("CREATE VIRTUAL TABLE t USING dynamodb(%s)" % opts(extra))
    return conn


def fresh():
    """The table anew: the item M/000 that the COMMIT moves."""
    check("create", TABLE)
    check("fill", TABLE, "M", 1)


def where_is_m():
    """Where boto3 finds the moved item: its keys, as 'old' / 'new'."""
    at = []
    if check("get", TABLE, "M", "000") != "(no item)":
        at.append("old")
    if check("get", TABLE, "M", "moved") != "(no item)":
        at.append("new")
    return at


def n_inserted():
    return len(check("part", TABLE, "P").splitlines())


def commit_python(extra=""):
    """The 99 INSERTs and the move in one `with conn:`; the COMMIT's error
    (None when it went through) and the connection."""
    conn = connect(extra)
    try:
        with conn:
            conn.executemany("INSERT INTO t(PK, SK, item) VALUES ('P', ?, "
                             "'{\"v\": 1}')", [(sk,) for sk in INSERTS])
            conn.execute("UPDATE t SET SK = 'moved' WHERE PK = 'M' "
                         "AND SK = '000'")
    except sqlite3.Error as e:
        return str(e), conn
    return None, conn


def shell_script(extra):
    rows = ", ".join("('P', '%s', '{}')" % sk for sk in INSERTS)
    return (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(%s);\n"
            "BEGIN;\nINSERT INTO t(PK, SK, item) VALUES %s;\n"
            "UPDATE t SET SK = 'moved' WHERE PK = 'M' AND SK = '000';\n"
            "COMMIT;\n" % (EXT, opts(extra), rows))


def shell_stopped(sig, extra):
    """The sqlite3 shell on the COMMIT, sent sig once the second
    TransactWriteItems has failed at least once; its output."""
    p = subprocess.Popen([SQLITE3, ":memory:"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    p.stdin.write(shell_script(extra))
    p.stdin.close()
    p.stdin = None
    deadline = time.monotonic() + 60
    while (sum(stats()["faults"].values()) < 1
           and time.monotonic() < deadline and p.poll() is None):
        time.sleep(0.05)
    if p.poll() is None:
        p.send_signal(sig)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0] + "(killed after 60 s)"
    return out, p.returncode


def logged():
    """The requests the proxy saw since the log was emptied: (operation,
    body as JSON) each."""
    out = []
    with open(LOG) as f:
        for line in f:
            rec = json.loads(line)
            hdrs = dict((k.lower(), v) for k, v in rec["headers"])
            op = hdrs.get("x-amz-target", "").rsplit(".", 1)[-1]
            out.append((op, json.loads(base64.b64decode(rec["body"]))))
    return out


def transactions_logged():
    """The TransactWriteItems among them: one list of (Put|Delete, PK/SK)
    a request."""
    calls = []
    for op, body in logged():
        if op == "TransactWriteItems":
            one = []
            for ti in body["TransactItems"]:
                (kind, spec), = ti.items()
                key = spec.get("Item") or spec.get("Key")
                one.append((kind, key["PK"]["S"] + "/" + key["SK"]["S"]))
            calls.append(one)
    return calls


def server_has_transactions():
    """Does the server behind the proxy take TransactWriteItems?"""
    conn = connect()
    try:
        with conn:
            conn.execute("INSERT INTO t(PK, SK, item) VALUES ('probe', '1', "
                         "'{}'), ('probe', '2', '{}')")
    except sqlite3.Error as e:
        return str(e)
    finally:
        conn.close()
    return None


def run():
    fresh()
    why = server_has_transactions()
    if why is None:
        key_moves()
    else:
        for name in ("the move in one call", "a persistent error",
                     "... where the item is", "... what the cache shows",
                     "an ambiguous error", "kill -9", "SIGINT"):
            TAP.skip(name, "the server has no TransactWriteItems (%s)"
                     % why.splitlines()[0][:120])
    batch_writes()
    chain()


def key_moves():
    """99 INSERTs and a key move (the TransactWriteItems cases)."""
    # the calls, as the proxy saw them
    fresh()
    open(LOG, "w").close()
    err, conn = commit_python()
    conn.close()
    calls = transactions_logged()
    together = [c for c in calls if ("Delete", "M/000") in c]
    TAP.ok(err is None and len(calls) == 2 and len(together) == 1
           and ("Put", "M/moved") in together[0] and where_is_m() == ["new"]
           and n_inserted() == 99,
           "99 INSERTs then a key move: two TransactWriteItems, the move's "
           "Delete and Put in the same one (%s)"
           % " + ".join(str(len(c)) for c in calls),
           "error: %r\ncalls: %r" % (err, [c[-3:] for c in calls]))

    # the second TransactWriteItems refused for ever (throttled: not sent)
    fresh()
    control(fault="throttle", mode="always", ops=SECOND, after=1)
    err, conn = commit_python(", max_retries=2")
    control(fault="none")
    want = (HEAD + APPLIED + "; writes 100-101 not applied " + MOVE
            + ": call 2 of 2 (TransactWriteItems): ")
    TAP.ok(err is not None and err.startswith(want) and "retries" in err,
           "the second TransactWriteItems throttled for ever: the error says "
           "which writes were applied and which were not", "error: %r" % err)
    TAP.ok(where_is_m() == ["old"] and n_inserted() == 99,
           "... and boto3 finds the moved item at its old key, the 99 INSERTs "
           "written", "M at %r, %d inserted" % (where_is_m(), n_inserted()))
    seen = [r[0] for r in conn.execute("SELECT SK FROM t WHERE PK = 'M'")]
    n = conn.execute("SELECT count(*) FROM t WHERE PK = 'P'").fetchone()[0]
    TAP.ok(seen == ["000"] and n == 99,
           "... and the same connection reads what DynamoDB holds (the cache "
           "was told)", "M: %r, P: %d" % (seen, n))
    conn.close()

    # the second one fails for ever with an answer that leaves it unknown
    fresh()
    control(fault="503", mode="always", ops=SECOND, after=1)
    err, conn = commit_python(", max_retries=2")
    conn.close()
    control(fault="none")
    want = (HEAD + APPLIED + "; writes 100-101 may or may not have been "
            "applied (all of them or none) " + MOVE
            + ": call 2 of 2 (TransactWriteItems): ")
    TAP.ok(err is not None and err.startswith(want) and len(where_is_m()) == 1,
           "the second TransactWriteItems 503 for ever: writes 100-101 may or "
           "may not have been applied, and boto3 finds the moved item at "
           "exactly one key (%r)" % where_is_m(), "error: %r" % err)

    # kill -9 of the sqlite3 shell while the second call is retried
    fresh()
    control(fault="throttle", mode="always", ops=SECOND, after=1)
    out, code = shell_stopped(signal.SIGKILL, ", max_retries=100")
    control(fault="none")
    TAP.ok(code == -signal.SIGKILL and where_is_m() == ["old"],
           "kill -9 of the sqlite3 shell during the second TransactWriteItems: "
           "boto3 finds the moved item at its old key (%r)" % where_is_m(),
           "exit %r, output %r" % (code, out))

    # SIGINT (Ctrl-C) to the shell at the same place
    fresh()
    control(fault="throttle", mode="always", ops=SECOND, after=1)
    out, code = shell_stopped(signal.SIGINT, ", max_retries=100")
    control(fault="none")
    want = (HEAD + APPLIED + "; writes 100-101 not applied " + MOVE
            + ": call 2 of 2 (TransactWriteItems): ")
    TAP.ok(want in out and "interrupted" in out
           and where_is_m() == ["old"],
           "SIGINT to the sqlite3 shell during the second TransactWriteItems: "
           "the error says writes 100-101 were not applied; boto3 finds the "
           "item at its old key (%r)" % where_is_m(), out)


def batch_writes():
    """Unconditional writes: BatchWriteItem calls of 25, the third refused
    for ever, one call at a time (write_calls=1; several at a time:
    tests/txn/batch_writes.py)."""
    check("create", TABLE)
    control(fault="throttle", mode="always", ops=["BatchWriteItem"], after=2)
    conn = connect(", max_retries=1, write_calls=1")
    err = None
    try:
        with conn:
            conn.executemany("INSERT OR REPLACE INTO t(PK, SK, item) VALUES "
                             "('R', ?, '{}')",
                             [("%03d" % i,) for i in range(150)])
    except sqlite3.Error as e:
        err = str(e)
    conn.close()
    control(fault="none")
    want = ("dynamodb: COMMIT failed part way (over 100 writes or 4 MB are "
            "not one transaction): writes 1-50 applied (PK='R', SK='000'; "
            "PK='R', SK='001'; 47 more; PK='R', SK='049'); writes 51-150 "
            "not applied (PK='R', SK='050'; PK='R', SK='051'; 97 more; "
            "PK='R', SK='149'): call 3 of 6 (BatchWriteItem): ")
    got = [line.split(" ")[0] for line in check("part", TABLE, "R")
           .splitlines()]
    TAP.ok(err is not None and err.startswith(want)
           and got == ["%03d" % i for i in range(50)],
           "150 REPLACEs, one call at a time, the third BatchWriteItem of 25 "
           "throttled for ever (refused, so not applied): the error names the "
           "50 applied and the 100 not; boto3 finds exactly the first 50",
           "error: %r\nfound: %d" % (err, len(got)))


def chain():
    """151 writes chained by moves onto freed keys: refused, nothing
    sent."""
    check("create", TABLE)
    check("fill", TABLE, "C", 150)
    open(LOG, "w").close()
    conn = connect()
    err = None
    try:
        with conn:
            for i in range(149, -1, -1):
                conn.execute("UPDATE t SET SK = ? WHERE PK = 'C' AND SK = ?",
                             ("%03d" % (i + 1), "%03d" % i))
    except sqlite3.Error as e:
        err = str(e)
    conn.close()
    want = ("dynamodb: COMMIT: nothing written: 151 writes must be applied "
            "together (UPDATEs that move rows onto keys this transaction "
            "freed, chained; the first: PK='C', SK='149'), over DynamoDB's "
            "100 writes or 4 MB for one transaction: commit such moves in "
            "smaller transactions")
    part = check("part", TABLE, "C").splitlines()
    ops = sorted(set(op for op, _ in logged()))
    # reads only: the UPDATEs' GetItems, and a DescribeTable when the one
    # the process keeps (60 s) ran out, as it may on a slow (ASan) run
    TAP.ok(err == want and "GetItem" in ops and
           set(ops) <= {"GetItem", "DescribeTable"} and len(part) == 150
           and part[0].startswith("000 "),
           "150 rows each moved onto the key the one before freed (151 writes "
           "in one group): refused before anything is sent",
           "error: %r\ncalls: %r\nfirst: %r" % (err, ops, part[:1]))


def main():
    global PORT, LOG
    fd, LOG = tempfile.mkstemp(prefix="split_commit.", suffix=".log")
    os.close(fd)
    proxy = subprocess.Popen(
        ["python3", os.path.join(ROOT, "tests/faults/proxy.py"),
         "--upstream", os.environ["AWS_ENDPOINT_URL_DYNAMODB"],
         "--log", LOG], stdout=subprocess.PIPE, text=True)
    try:
        PORT = int(proxy.stdout.readline())
        run()
    finally:
        proxy.kill()
        proxy.wait()
        os.unlink(LOG)
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
