#!/usr/bin/env python3
"""Fault-injection suite: every fault x every DynamoDB operation the
extension makes, through tests/faults/proxy.py, against DynamoDB Local.

For each operation (a SQL statement in the sqlite3 shell that makes that
call) and each fault:

  transient   the proxy injects the fault on the first try of every request
              of that operation: the statement must print exactly what a
              clean run printed, leave DynamoDB in exactly the state a clean
              run left (nothing written twice, nothing lost), and count its
              retries (and throttles) in dynamodb_stats;
  persistent  the proxy injects it on every try: the statement must end
              with a one-line error naming the fault, within a bound
              ((max_retries + 1) * timeout + the backoff caps + slack).

Prints TAP lines, then the fault x operation table.  Needs
AWS_ENDPOINT_URL_DYNAMODB (run-all.sh exports it); SQLITE3, DDB_EXT and
SQLITE3_PRELOAD as tests/harness/run_sql.py reads them.  FAULTS_ONLY=op1,op2 and
FAULTS_KINDS=k1,k2 narrow the matrix (for debugging).
"""

import concurrent.futures
import json
import os
import queue
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

FAULTS = ["throttle", "500", "503", "reset", "truncate", "badcrc", "delay"]
FAULT_TITLE = {"throttle": "throttle", "500": "500", "503": "503",
               "reset": "reset", "truncate": "truncated",
               "badcrc": "bad crc32", "delay": "delay"}
# What the persistent error must say, per fault.
FAULT_WORDS = {
    "throttle": ("ProvisionedThroughputExceededException",
                 "ThrottlingException", "RequestLimitExceeded"),
    "500": ("InternalServerError",),
    "503": ("ServiceUnavailableException",),
    "reset": ("Connection reset", "Recv failure", "Send failure",
              "Server returned nothing", "reset by peer"),
    "truncate": ("partial file", "Transferred a partial"),
    "badcrc": ("x-amz-crc32",),
    "delay": ("Timeout was reached", "timed out"),
}
# the timeout= option of every table in this suite: 2 s, as DynamoDB Local
# on a loaded 2-CPU machine can take over 1 s for a request (a timeout
# there is a retry the suite did not inject)
TIMEOUT = 2.0
CLEAN_TIMEOUT = 10.0  # the clean runs': a clean run must not retry at all
DELAY = 3.0         # the proxy's delay: beyond TIMEOUT
RETRIES_T = 3       # max_retries for transient runs
RETRIES_P = 2       # max_retries for persistent runs
# backoff caps in seconds for RETRIES_P retries (throttling: 0.5, 1.0)
BACKOFF_P = 0.5 + 1.0
SLACK = 6.0         # sqlite3 start, DescribeTable, the other requests

PREFIX = "S#"


def bound():
    """Seconds a persistent fault may take before the statement fails."""
    return (RETRIES_P + 1) * max(TIMEOUT, DELAY) + BACKOFF_P + SLACK


# --------------------------------------------------------------------------
# The operations: setup (straight to DynamoDB), SQL, what to compare

class Op:
    def __init__(self, name, table, sql, writes=False, opts="",
                 check_calls=None):
        self.name = name            # DynamoDB operation the faults hit
        self.table = table          # DynamoDB table (writes: name prefix)
        self.sql = sql
        self.writes = writes        # compare the table's state too
        self.opts = opts            # extra CREATE VIRTUAL TABLE options
        self.check_calls = check_calls  # fn(log rows) -> error or None


def big_items():
    # ~2.6 MB in one partition: a Query and a Scan take 3 pages (1 MB each)
    pad = "x" * 9000
    return [{"PK": "P#big", "SK": "%s%04d" % (PREFIX, i), "n": i, "pad": pad}
            for i in range(290)]


def small_items():
    return [{"PK": "P#small", "SK": "%s%04d" % (PREFIX, i), "v": i * 7}
            for i in range(40)]


def write_setup(client, table):
    """Reset the write table to its known state."""
    dels = [{"DeleteRequest": {"Key": {"PK": it["PK"], "SK": it["SK"]}}}
            for it in fixtures.scan_items(client, table)]
    for i in range(0, len(dels), 25):
        pending = {table: dels[i:i + 25]}
        while pending:
            pending = client.batch_write_item(
                RequestItems=pending).get("UnprocessedItems")
    fixtures.put_items(client, table, [
        {"PK": "P#u", "SK": "S#1", "v": 1},
        {"PK": "P#d", "SK": "S#1", "v": 1},
        {"PK": "P#t", "SK": "S#1", "v": 1},
        {"PK": "P#t", "SK": "S#2", "v": 2},
    ])


def pages_at_least(op, n):
    def check(rows):
        k = sum(1 for r in rows if r["operation"] == op)
        return None if k >= n else "%s: %d requests, want >= %d" % (op, k, n)
    return check


def has_unprocessed(op):
    def check(rows):
        k = sum(1 for r in rows if r["operation"] == op)
        return None if k >= 2 else \
            "%s: %d requests, want a resend of unprocessed ones" % (op, k)
    return check


def operations(rt, wt):
    keys = ", ".join("'%s%04d'" % (PREFIX, i) for i in range(0, 40, 2))
    return [
        Op("GetItem", rt,
           "SELECT PK, SK, json_extract(item, '$.v') FROM t "
           "WHERE PK = 'P#small' AND SK = 'S#0003';"),
        Op("Query", rt,
           "SELECT count(*), sum(json_extract(item, '$.n')), "
           "group_concat(SK) FROM t WHERE PK = 'P#big';",
           check_calls=pages_at_least("Query", 3)),
        Op("Scan", rt,
           "SELECT count(*), sum(json_extract(item, '$.n')), "
           "sum(json_extract(item, '$.v')) FROM t "
           "WHERE json_extract(item, '$.pad') IS NOT NULL "
           "OR json_extract(item, '$.v') IS NOT NULL;",
           opts=", segments=1", check_calls=pages_at_least("Scan", 3)),
        Op("BatchGetItem", rt,
           "SELECT PK, SK, json_extract(item, '$.v') FROM t "
           "WHERE PK = 'P#small' AND SK IN (%s) ORDER BY SK;" % keys,
           check_calls=has_unprocessed("BatchGetItem")),
        Op("PutItem", wt,
           "INSERT INTO t(PK, SK, item) VALUES "
           "('P#i', 'S#1', '{\"v\":\"new\",\"n\":1.50}');\n"
           "SELECT changes();",
           writes=True),
        Op("UpdateItem", wt,
           "UPDATE t SET item = json_set(item, '$.v', 2, '$.w', 'x') "
           "WHERE PK = 'P#u' AND SK = 'S#1';\nSELECT changes();",
           writes=True),
        Op("DeleteItem", wt,
           "DELETE FROM t WHERE PK = 'P#d' AND SK = 'S#1';\n"
           "SELECT changes();",
           writes=True),
        Op("BatchWriteItem", wt,
           "BEGIN;\n"
           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
           "WHERE i < 101) INSERT OR REPLACE INTO t(PK, SK, item) "
           "SELECT 'P#b', printf('S#%04d', i), json_object('i', i) FROM n;\n"
           "COMMIT;\nSELECT count(*) FROM t WHERE PK = 'P#b';",
           writes=True, check_calls=has_unprocessed("BatchWriteItem")),
        Op("TransactWriteItems", wt,
           "BEGIN;\n"
           "INSERT INTO t(PK, SK, item) VALUES ('P#t', 'S#3', '{\"v\":3}');\n"
           "INSERT INTO t(PK, SK, item) VALUES ('P#t', 'S#4', '{\"v\":4}');\n"
           "UPDATE t SET item = json_set(item, '$.v', 20) "
           "WHERE PK = 'P#t' AND SK = 'S#2';\n"
           "DELETE FROM t WHERE PK = 'P#t' AND SK = 'S#1';\n"
           "COMMIT;\nSELECT SK, json_extract(item, '$.v') FROM t "
           "WHERE PK = 'P#t';",
           writes=True),
    ]


# --------------------------------------------------------------------------
# Running one statement through the proxy

STATS_MARK = "--stats--"


def run_sql(op, table, port, retries, ext, timeout=TIMEOUT):
    """Run op's SQL on DynamoDB table `table` in a fresh sqlite3 through the
    proxy on port, with the table's timeout= option `timeout` seconds.
    Returns (output before the stats, stats dict, log rows, seconds)."""
    script = """.bail off
.headers off
.mode list
.load {ext}
CREATE VIRTUAL TABLE t USING dynamodb(table={table}, endpoint='http://127.0.0.1:{port}', timeout={timeout}, max_retries={retries}, item_ttl=0, query_ttl=0{opts});
{sql}
SELECT '{mark}';
SELECT name || '=' || value FROM dynamodb_stats WHERE name IN ('retries', 'throttles', 'requests');
SELECT '{mark}';
.mode json
SELECT operation, http_status, retries FROM dynamodb_log;
""".format(ext=ext, table=table, port=port, timeout=timeout,
           retries=retries, opts=op.opts, sql=op.sql, mark=STATS_MARK)
    env = dict(os.environ)
    preload.sqlite3_env(env)
    t0 = time.monotonic()
    p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                       input=script, capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=300)
    secs = time.monotonic() - t0
    out = p.stdout + p.stderr
    parts = p.stdout.split(STATS_MARK + "\n")
    stats, rows = {}, []
    if len(parts) >= 3:
        for line in parts[1].splitlines():
            k, _, v = line.partition("=")
            stats[k] = float(v) if v else 0
        try:
            rows = json.loads(parts[2] or "[]")
        except ValueError:
            rows = []
        out = parts[0] + p.stderr
    if p.returncode < 0:
        out += "\n*** sqlite3 died with signal %d" % -p.returncode
    # error lines: "Parse error near line N:" / "Runtime error near line N:"
    out = "\n".join(normalize(l) for l in out.splitlines())
    return out, stats, rows, secs


def normalize(line):
    for kind in ("Runtime error", "Parse error"):
        if line.startswith(kind + " near line "):
            return kind + ":" + line.split(":", 1)[1]
    return line


def control(port, **cfg):
    req = urllib.request.Request("http://127.0.0.1:%d/__control" % port,
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()


def state(client, table):
    return "\n".join(fixtures.dump_item(it)
                     for it in fixtures.sort_by_key(
                         client, table, fixtures.scan_items(client, table)))


# --------------------------------------------------------------------------
# One operation: clean run, then each fault transient and persistent

class Worker:
    """One thread's proxy, and its own copy of each write table."""

    def __init__(self, idx, port):
        self.idx = idx
        self.port = port
        self.client = fixtures.connect()
        self.tables = set()

    def table(self, op):
        """The DynamoDB table op runs on for this worker (reset for writes)."""
        if not op.writes:
            return op.table
        name = "%sW%d" % (op.table, self.idx)
        if name not in self.tables:
            fixtures.drop_table(self.client, name)
            fixtures.create_table(self.client, name, "PK", "SK")
            self.tables.add(name)
        write_setup(self.client, name)
        return name


def run_clean(op, w, ext):
    """The clean run of op: (tap line, (output, state) or None)."""
    table = w.table(op)
    control(w.port, fault="none", split=True)
    out, st, rows, _ = run_sql(op, table, w.port, RETRIES_T, ext,
                               CLEAN_TIMEOUT)
    st_text = state(w.client, table) if op.writes else None
    diag = []
    if "error" in out.lower() or "***" in out:
        diag.append("clean run failed:\n" + out)
    if st.get("retries", -1) != 0:
        diag.append("clean run: retries = %s, want 0" % st.get("retries"))
    if op.check_calls:
        e = op.check_calls(rows)
        if e:
            diag.append("clean run: " + e)
    line = ("%s: clean run" % op.name, not diag, "\n".join(diag))
    return line, (None if diag else (out, st_text))


def run_fault(op, fault, clean, w, ext):
    """op under fault, transient then persistent: two tap lines and the
    table cell."""
    tap = []
    clean_out, clean_state = clean
    # transient: first try of every request
    table = w.table(op)
    control(w.port, fault=fault, mode="first", ops=[op.name], delay=DELAY,
            split=True)
    out, st, rows, secs = run_sql(op, table, w.port, RETRIES_T, ext)
    diag = []
    if out != clean_out:
        diag.append("output differs from the clean run:\n--- clean\n%s\n"
                    "--- with %s\n%s" % (clean_out, fault, out))
    if op.writes:
        s = state(w.client, table)
        if s != clean_state:
            diag.append("DynamoDB state differs from the clean run:\n"
                        "--- clean\n%s\n--- with %s\n%s"
                        % (clean_state, fault, s))
    if st.get("retries", 0) < 1:
        diag.append("dynamodb_stats retries = %s, want >= 1"
                    % st.get("retries"))
    if fault == "throttle" and st.get("throttles", 0) < 1:
        diag.append("dynamodb_stats throttles = %s, want >= 1"
                    % st.get("throttles"))
    t_ok = not diag
    tap.append(("%s x %s, transient: same answer and state as a clean "
                "run (%.1fs)" % (op.name, fault, secs), t_ok,
                "\n".join(diag)))

    # persistent: every try
    table = w.table(op)
    control(w.port, fault=fault, mode="always", ops=[op.name], delay=DELAY,
            split=True)
    out, st, rows, secs = run_sql(op, table, w.port, RETRIES_P, ext)
    errs = [l for l in out.splitlines() if l.startswith("Runtime error")]
    diag = []
    if not errs:
        diag.append("no error:\n" + out)
    elif not any(x in errs[0] for x in FAULT_WORDS[fault]):
        diag.append("the error does not name the fault: " + errs[0])
    elif "dynamodb: " not in errs[0]:
        diag.append("not the extension's error: " + errs[0])
    if secs > bound():
        diag.append("took %.1fs, bound %.1fs" % (secs, bound()))
    if "***" in out:
        diag.append(out)
    p_ok = not diag
    tap.append(("%s x %s, persistent: error within %.0fs (%.1fs)%s"
                % (op.name, fault, bound(), secs,
                   (": " + errs[0][:160]) if errs and p_ok else ""),
                p_ok, "\n".join(diag)))
    control(w.port, fault="none")
    return tap, (t_ok, p_ok, secs)


def run_all(ops, kinds, workers, ext):
    """Every run, on a pool of workers; returns {op: [tap lines]} and the
    cells."""
    free = queue.Queue()
    for w in workers:
        free.put(w)

    def with_worker(fn, *args):
        w = free.get()
        try:
            return fn(*args, w, ext)
        finally:
            free.put(w)

    taps, cells, cleans = {o.name: [] for o in ops}, {}, {}
    with concurrent.futures.ThreadPoolExecutor(len(workers)) as ex:
        futs = {ex.submit(with_worker, run_clean, o): o for o in ops}
        for f, o in futs.items():
            line, clean = f.result()
            taps[o.name].append(line)
            cleans[o.name] = clean
        # the slowest first, so that the others run beside them
        units = [(o, k) for o in ops for k in kinds if cleans[o.name]]
        units.sort(key=lambda u: u[0].name not in ("BatchWriteItem",
                                                   "TransactWriteItems"))
        futs = {ex.submit(with_worker, run_fault, o, k, cleans[o.name]): (o, k)
                for o, k in units}
        done = {}
        for f in concurrent.futures.as_completed(futs):
            done[futs[f]] = f.result()
    for o, k in [(o, k) for o in ops for k in kinds]:
        if (o, k) in done:
            tap, cell = done[(o, k)]
            taps[o.name].extend(tap)
            cells[(o.name, k)] = cell
    return taps, cells


def start_proxy(upstream):
    p = subprocess.Popen([sys.executable,
                          os.path.join(ROOT, "tests/faults/proxy.py"),
                          "--upstream", upstream],
                         stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline())
    return p, port


def table_text(ops, kinds, cells):
    w0 = max([len("operation")] + [len(o.name) for o in ops])
    cols = [FAULT_TITLE[k] for k in kinds]
    ws = [max(len(c), 9) for c in cols]
    head = "operation".ljust(w0) + " | " + " | ".join(
        c.ljust(w) for c, w in zip(cols, ws))
    lines = [head, "-" * len(head)]
    for o in ops:
        row = []
        for k, w in zip(kinds, ws):
            c = cells.get((o.name, k))
            if c is None:
                txt = "-"
            else:
                txt = ("ok" if c[0] else "FAIL") + "/" + \
                      ("err" if c[1] else "FAIL")
            row.append(txt.ljust(w))
        lines.append(o.name.ljust(w0) + " | " + " | ".join(row))
    return lines


def main():
    upstream = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not upstream:
        print("1..0 # SKIP AWS_ENDPOINT_URL_DYNAMODB not set")
        return 0
    ext = os.environ.get("DDB_EXT", "build/dynamodb")
    # the defaults of tests/harness/lib.sh, for a run by hand
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    os.environ.setdefault("AWS_REGION", "us-east-1")
    os.environ.pop("AWS_PROFILE", None)
    client = fixtures.connect()
    rt, wt = "Flt20Read", "Flt20Write"
    fixtures.drop_table(client, rt)
    fixtures.create_table(client, rt, "PK", "SK")
    fixtures.put_items(client, rt, big_items() + small_items())
    ops = operations(rt, wt)
    only = [x for x in os.environ.get("FAULTS_ONLY", "").split(",") if x]
    if only:
        ops = [o for o in ops if o.name in only]
    kinds = [x for x in os.environ.get("FAULTS_KINDS", "").split(",") if x] \
        or FAULTS

    procs, workers = [], []
    try:
        for i in range(int(os.environ.get("FAULTS_JOBS", "6"))):
            p, port = start_proxy(upstream)
            procs.append(p)
            workers.append(Worker(i, port))
        taps, cells = run_all(ops, kinds, workers, ext)
    finally:
        for p in procs:
            p.kill()
            p.wait()

    t = Tap("faults: ")
    for o in ops:
        for name, ok, diag in taps[o.name]:
            t.ok(ok, name, diag)
    print("# fault x operation (transient: the fault on the first try of "
          "every request;")
    print("# ok = same answer and DynamoDB state as a clean run. persistent: "
          "on every try;")
    print("# err = a one-line error naming the fault within %.0fs; "
          "timeout=%g s, max_retries=%d/%d)"
          % (bound(), TIMEOUT, RETRIES_T, RETRIES_P))
    for line in table_text(ops, kinds, cells):
        print("#   " + line)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
