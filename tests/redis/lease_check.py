#!/usr/bin/env python3
"""Leases in the shared tier (docs/cache.md, "Leases"): suite 64's driver.

    lease_check.py

Environment: AWS_ENDPOINT_URL_DYNAMODB (DynamoDB Local), the test
credentials, REDIS_STATE (a redis-server of tests/harness/redis.sh),
DDB_EXT (the extension, default build/dynamodb).

Every process is a sqlite3 shell reading through tests/faults/proxy.py,
which records each request (--log: what DynamoDB was asked, key by key)
and holds reads back (a fleet's round trip; a holder's read kept long
enough to kill it or to write under it).  A fleet is FLEET processes
released at one instant: each blocks reading a FIFO until all are
started, then one write of FLEET lines lets them go.

  * single GetItems, batched keys (an IN list: BatchGetItem) and Query
    pages: with leases DynamoDB is asked for each key about once (at most
    twice in all, a cold holder's first read may outlast a wait); the
    same fleet with shared_lease_wait=0 asks for each about FLEET times
    (the check that the counting sees a herd)
  * a holder killed (SIGKILL) while its read is held back: the others
    answer right, within the lease wait and a margin, counted as fallbacks
  * a write (a DELETE, alone or in a COMMIT) racing a lease: the holder's
    fill is dropped (stale), and the old value is never served after the
    write; without
    leases it is (the write's entry gone before the late fill, item_ttl=1)

Prints TAP lines ("ok N - leases: ..."), numbered from 1.
"""
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build", "dynamodb"))
STATE = os.environ["REDIS_STATE"]
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
TABLE = "Lease064"
FLEET = 8
N_KEYS = 40   # keys a fleet reads one by one
N_BATCH = 100  # keys a fleet reads in IN lists
PAGES_PK = "Q"  # the partition a fleet queries
DELAY = 0.05  # a fleet's DynamoDB round trip

TAP = Tap("leases: ")


def redis_url():
    with open(os.path.join(STATE, "url")) as f:
        return f.read().strip()


def redis(*args):
    return subprocess.run(["redis-cli", "-u", redis_url()] + list(args),
                          capture_output=True, text=True).stdout.strip()


# ---------------------------------------------------------------------------
class Proxy:
    """tests/faults/proxy.py in front of DynamoDB Local, recording."""

    def __init__(self, tmp):
        self.log = os.path.join(tmp, "proxy.log")
        open(self.log, "w").close()
        self.p = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tests", "faults", "proxy.py"),
             "--upstream", os.environ["AWS_ENDPOINT_URL_DYNAMODB"], "--log", self.log],
            stdout=subprocess.PIPE, text=True)
        self.url = "http://127.0.0.1:%s" % self.p.stdout.readline().strip()

    def control(self, **kw):
        import urllib.request
        req = urllib.request.Request(self.url + "/__control", data=json.dumps(kw).encode(),
                                     method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def mark(self):
        with open(self.log) as f:
            return sum(1 for _ in f)

    def asked(self, since):
        """What DynamoDB was asked since line `since`: {op: [keys...]}."""
        out = {}
        with open(self.log) as f:
            lines = f.readlines()[since:]
        for line in lines:
            r = json.loads(line)
            hdr = dict((k.lower(), v) for k, v in r["headers"])
            op = hdr.get("x-amz-target", "").rsplit(".", 1)[-1]
            body = json.loads(base64.b64decode(r["body"]) or b"{}")
            if op == "GetItem":
                keys = [body["Key"]["PK"]["S"]]
            elif op == "BatchGetItem":
                keys = [k["PK"]["S"] for t in body["RequestItems"].values() for k in t["Keys"]]
            elif op == "Query":
                keys = [json.dumps(body.get("ExclusiveStartKey"))]
            else:
                keys = []
            out.setdefault(op, []).extend(keys)
        return out

    def stop(self):
        self.p.kill()
        self.p.wait()


def script(statements, opts):
    vt = ("CREATE VIRTUAL TABLE temp.t USING dynamodb(table=%s, endpoint='%s', "
          "shared_cache='%s', shared_cache_timeout=1%s);" % (TABLE, PROXY.url, redis_url(), opts))
    stats = ("SELECT '#stats', name, value FROM dynamodb_stats WHERE name LIKE "
             "'shared_lease%' OR name = 'shared_hits';")
    return ".load %s\n%s\n%s\n%s\n" % (EXT, vt, "\n".join(statements), stats)


def parse(out):
    answers, stats = [], {}
    for line in out.splitlines():
        if line.startswith("#stats|"):
            _, k, v = line.split("|", 2)
            stats[k] = int(float(v))
        else:
            answers.append(line)
    return answers, stats


def start(statements, opts="", gate=None):
    """A sqlite3 process; with gate (a FIFO) it waits for a line of it."""
    s = script(statements, opts)
    cmd = [SQLITE3, ":memory:"]
    if gate:
        cmd = ["sh", "-c", 'read x < "$0"; exec "$@"', gate] + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdin.write(s)
    p.stdin.close()
    return p


def finish(p, timeout=300):
    out = p.stdout.read()
    err = p.stderr.read()
    p.wait(timeout=timeout)
    return parse(out) + (err, p.returncode)


def fleet(statements, opts=""):
    """FLEET processes released at one instant.  Returns their results."""
    redis("FLUSHALL")
    gate = os.path.join(TMP, "gate")
    if os.path.exists(gate):
        os.unlink(gate)
    os.mkfifo(gate)
    ps = [start(statements, opts, gate) for _ in range(FLEET)]
    time.sleep(1.0)  # every one blocked on the FIFO
    with open(gate, "w") as g:
        g.write("go\n" * FLEET)
    return [finish(p) for p in ps]


# ---------------------------------------------------------------------------
def key(i):
    return "K#%03d" % i


def setup():
    c = fixtures.connect()
    fixtures.create_table(c, TABLE, "PK", "SK")
    items = [{"PK": key(i), "SK": "S", "v": "v%d" % i} for i in range(N_BATCH)]
    items += [{"PK": PAGES_PK, "SK": "S#%03d" % i, "v": "q%d" % i} for i in range(30)]
    items += [{"PK": key(901), "SK": "S", "v": "v901"}]
    fixtures.put_items(c, TABLE, items)


def gets(n):
    return ["SELECT json_extract(item, '$.v') FROM t WHERE PK='%s' AND SK='S';" % key(i)
            for i in range(n)]


def batches(n, per=25):
    out = []
    for a in range(0, n, per):
        ks = ",".join("'%s'" % key(i) for i in range(a, min(n, a + per)))
        out.append("SELECT count(*), sum(substr(json_extract(item, '$.v'), 2)) FROM t "
                   "WHERE PK IN (%s) AND SK='S';" % ks)
    return out


def want_batches(n, per=25):
    return ["%d|%d" % (min(n, a + per) - a, sum(range(a, min(n, a + per))))
            for a in range(0, n, per)]


QUERY = ["SELECT count(*), group_concat(json_extract(item, '$.v')) FROM "
         "(SELECT item FROM t WHERE PK='%s' LIMIT 30);" % PAGES_PK]


def check_fleet(what, statements, want, op, n_keys, opts, delay=DELAY):
    PROXY.control(fault="delay", mode="always", ops=["GetItem", "BatchGetItem", "Query"],
                  delay=delay)
    m = PROXY.mark()
    rs = fleet(statements, opts)
    asked = len(PROXY.asked(m).get(op, []))
    ok = all(r[3] == 0 and r[0] == want for r in rs)
    bad = [r for r in rs if r[3] != 0 or r[0] != want][:1]
    TAP.ok(ok, "%s: %d processes at once, every answer right" % (what, FLEET),
           bad and "rc %d %s\n%s" % (bad[0][3], bad[0][2], "\n".join(bad[0][0][:5])))
    waits = sum(r[1].get("shared_lease_waits", 0) for r in rs)
    return asked, waits


def test_fleets():
    for what, st, want, op, n in (
            ("single GetItems", gets(N_KEYS), ["v%d" % i for i in range(N_KEYS)], "GetItem",
             N_KEYS),
            ("batched keys (IN lists)", batches(N_BATCH), want_batches(N_BATCH), "BatchGetItem",
             N_BATCH),
            ("Query pages", QUERY, ["30|" + ",".join("q%d" % i for i in range(30))], "Query",
             1)):
        asked, waits = check_fleet(what, st, want, op, n, ", shared_lease_wait=0.5")
        TAP.ok(asked <= 2 * n and waits > 0,
               "%s: DynamoDB asked %d times for %d keys (at most %d), %d lease waits"
               % (what, asked, n, 2 * n, waits), "asked %d, waits %d" % (asked, waits))
        # a fleet of one statement each (the Query) overlaps only while its
        # first answer is held back, and the gate releases the processes
        # before the shell starts (under SANITIZE=1 eight starts on two
        # cores spread over a second): 3 s, so that every process has asked
        # before the first answer fills the shared tier
        off, _ = check_fleet(what + ", leases off", st, want, op, n, ", shared_lease_wait=0",
                             DELAY if len(st) > 1 else 3.0)
        TAP.ok(off >= 3 * n,
               "%s, shared_lease_wait=0: a herd, %d asks for %d keys (the count sees one)"
               % (what, off, n), "asked %d" % off)


def get_one(i):
    return ["SELECT json_extract(item, '$.v') FROM t WHERE PK='%s' AND SK='S';" % key(i)]


def test_holder_killed():
    # (keys 900 and on: never read before, so "first" holds this read)
    redis("FLUSHALL")
    PROXY.control(fault="delay", mode="first", ops=["GetItem"], delay=5.0, match=key(901))
    holder = start(get_one(901), ", shared_lease_wait=0.4")
    time.sleep(1.5)  # its read is held at the proxy: it holds the lease
    t0 = time.time()
    other = start(get_one(901), ", shared_lease_wait=0.4")
    time.sleep(0.1)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    a, s, err, rc = finish(other)
    took = time.time() - t0
    TAP.ok(rc == 0 and a == ["v901"], "a holder killed mid-read: the other answers right",
           "rc %d %s %r" % (rc, err, a))
    TAP.ok(took < 3.0 and s.get("shared_lease_fallbacks") == 1 and s.get("shared_lease_waits") == 1,
           "... within the wait (0.4 s) and a margin: %.2f s, one wait, one fallback" % took,
           "took %.2f, %r" % (took, s))


def write_race(k, lease_opts, txn=False):
    """A holder's read of key k held 4 s; meanwhile a DELETE (item_ttl=1:
    its entry, "no such item", is gone before the late fill).  Returns what a reader after
    both gets, and the holder's counters."""
    redis("FLUSHALL")
    c = fixtures.connect()
    c.put_item(TableName=TABLE, Item={"PK": {"S": key(k)}, "SK": {"S": "S"},
                                      "v": {"S": "old"}})
    PROXY.control(fault="delay", mode="first", ops=["GetItem"], delay=4.0, match=key(k))
    holder = start(get_one(k), lease_opts)
    time.sleep(1.5)
    PROXY.control(fault="none")  # (the holder's answer stays held)
    delete = ["DELETE FROM t WHERE PK='%s' AND SK='S';" % key(k)]
    if txn:  # a COMMIT of two writes: one call (cache/write.c's note_call)
        delete = (["BEGIN;"] + delete +
                  ["UPDATE t SET item = json_set(item, '$.v', 'w') "
                   "WHERE PK='%s' AND SK='S';" % key(901), "COMMIT;"])
    a, _, err, rc = finish(start(delete, ", item_ttl=1"))
    ha, hs, herr, hrc = finish(holder)
    time.sleep(1.5)  # the write's entry is gone (item_ttl=1)
    ra, rs, rerr, rrc = finish(start(get_one(k), lease_opts))
    return ra, hs, (ha, herr, hrc, a, err, rc, rerr)


def test_write_race():
    ra, hs, detail = write_race(902, ", shared_lease_wait=0.5")
    TAP.ok(ra == [], "a write racing a lease: the old value is not served after it",
           "%r %r" % (ra, detail))
    TAP.ok(hs.get("shared_lease_stale") == 1 and hs.get("shared_lease_wins") == 1,
           "... the holder's fill dropped as stale (counted)", hs)
    ra, hs, detail = write_race(904, ", shared_lease_wait=0.5", txn=True)
    if "has no TransactWriteItems" in detail[4]:  # dynalite: nothing written
        print("# skip the same race with the DELETE in a transaction: the "
              "server has no TransactWriteItems, and the COMMIT said "
              "'nothing written' (1 test)")
    else:
        TAP.ok(ra == [] and hs.get("shared_lease_stale") == 1,
               "the same race with the DELETE in a transaction (COMMIT): "
               "dropped too", "%r %r %r" % (ra, hs, detail))
    ra, hs, detail = write_race(903, ", shared_lease_wait=0")
    TAP.ok(ra == ["old"], "without leases the same race serves the old value (what leases fix)",
           "%r %r" % (ra, detail))


def main():
    global PROXY, TMP
    TMP = tempfile.mkdtemp(prefix="lease064.", dir=os.path.join(ROOT, ".test-tmp"))
    setup()
    PROXY = Proxy(TMP)
    try:
        test_fleets()
        test_holder_killed()
        test_write_race()
    finally:
        PROXY.stop()
        fixtures.drop_table(fixtures.connect(), TABLE)
        shutil.rmtree(TMP, ignore_errors=True)
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
