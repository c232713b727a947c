#!/usr/bin/env python3
"""max_rcu holds from a statement's first second (suite 20).

A parallel Scan of 8 segments with max_rcu=50 runs in the sqlite3 shell
through tests/faults/proxy.py, which records each answer with the time the
server gave it and the ConsumedCapacity the server reports.  Over every
window of one second the capacity consumed must be at most twice the rate
(100): the bucket holds a second of the rate and gains a second's worth in
a second.  Every item is counted once (the oracle: the table's size, set
up with boto3).  The table has 400 items of about 4 KB (half a unit each
read eventually, 200 units in all, about 25 a segment): without the first
pages sized to the bucket, the 8 segments' first pages take it all at
once.  Then the same Scan read consistently (twice the units).  Then
max_wcu=50 on one INSERT OR REPLACE of 200 items of under 1 KB (a unit
each, 200 in all), which goes as 8 BatchWriteItem calls of 25, several
in flight: each waits for what its items may cost (its text's KB and a
unit an item, at most a full bucket), not for a token.  (Not an INSERT:
its TransactWriteItems calls DynamoDB Local reports at 4 units for 100
items.)

A server that reports no ConsumedCapacity cannot be held to the rate: the
check is skipped, saying so.  Needs AWS_ENDPOINT_URL_DYNAMODB.  Prints TAP
lines.
"""

import json
import os
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build/dynamodb"))
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
TABLE = "RateScan020"
WTABLE = "RateWrite020"
WITEMS = 200
ITEMS = 400
RATE = 50
TAP = Tap("rate: ")


def start_proxy(upstream):
    p = subprocess.Popen([sys.executable,
                          os.path.join(ROOT, "tests/faults/proxy.py"),
                          "--upstream", upstream],
                         stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def control(port, **cfg):
    req = urllib.request.Request("http://127.0.0.1:%d/__control" % port,
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    urllib.request.urlopen(req, timeout=30).read()


def answers(port):
    return json.loads(urllib.request.urlopen(
        "http://127.0.0.1:%d/__capacity" % port, timeout=30).read())


def worst_second(recs):
    """The most units consumed in any window of one second, and when."""
    recs = sorted(recs)
    best, at, j, run = 0.0, 0.0, 0, 0.0
    for i, (t, units) in enumerate(recs):
        # the windows [t, t + 1) starting at each answer
        while j < len(recs) and recs[j][0] < t + 1.0:
            run += recs[j][1]
            j += 1
        if run > best:
            best, at = run, t
        run -= units
    return best, at


def scan(port, opts):
    script = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
              "endpoint='http://127.0.0.1:%d', progress=off, query_ttl=0, "
              "item_ttl=0, segments=8, max_rcu=%d%s);\n"
              "SELECT count(*) FROM t;\n" % (EXT, TABLE, port, RATE, opts))
    t0 = time.monotonic()
    p = subprocess.run([SQLITE3, ":memory:"], input=script.encode(),
                       capture_output=True, timeout=300)
    return (p.stdout + p.stderr).decode("utf-8", "replace").strip(), \
        time.monotonic() - t0


def insert(port):
    script = (".load %s\nCREATE VIRTUAL TABLE w USING dynamodb(table=%s, "
              "endpoint='http://127.0.0.1:%d', progress=off, max_wcu=%d);\n"
              "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
              " WHERE i < %d) INSERT OR REPLACE INTO w(PK, item) SELECT 'P#' || i, "
              "json_object('pad', printf('%%.400c', 'x')) FROM n;\n"
              "SELECT count(*) FROM w;\n" % (EXT, WTABLE, port, RATE, WITEMS))
    t0 = time.monotonic()
    p = subprocess.run([SQLITE3, ":memory:"], input=script.encode(),
                       capture_output=True, timeout=300)
    return (p.stdout + p.stderr).decode("utf-8", "replace").strip(), \
        time.monotonic() - t0


def check(port, name, run, op, want):
    control(port, capacity=True)
    out, took = run(port)
    recs = [a for a in answers(port) if a[1] == op]
    control(port)
    if any(a[2] is None for a in recs) or not recs:
        TAP.skip(name, "the server reports no ConsumedCapacity for %s: the "
                 "rate cannot be checked" % op)
        return
    total = sum(a[2] for a in recs)
    best, at = worst_second([(a[0], a[2]) for a in recs])
    t0 = min(a[0] for a in recs)
    ok = out == str(want) and best <= 2 * RATE
    TAP.ok(ok, "%s: %s items, %.1f units in %d %s requests over %.1f s; the "
           "most in one second %.1f (at %.2f s; at most %d)"
           % (name, out, total, len(recs), op, took, best, at - t0, 2 * RATE),
           "\n".join("%.3f %s %s Limit=%s" % (a[0] - t0, a[1], a[2], a[3])
                     for a in sorted(recs)[:40]))


def main():
    upstream = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    client = fixtures.connect()
    fixtures.create_table(client, TABLE, "PK")
    pad = "x" * 4000
    fixtures.put_items(client, TABLE, [{"PK": "P#%04d" % i, "pad": pad}
                                       for i in range(ITEMS)])
    proxy, port = start_proxy(upstream)
    try:
        check(port, "max_rcu=%d, a parallel Scan of 8 segments read "
              "eventually" % RATE, lambda p: scan(p, ""), "Scan", ITEMS)
        check(port, "max_rcu=%d, a parallel Scan of 8 segments read "
              "consistently" % RATE,
              lambda p: scan(p, ", consistent_read=1"), "Scan", ITEMS)
        fixtures.create_table(client, WTABLE, "PK")
        check(port, "max_wcu=%d, an INSERT OR REPLACE of %d items of 400 "
              "bytes" % (RATE, WITEMS), insert, "BatchWriteItem", WITEMS)
    finally:
        proxy.kill()
        proxy.wait()
        fixtures.drop_table(client, TABLE)
        fixtures.drop_table(client, WTABLE)
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
