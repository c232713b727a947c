#!/usr/bin/python3
"""Writes at batch speed, and what a failure says (tests/suites/56-batch-writes.sh).

A COMMIT, or a statement outside BEGIN ... COMMIT, whose writes are cut
into several calls sends them several at a time (write_calls, 8 by
default), and when one fails it says what became of every write, exactly:
"writes 1-200 applied (...); writes 201-300 not applied (...); writes
301-1000 applied (...): call 3 of 10 (TransactWriteItems): ...".  These
cases run through tests/faults/proxy.py, which holds answers (so that the
calls in flight at once can be counted: `inflight_max`), fails one call
chosen by a key it carries (`match`: whatever order the calls arrive in),
or never processes the second half of a BatchWriteItem.  Every message is
read back into what it says of each write and compared with what boto3
(tests/txn/check.py, the python3 that has boto3) finds.  The clients:
Debian's /usr/bin/python3 (its sqlite3 module at the default isolation
level: DML inside a transaction, the COMMIT path) and the sqlite3 shell,
also under a terminal (script(1)) for the progress line and the hint
given to 1,000 single-row statements in a row.  The cases that need
TransactWriteItems skip, saying why, on a server without it (dynalite).
Prints TAP lines.
"""
import json
import os
import re
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
TABLE = "TxBatch056"
TAP = Tap("batch writes: ")
PORT = 0
TMP = ""

# a run of writes in a message: "writes 201-300 not applied (" or
# "write 7 applied ("
RUN = re.compile(r"writes? (\d+)(?:-(\d+))? (applied|not applied|may be "
                 r"partly applied \(BatchWriteItem is not atomic\)|may or "
                 r"may not have been applied(?: \((?:all of them or none|"
                 r"each of their \d+ calls all or none)\))?) \(")


def check(*args):
    """tests/txn/check.py with the python3 that has boto3."""
    return subprocess.run(["python3", os.path.join(ROOT, "tests/txn/check.py")]
                          + [str(a) for a in args], check=True,
                          capture_output=True, text=True).stdout.strip()


def present(pk):
    """The sort keys boto3 finds in partition pk."""
    return set(line.split(" ")[0] for line in check("part", TABLE, pk)
               .splitlines())


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


def endpoint(proxied=True):
    return ("http://127.0.0.1:%d" % PORT if proxied
            else os.environ["AWS_ENDPOINT_URL_DYNAMODB"])


def opts(extra="", proxied=True):
    return ("table=%s, endpoint='%s', progress=off%s"
            % (TABLE, endpoint(proxied), extra))


def connect(extra="", proxied=True):
    conn = sqlite3.connect(":memory:")  # the default isolation level
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    conn.execute("CREATE VIRTUAL TABLE t USING dynamodb(%s)"
                 % opts(extra, proxied))
    return conn


def fresh():
    check("create", TABLE)


def commit_inserts(pk, n, extra="", sql="INSERT"):
    """n INSERTs (or REPLACEs) pk/0000.. in one `with conn:` (a COMMIT);
    the error (None when it went through) and the connection."""
    conn = connect(extra)
    try:
        with conn:
            conn.executemany("%s INTO t(PK, SK, item) VALUES (?, ?, "
                             "'{\"v\": 1}')" % sql,
                             [(pk, "%04d" % i) for i in range(n)])
    except sqlite3.Error as e:
        return str(e), conn
    return None, conn


def runs(msg):
    """What msg says of each write: {number: state}, state one of
    'applied', 'not', 'maybe'."""
    said = {}
    for m in RUN.finditer(msg or ""):
        a = int(m.group(1))
        b = int(m.group(2) or a)
        what = m.group(3)
        state = ("applied" if what == "applied" else
                 "not" if what == "not applied" else "maybe")
        for i in range(a, b + 1):
            said[i] = state
    return said


def agrees(msg, pk, n, key_of=lambda i: "%04d" % (i - 1)):
    if os.environ.get("BATCH_DEBUG"):
        sys.stderr.write("message: %s\n" % msg)
    """Does msg say of every write 1..n what boto3 finds (an applied write
    is there, a write not applied is not; one that may have been, either)?
    Returns (ok, detail)."""
    said = runs(msg)
    found = present(pk)
    bad = []
    for i in range(1, n + 1):
        s = said.get(i)
        there = key_of(i) in found
        if s is None or (s == "applied" and not there) or (
                s == "not" and there):
            bad.append("write %d: said %s, boto3 %s" % (
                i, s, "finds it" if there else "does not"))
    return not bad, "\n".join(bad[:10]) + ("\nmessage: %r" % msg)


def has_transactions():
    """Does the server take TransactWriteItems?  None, or why not."""
    fresh()
    conn = connect(proxied=False)
    try:
        with conn:
            conn.execute("INSERT INTO t(PK, SK, item) VALUES ('probe', '1', "
                         "'{}'), ('probe', '2', '{}')")
    except sqlite3.Error as e:
        return str(e).splitlines()[0][:120]
    finally:
        conn.close()
    return None


# --------------------------------------------------------------------------
# the cases

def in_flight():
    """A COMMIT of 1,000 INSERTs: 10 TransactWriteItems, 8 at a time."""
    fresh()
    control(fault="delay", mode="always",
            ops=["TransactWriteItems", "BatchGetItem"], delay=0.4)
    err, conn = commit_inserts("F", 1000)
    conn.close()
    st = stats()
    control(fault="none")
    got = len(present("F"))
    TAP.ok(err is None and st["requests"].get("TransactWriteItems") == 10
           and st["inflight_max"].get("TransactWriteItems") == 8
           and st["inflight_max"].get("BatchGetItem", 0) > 1 and got == 1000,
           "a COMMIT of 1,000 INSERTs from Python: 10 BatchGetItem checks and "
           "10 TransactWriteItems, up to 8 of each in flight at once (%s at "
           "most), boto3 finds the 1,000"
           % st["inflight_max"].get("TransactWriteItems"),
           "error %r, stats %r, found %d" % (err, st, got))

    conn = connect(", write_calls=2")
    control(fault="delay", mode="always", ops=["BatchWriteItem"], delay=0.1)
    try:
        with conn:
            conn.execute("DELETE FROM t WHERE PK = 'F'")
    except sqlite3.Error as e:
        err = str(e)
    conn.close()
    st = stats()
    control(fault="none")
    TAP.ok(st["inflight_max"].get("BatchWriteItem") == 2
           and st["requests"].get("BatchWriteItem") == 40 and not present("F"),
           "write_calls=2: a DELETE of the 1,000 in a COMMIT, 40 BatchWriteItem "
           "of 25, 2 at a time at most", "stats %r" % st)


def failed_call():
    """Call 3 of 10 refused for ever: the others went, the message says
    exactly which writes did."""
    fresh()
    control(fault="throttle", mode="always", ops=["TransactWriteItems"],
            match='"S":"0250"')
    err, conn = commit_inserts("F", 1000, ", max_retries=2")
    control(fault="none")
    ok, detail = agrees(err, "F", 1000)
    said = runs(err)
    TAP.ok(ok and err and "call 3 of 10 (TransactWriteItems)" in err
           and all(said[i] == "not" for i in range(201, 301))
           and all(said[i] == "applied" for i in range(1, 201))
           and all(said[i] == "applied" for i in range(301, 901)),
           "a COMMIT of 1,000 INSERTs whose third TransactWriteItems is "
           "throttled for ever: the calls in flight beside it went; the error "
           "says which writes were applied, boto3 agrees write by write",
           detail)
    seen = conn.execute("SELECT count(*) FROM t WHERE PK = 'F'").fetchone()[0]
    TAP.ok(seen == len(present("F")),
           "... and the same connection reads what DynamoDB holds (%d items: "
           "the cache was told what each call did)" % seen,
           "read %d, boto3 %d" % (seen, len(present("F"))))
    conn.close()


def batch_partial():
    """BatchWriteItem: DynamoDB never processes the second half of the
    third call."""
    fresh()
    # the first request of call 3 (SK 0050..0074) goes whole but with its
    # second half back as UnprocessedItems (split); the resend of that
    # half is then refused for ever (unprocessed)
    control(fault="unprocessed", mode="always", ops=["BatchWriteItem"],
            match='"S":"0070"', after=1, split=True)
    err, conn = commit_inserts("R", 150, ", max_retries=2", sql="REPLACE")
    conn.close()
    control(fault="none")
    ok, detail = agrees(err, "R", 150)
    said = runs(err)
    TAP.ok(ok and err and "call 3 of 6 (BatchWriteItem)" in err
           and all(said[i] == "applied" for i in range(51, 64))
           and all(said[i] == "not" for i in range(64, 76))
           and all(said[i] == "applied" for i in range(1, 51)),
           "150 REPLACEs in BatchWriteItem calls of 25, the third's second half "
           "never processed (UnprocessedItems for ever): writes 51-63 applied, "
           "64-75 not, and boto3 agrees write by write", detail)

    fresh()
    control(fault="reset", mode="always", ops=["BatchWriteItem"],
            match='"S":"0060"')
    err, conn = commit_inserts("R", 150, ", max_retries=1", sql="REPLACE")
    conn.close()
    control(fault="none")
    ok, detail = agrees(err, "R", 150)
    said = runs(err)
    TAP.ok(ok and err and all(said[i] == "maybe" for i in range(51, 76))
           and "writes 51-75 may be partly applied" in err
           and len(present("R")) == 150,
           "... the third's answer lost (the connection reset after DynamoDB "
           "applied it): writes 51-75 may be partly applied, boto3 finds all "
           "150", detail)


def shell(script, timeout=120, env=None):
    """The sqlite3 shell on script; (output, exit code)."""
    p = subprocess.run([SQLITE3, ":memory:"], input=script, text=True,
                       capture_output=True, timeout=timeout, env=env)
    return p.stdout + p.stderr, p.returncode


def statement():
    """A statement outside BEGIN ... COMMIT, in the shell."""
    fresh()
    head = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(%s);\n"
            "CREATE TABLE src(v);\n"
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
            "WHERE i < 249) INSERT INTO src SELECT i FROM n;\n"
            % (EXT, opts(", max_retries=1")))
    control(fault="throttle", mode="always", ops=["TransactWriteItems"],
            match='"S":"0150"')
    out, _ = shell(head + "INSERT INTO t(PK, SK, item) SELECT 'S', "
                   "printf('%04d', v), '{}' FROM src;\nSELECT changes();\n")
    control(fault="none")
    ok, detail = agrees(out, "S", 250)
    TAP.ok(ok and "INSERT failed part way" in out
           and "call 2 of 3 (TransactWriteItems)" in out
           and all(runs(out)[i] == "not" for i in range(101, 201)),
           "INSERT ... SELECT of 250 rows in the shell, its second "
           "TransactWriteItems throttled for ever: the statement fails saying "
           "which writes went, boto3 agrees", detail + "\n" + out)


def interrupted():
    """SIGINT to the shell while its calls are in flight."""
    fresh()
    rows = ", ".join("('I', '%04d', '{}')" % i for i in range(1000))
    script = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(%s);\n"
              "BEGIN;\nINSERT INTO t(PK, SK, item) VALUES %s;\nCOMMIT;\n"
              % (EXT, opts(", max_retries=100"), rows))
    control(fault="delay", mode="always", ops=["TransactWriteItems"],
            delay=5)
    p = subprocess.Popen([SQLITE3, ":memory:"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    p.stdin.write(script)
    p.stdin.close()
    p.stdin = None
    deadline = time.monotonic() + 60
    while (stats()["requests"].get("TransactWriteItems", 0) < 3
           and time.monotonic() < deadline and p.poll() is None):
        time.sleep(0.05)
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0] + "(killed after 60 s)"
    control(fault="none")
    time.sleep(5.5)  # the proxy's held answers are done with
    ok, detail = agrees(out, "I", 1000)
    said = runs(out)
    TAP.ok(ok and "interrupted" in out and said.get(1000) == "not"
           and "COMMIT failed part way" in out,
           "SIGINT to the shell while a COMMIT's calls are in flight: it stops "
           "them and the calls not started, and says what became of each "
           "write; boto3 agrees", detail + "\n" + out[-600:])


def under_terminal(script, env_extra):
    """The sqlite3 shell reading script, its stderr and stdout a terminal
    (script(1)); the output with escapes visible."""
    path = os.path.join(TMP, "tty.sql")
    with open(path, "w") as f:
        f.write(script)
    env = dict(os.environ, **env_extra)
    p = subprocess.run(["script", "-qec", "%s :memory: < %s" % (SQLITE3, path),
                        "/dev/null"], capture_output=True, timeout=300,
                       env=env)
    return p.stdout.decode("utf-8", "replace").replace("\x1b", "^[")


def progress_line():
    """The progress line of a statement cut into calls (not atomic)."""
    fresh()
    head = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
            "endpoint='%s');\n" % (EXT, TABLE, endpoint()))
    control(fault="delay", mode="always", ops=["TransactWriteItems"],
            delay=0.3)
    out = under_terminal(
        head + "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 "
        "FROM n WHERE i < 249) INSERT INTO t(PK, SK) SELECT 'L', "
        "printf('%04d', i) FROM n;\nSELECT 'done';\n",
        {"DYNAMODB_PROGRESS_AFTER": "0"})
    control(fault="none")
    # cleared, then (DYNAMODB_PROGRESS_AFTER=0) the statement's own line
    # of what it cost, then the next result
    TAP.ok("t: INSERT cut into 3 calls, not atomic: " in out
           and re.search(r"\^\[\[K(dynamodb: [^\n]*TransactWriteItems x3[^\n]*\n)?"
                         r"done", out)
           and len(present("L")) == 250,
           "a terminal shows the progress line of an INSERT of 250 rows: cut "
           "into 3 calls, not atomic; cleared before the next result", out)
    out = under_terminal(
        head.replace("');", "', progress=off);")
        + "DELETE FROM t WHERE PK = 'L';\nSELECT 'done';\n",
        {"DYNAMODB_PROGRESS_AFTER": "0"})
    TAP.ok("not atomic" not in out and "done" in out and not present("L"),
           "... and progress=off shows none", out)


def hint():
    """1,000 single-row statements in a row: one hint, on a terminal."""
    fresh()
    head = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
            "endpoint='%s');\n" % (EXT, TABLE, endpoint(False)))

    def singles(pk, a, b):
        return "".join("INSERT INTO t(PK, SK) VALUES ('%s', '%04d');\n"
                       % (pk, i) for i in range(a, b))
    hint_text = "dynamodb: hint: 1000 statements in a row each wrote one row"
    out = under_terminal(head + singles("H", 0, 999) + "SELECT 'at 999';\n"
                         + singles("H", 999, 1000) + "SELECT 'at 1000';\n"
                         + singles("H", 1000, 2100) + "SELECT 'end';\n", {})
    TAP.ok(out.count(hint_text) == 1
           and out.index("at 999") < out.index(hint_text) < out.index("at 1000")
           and "BEGIN ... COMMIT" in out,
           "2,100 single-row INSERTs on a terminal: one hint, at the 1,000th, "
           "pointing to BEGIN ... COMMIT", out[-800:])
    out = under_terminal(head + singles("J", 0, 600)
                         + "INSERT INTO t(PK, SK) VALUES ('J', 'a'), "
                         "('J', 'b');\n" + singles("J", 600, 1200)
                         + "SELECT 'end';\n", {})
    TAP.ok(hint_text not in out and "end" in out,
           "600 single-row INSERTs, one of two rows, 600 more: no hint (not "
           "1,000 in a row)", out[-800:])
    out, _ = shell(head + singles("K", 0, 1000) + "SELECT 'end';\n")
    TAP.ok(hint_text not in out and "end" in out,
           "1,000 single-row INSERTs without a terminal: no hint", out[-800:])


def run():
    why = has_transactions()
    if why is None:
        in_flight()
        failed_call()
    else:
        for name in ("10 TransactWriteItems, 8 in flight", "write_calls=2",
                     "call 3 of 10 throttled", "... the cache was told"):
            TAP.skip(name, "the server has no TransactWriteItems (%s)" % why)
    batch_partial()
    if why is None:
        statement()
        interrupted()
        progress_line()
    else:
        for name in ("a statement's second call throttled", "SIGINT",
                     "the progress line", "progress=off"):
            TAP.skip(name, "the server has no TransactWriteItems (%s)" % why)
    hint()


def main():
    global PORT, TMP
    TMP = tempfile.mkdtemp(prefix="batch_writes.")
    proxy = subprocess.Popen(
        ["python3", os.path.join(ROOT, "tests/faults/proxy.py"),
         "--upstream", os.environ["AWS_ENDPOINT_URL_DYNAMODB"]],
        stdout=subprocess.PIPE, text=True)
    try:
        PORT = int(proxy.stdout.readline())
        run()
    finally:
        proxy.kill()
        proxy.wait()
        subprocess.run(["rm", "-rf", TMP])
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
