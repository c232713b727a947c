#!/usr/bin/env python3
"""One DynamoDB Stream reader per fleet, end to end: suite 63's second
driver.

    fleet_streams.py

Environment: AWS_ENDPOINT_URL_DYNAMODB (DynamoDB Local: it has streams),
the test credentials, REDIS_URL (a redis-server of tests/harness/redis.sh),
DDB_EXT (the extension, default build/dynamodb).

Three worker processes (Debian's /usr/bin/python3 with its sqlite3 module,
the extension loaded) open the same table with coherence=streams and the
shared tier, and read one item over and over from their caches.  Each
worker counts its own GetRecords in dynamodb_log.  boto3 writes the item
from outside.

  * one reader: over 4 s, one worker sends GetRecords, the others none
  * an outside write shows in every worker's cached read within 10 s
    (each read answered by the cache: the worker's GetItem count stays)
  * kill -9 of the leader: another sends GetRecords within 10 s, and an
    outside write made during the takeover shows in both workers left
  * the control: a worker without coherence=streams keeps the old value

Prints TAP lines ("ok N - fleet: ..."), numbered from 1.
"""
import json
import os
import signal
import subprocess
import sys
import time

import boto3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build", "dynamodb"))
URL = os.environ["REDIS_URL"]
TABLE = "Fleet063"
PY = "/usr/bin/python3"

TAP = Tap("fleet: ")


def py_env():
    """PY's environment: under SANITIZE=1 the ASan runtime first (suite 60)."""
    e = dict(os.environ)
    if os.environ.get("SANITIZE") == "1":
        asan = subprocess.run([os.environ.get("CC", "cc"), "-print-file-name=libasan.so"],
                              capture_output=True, text=True).stdout.strip()
        e["LD_PRELOAD"] = " ".join(x for x in (asan, e.get("LD_PRELOAD")) if x)
        e["ASAN_OPTIONS"] = "detect_leaks=0:handle_segv=0"
    return e


# A worker: one command a line on stdin, one JSON answer a line.
#   get K          item K's v, read through the cache, and the GetItem
#                  ("gets") and Redis hits ("shared") that took
#   wait K V S     read K every 50 ms until v is V (S seconds at most):
#                  {"v", "s": the seconds it took, "gets": GetItem sent}
#   records        the GetRecords this process sent (dynamodb_log)
#   state          its reader's state (dynamodb_stats' stream.T.state)
WORKER = r"""
import json, sqlite3, sys, time
ext, opts, table = sys.argv[1], sys.argv[2], sys.argv[3]
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(ext)
db.execute("CREATE VIRTUAL TABLE temp.t USING dynamodb(table=%s, item_ttl=300%s)"
           % (table, opts))
def get(k):
    r = db.execute("SELECT json_extract(item, '$.v') FROM t WHERE PK=?", (k,)).fetchall()
    return r[0][0] if r else None
def stat(name):
    r = db.execute("SELECT value FROM dynamodb_stats WHERE name=?", (name,)).fetchall()
    return r[0][0] if r else 0
def records():
    return db.execute("SELECT count(*) FROM dynamodb_log WHERE operation='GetRecords'"
                      ).fetchall()[0][0]
print(json.dumps({"ready": 1})); sys.stdout.flush()
for line in sys.stdin:
    a = line.split()
    if a[0] == "get":
        g0, h0 = stat("requests_GetItem"), stat("shared_hits")
        out = {"v": get(a[1])}
        out["gets"] = stat("requests_GetItem") - g0
        out["shared"] = stat("shared_hits") - h0
    elif a[0] == "wait":
        t0, g0 = time.time(), stat("requests_GetItem")
        v = get(a[1])
        while v != a[2] and time.time() - t0 < float(a[3]):
            time.sleep(0.05)
            v = get(a[1])
        out = {"v": v, "s": time.time() - t0, "gets": stat("requests_GetItem") - g0}
    elif a[0] == "records":
        out = {"n": records()}
    elif a[0] == "fleet":
        out = {"log": [r[0] for r in db.execute(
            "SELECT operation FROM dynamodb_log WHERE operation LIKE 'fleet%' OR "
            "operation IN ('GetShardIterator', 'DescribeStream')").fetchall()],
               "stats": db.execute("SELECT name, value FROM dynamodb_stats "
                                   "WHERE name LIKE 'stream.%'").fetchall()}
    elif a[0] == "state":
        r = db.execute("SELECT value FROM dynamodb_stats WHERE name LIKE 'stream.%.state'"
                       ).fetchall()
        out = {"state": r[0][0] if r else None}
    print(json.dumps(out)); sys.stdout.flush()
"""


class Worker:
    def __init__(self, opts):
        self.p = subprocess.Popen([PY, "-c", WORKER, EXT, opts, TABLE],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=py_env())
        self.ready = self.answer()

    def answer(self):
        line = self.p.stdout.readline()
        if not line:
            return {"error": self.p.stderr.read()[-2000:]}
        return json.loads(line)

    def ask(self, cmd):
        try:
            self.p.stdin.write(cmd + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            return {"error": "the worker is gone"}
        return self.answer()

    def stop(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def ddb():
    return boto3.client("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL_DYNAMODB"],
                        region_name="us-east-1")


def setup(c):
    try:
        c.delete_table(TableName=TABLE)
        c.get_waiter("table_not_exists").wait(TableName=TABLE)
    except c.exceptions.ResourceNotFoundException:
        pass
    c.create_table(TableName=TABLE,
                   AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
                   KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
                   BillingMode="PAY_PER_REQUEST",
                   StreamSpecification={"StreamEnabled": True,
                                        "StreamViewType": "KEYS_ONLY"})
    c.get_waiter("table_exists").wait(TableName=TABLE)
    c.put_item(TableName=TABLE, Item={"PK": {"S": "k"}, "v": {"S": "v0"}})
    c.put_item(TableName=TABLE, Item={"PK": {"S": "other"}, "v": {"S": "o"}})


def put(c, v):
    c.put_item(TableName=TABLE, Item={"PK": {"S": "k"}, "v": {"S": v}})


def records_in(workers, seconds):
    """Each worker's GetRecords sent over the next `seconds`."""
    before = [w.ask("records").get("n", -1) for w in workers]
    time.sleep(seconds)
    return [w.ask("records").get("n", -1) - b for w, b in zip(workers, before)]


def redis_down(c, left):
    """Redis stopped: each process reads the stream itself (a write made
    once it has anchored still shows, where its cache would hold the old
    item for 300 s); Redis back on its port: one reader again."""
    state = os.environ.get("REDIS_STATE")
    if not state:
        TAP.ok(0, "Redis down: REDIS_STATE names the server's state directory")
        return
    harness = os.path.join(ROOT, "tests", "harness", "redis.sh")
    port = URL.rsplit(":", 1)[1]
    subprocess.run([harness, "stop", state], check=True, capture_output=True)
    time.sleep(1)
    put(c, "v4")
    got = [w.ask("wait k v4 10") for w in left]
    TAP.ok(all(g.get("v") == "v4" for g in got), "Redis down: a write shows in both", got)
    time.sleep(2)  # each has anchored at LATEST by now
    put(c, "v5")
    got = [w.ask("wait k v5 10") for w in left]
    TAP.ok(all(g.get("v") == "v5" and g.get("gets", 9) <= 1 for g in got),
           "Redis down: each process reads the stream itself (the next write shows)", got)
    n = records_in(left, 2)
    TAP.ok(all(x > 0 for x in n), "Redis down: both send GetRecords", n)
    st = [w.ask("state").get("state") for w in left]
    TAP.ok(st == ["following: fleet: Redis cannot answer: reading alone"] * 2,
           "Redis down: dynamodb_stats says each reads alone", st)
    subprocess.run([harness, "start", "--port", port, state], check=True, capture_output=True)
    time.sleep(7)  # the fleet's backoff (5 s at most), then the election
    n = records_in(left, 4)
    TAP.ok(sum(1 for x in n if x > 0) == 1,
           "Redis back: one of them sends GetRecords again, the other none", n)
    put(c, "v6")
    got = [w.ask("wait k v6 10") for w in left]
    TAP.ok(all(g.get("v") == "v6" for g in got), "Redis back: a write shows in both", got)


def main():
    c = ddb()
    setup(c)
    # a Redis of this run's own: no entry of an earlier table of this name
    subprocess.run(["redis-cli", "-u", URL, "FLUSHALL"], check=True, capture_output=True)
    fleet_opts = ", coherence=streams, shared_cache='%s', shared_cache_timeout=1" % URL
    ws = [Worker(fleet_opts) for _ in range(3)]
    control = Worker(", shared_cache='%s', shared_cache_timeout=1" % URL)
    try:
        ok = all(w.ready.get("ready") for w in ws + [control])
        TAP.ok(ok, "three workers with coherence=streams and the shared tier, one without",
               [w.ready for w in ws + [control]])
        if not ok:
            return
        first = [w.ask("get k").get("v") for w in ws + [control]]
        first += [w.ask("get other").get("v") for w in ws]
        TAP.ok(first == ["v0"] * 4 + ["o"] * 3, "every worker reads v0 and o (its cache filled)",
               first)
        time.sleep(4)  # the election, the leader anchored
        # (a reader's first turn may run alone, before its table names the
        # tier, and clear the table as it anchors: read o into each cache
        # again, now that each is in the fleet)
        for w in ws:
            w.ask("get other")
        n = records_in(ws, 4)
        TAP.ok(sum(1 for x in n if x > 0) == 1 and min(n) == 0,
               "one reader: one worker sent GetRecords over 4 s, the others none", n)
        leader = [i for i, x in enumerate(n) if x > 0]
        st = [w.ask("state").get("state") for w in ws]
        TAP.ok(len(leader) == 1 and st[leader[0]] == "following: fleet leader" and
               sorted(st) == ["following: fleet follower"] * 2 + ["following: fleet leader"],
               "dynamodb_stats: the sender says 'fleet leader', the others 'fleet follower'",
               st)

        put(c, "v1")
        got = [w.ask("wait k v1 10") for w in ws]
        TAP.ok(all(g.get("v") == "v1" for g in got),
               "an outside write shows in every worker's cached read within 10 s", got)
        TAP.ok(all(g.get("gets", 9) <= 1 for g in got),
               "each worker asked DynamoDB for it once at most (reads from its cache)", got)
        cv = control.ask("get k")
        TAP.ok(cv.get("v") == "v0", "control: without coherence=streams the old value stays", cv)

        if len(leader) != 1:
            TAP.ok(0, "kill -9 of the leader: no single leader to kill", n)
            return
        dead = ws[leader[0]]
        os.kill(dead.p.pid, signal.SIGKILL)
        dead.p.wait()
        t_kill = time.time()
        time.sleep(0.5)
        put(c, "v2")  # during the takeover
        left = [w for w in ws if w is not dead]
        t0 = time.time()
        new = []
        while time.time() - t0 < 12 and not new:
            n = records_in(left, 1)
            new = [i for i, x in enumerate(n) if x > 0]
        took = time.time() - t_kill
        TAP.ok(len(new) == 1 and took < 12,
               "kill -9 of the leader: another sends GetRecords within 12 s (%.1f s)" % took, n)
        got = [w.ask("wait k v2 10") for w in left]
        TAP.ok(all(g.get("v") == "v2" for g in got),
               "a write made during the takeover shows in both workers left", got)
        # resumed from the checkpoint, not anchored again: nothing cleared,
        # the other item still answered by each process's own cache
        got = [w.ask("get other") for w in left]
        TAP.ok(all(g.get("v") == "o" and g.get("gets") == 0 and g.get("shared") == 0
                   for g in got),
               "the new leader resumed from the checkpoint: no cache cleared",
               [got, [w.ask("fleet") for w in left]])
        put(c, "v3")
        got = [w.ask("wait k v3 10") for w in left]
        TAP.ok(all(g.get("v") == "v3" for g in got),
               "and the next write too, through the new leader", got)
        redis_down(c, left)
    finally:
        for w in ws + [control]:
            w.stop()
        try:
            c.delete_table(TableName=TABLE)
        except Exception:
            pass


main()
sys.exit(TAP.done())
