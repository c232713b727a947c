#!/usr/bin/env python3
"""The shared cache tier (Redis) end to end: suite 60's driver.

    shared_check.py SERVER_NAME

Environment: AWS_ENDPOINT_URL_DYNAMODB (DynamoDB Local or dynalite), the
test credentials (test/test), REDIS_STATE (the state directory of a
redis-server started by tests/harness/redis.sh, whose url file holds its
URL), DDB_EXT (the extension, default build/dynamodb).

Each "process" is a sqlite3 shell of its own (or, for the runs that last,
Debian's /usr/bin/python3 with its sqlite3 module); what DynamoDB answered
is counted by dynamodb_stats (requests_GetItem, requests_Query), and every
answer is compared with boto3's (tests/harness/fixtures.py).  Redis is
read and written directly with a few lines of RESP here (tampering,
planting, looking for readable names).  Hostile servers (wrong types, a
huge bulk length, garbage) and a slow one (a proxy that delays the real
one) are threads of this process on loopback ports.

Prints TAP lines ("ok N - SERVER: shared: ..."), numbered from 1.
"""
import os
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import fixtures  # noqa: E402
import preload  # noqa: E402
from tap import Tap  # noqa: E402

SERVER = sys.argv[1] if len(sys.argv) > 1 else "server"
EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build", "dynamodb"))
STATE = os.environ["REDIS_STATE"]
TABLE = "Shared060"
N_ITEMS = 120
N_READ = 40  # the keys the share tests read
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")

TAP = Tap(SERVER + ": shared: ")


def redis_url():
    with open(os.path.join(STATE, "url")) as f:
        return f.read().strip()


def redis_port():
    return int(redis_url().rsplit(":", 1)[1])


# ---------------------------------------------------------------------------
# RESP, enough to tamper with Redis
def resp_cmd(port, *args):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        out = b"*%d\r\n" % len(args)
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        s.sendall(out)
        f = s.makefile("rb")
        return resp_read(f)
    finally:
        s.close()


def resp_read(f):
    line = f.readline()
    t, rest = line[:1], line[1:-2]
    if t in (b"+", b"-"):
        return rest.decode() if t == b"+" else RuntimeError(rest.decode())
    if t == b":":
        return int(rest)
    if t == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        return data[:-2]
    if t == b"*":
        n = int(rest)
        return None if n < 0 else [resp_read(f) for _ in range(n)]
    raise RuntimeError("bad reply %r" % line)


def redis_keys(port):
    keys, cursor = set(), b"0"
    while True:
        cursor, batch = resp_cmd(port, "SCAN", cursor, "COUNT", "1000")
        keys.update(batch)
        if cursor == b"0":
            return keys


def is_gen(v):
    return v is not None and v.isdigit()


# ---------------------------------------------------------------------------
# sqlite3 processes
def key_of(i):
    return "P#%d" % (i % 10), "S#%03d" % i


def vtab(opts=""):
    return "CREATE VIRTUAL TABLE temp.t USING dynamodb(table=%s%s);" % (TABLE, opts)


STATS = ("SELECT '#stats', name, value FROM dynamodb_stats WHERE name LIKE 'shared%'"
         " OR name IN ('requests_GetItem', 'requests_Query', 'requests_BatchGetItem');")


def run_proc(statements, opts="", env=None, shared=True):
    """One sqlite3 process: the vtab (shared_cache= the Redis URL unless
    shared is a string to use instead, or False), the statements, then the
    counters.  Returns (answer lines, counters dict, stderr, exit code)."""
    # a generous bound: the machine is shared, and only test_slow and
    # test_progress are about timeouts
    o = opts if "shared_cache_timeout" in opts else opts + ", shared_cache_timeout=1"
    if shared is True:
        o += ", shared_cache='%s'" % redis_url()
    elif shared:
        o += ", shared_cache='%s'" % shared
    script = ".load %s\n%s\n%s\n%s\n" % (EXT, vtab(o), "\n".join(statements), STATS)
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([SQLITE3, ":memory:"], input=script, capture_output=True,
                       text=True, env=e, timeout=300)
    answers, stats = [], {}
    for line in p.stdout.splitlines():
        if line.startswith("#stats|"):
            _, k, v = line.split("|", 2)
            stats[k] = int(float(v))
        else:
            answers.append(line)
    return answers, stats, p.stderr, p.returncode


def reads(keys):
    return ["SELECT PK, SK, json_extract(item, '$.v') FROM t WHERE PK='%s' AND SK='%s';"
            % key_of(i) for i in keys]


QUERIES = ["SELECT count(*), group_concat(json_extract(item, '$.v')) FROM t WHERE PK='P#1';",
           "SELECT count(*), group_concat(json_extract(item, '$.v')) FROM t WHERE PK='P#2';"]


def want_reads(keys, values=None):
    values = values or {}
    return ["%s|%s|%s" % (key_of(i) + (values.get(i, "v%d" % i),)) for i in keys]


def want_queries():
    out = []
    for pk in (1, 2):
        vs = ["v%d" % i for i in range(N_ITEMS) if i % 10 == pk]
        vs.sort(key=lambda v: "S#%03d" % int(v[1:]))
        out.append("%d|%s" % (len(vs), ",".join(vs)))
    return out


OTHER = {"AWS_ACCESS_KEY_ID": "shared060other", "AWS_SECRET_ACCESS_KEY": "other-secret"}


# ---------------------------------------------------------------------------
def setup():
    c = fixtures.connect()
    fixtures.create_table(c, TABLE, "PK", "SK")
    items = []
    for i in range(N_ITEMS):
        pk, sk = key_of(i)
        items.append({"PK": pk, "SK": sk, "v": "v%d" % i})
    fixtures.put_items(c, TABLE, items)
    resp_cmd(redis_port(), "FLUSHALL")


def test_share():
    keys = list(range(N_READ))
    want = want_reads(keys) + want_queries()
    a, sa, err, rc = run_proc(reads(keys) + QUERIES)
    TAP.ok(rc == 0 and a == want, "process A: every answer right (boto3's items)",
           "rc %d %s\n%s" % (rc, err, "\n".join(a[:5])))
    b, sb, err, rc = run_proc(reads(keys) + QUERIES)
    TAP.ok(rc == 0 and b == want, "process B: the same answers", err)
    TAP.ok(sb.get("requests_GetItem") == 0 and sb.get("requests_Query") == 0 and
           sb.get("shared_hits") == N_READ + 2,
           "process B: no DynamoDB request, %d shared hits" % (N_READ + 2),
           "A %r\nB %r" % (sa, sb))
    TAP.ok(sa.get("shared_fills") == N_READ + 2 and sa.get("shared_misses") == N_READ + 2,
           "process A: %d misses, %d fills" % (N_READ + 2, N_READ + 2), sa)
    return sa


def test_names_unreadable():
    port = redis_port()
    keys = redis_keys(port)
    bad = []
    for k in keys:
        v = resp_cmd(port, "GET", k)
        # (needles of 4 bytes or more: a ciphertext holds a given 2 bytes
        # by chance now and then)
        for needle in (TABLE.encode(), b"P#1\"", b"S#00", b'"S":', b'"v"'):
            if needle in k or (v and not is_gen(v) and needle in v):
                bad.append((k, needle))
    TAP.ok(keys and not bad and all(k.startswith(b"ddbc1:") and len(k) == 70 for k in keys),
           "Redis holds %d keys, no table, key or value readable" % len(keys), bad[:5])


def test_other_credentials():
    port = redis_port()
    before = redis_keys(port)
    keys = list(range(N_READ))
    c, sc, err, rc = run_proc(reads(keys) + QUERIES, env=OTHER)
    TAP.ok(rc == 0 and c == want_reads(keys) + want_queries(),
           "other credentials: the right answers", err)
    TAP.ok(sc.get("shared_hits") == 0 and sc.get("requests_GetItem") == N_READ and
           sc.get("shared_auth_failures") == 0,
           "other credentials: no shared hit, every key asked of DynamoDB", sc)
    mine = redis_keys(port) - before
    # plant the first credentials' values (sealed, genuine) under every
    # key the other credentials use (but their generations)
    theirs = [resp_cmd(port, "GET", k) for k in before]
    theirs = [v for v in theirs if v and not is_gen(v)]
    planted = 0
    for i, k in enumerate(sorted(mine)):
        v = resp_cmd(port, "GET", k)
        if v is None or is_gen(v):
            continue
        resp_cmd(port, "SET", k, theirs[i % len(theirs)], "PX", "300000")
        planted += 1
    c2, sc2, err, rc = run_proc(reads(keys) + QUERIES, env=OTHER)
    TAP.ok(rc == 0 and c2 == want_reads(keys) + want_queries() and planted == N_READ + 2,
           "planted values (%d): the right answers" % planted, err)
    TAP.ok(sc2.get("shared_hits") == 0 and sc2.get("shared_auth_failures") == planted,
           "planted values: no hit, each an authentication failure", sc2)


def test_negative():
    a, sa, err, rc = run_proc(["SELECT count(*) FROM t WHERE PK='P#1' AND SK='S#none';"])
    b, sb, err2, rc2 = run_proc(["SELECT count(*) FROM t WHERE PK='P#1' AND SK='S#none';"])
    TAP.ok(rc == 0 and rc2 == 0 and a == ["0"] and b == ["0"] and
           sb.get("requests_GetItem") == 0 and sb.get("shared_hits") == 1,
           "no such item: shared too (the second process asks nothing)", (sa, sb, err, err2))


def test_writes():
    k = [100, 103, 104]  # P#0, P#3, P#4: not in QUERIES
    # fill Redis with the items and the page of P#0
    run_proc(reads(k) + ["SELECT count(*) FROM t WHERE PK='P#0';"])
    w, sw, err, rc = run_proc([
        "UPDATE t SET item = json_set(item, '$.v', 'new100') WHERE PK='P#0' AND SK='S#100';",
        "DELETE FROM t WHERE PK='P#3' AND SK='S#103';",
        "SELECT changes();"])
    TAP.ok(rc == 0, "writes through the extension", err)
    r, sr, err, rc = run_proc(reads([100]) + [
        "SELECT count(*) FROM t WHERE PK='P#3' AND SK='S#103';",
        "SELECT count(*), sum(json_extract(item, '$.v') = 'new100') FROM t WHERE PK='P#0';"])
    n0 = len([i for i in range(N_ITEMS) if i % 10 == 0])
    TAP.ok(rc == 0 and r == ["P#0|S#100|new100", "0", "%d|1" % n0],
           "another process sees the written item, the deletion and the new page", r)
    TAP.ok(sr.get("requests_GetItem") == 0 and sr.get("requests_Query", 0) >= 1,
           "items from Redis as written; the page retired by the write (asked again)", sr)
    # a writer that bypasses the extension: stale until the TTL
    c = fixtures.connect()
    c.put_item(TableName=TABLE, Item={"PK": {"S": "P#4"}, "SK": {"S": "S#104"},
                                      "v": {"S": "outside"}})
    r, sr, err, rc = run_proc(reads([104]))
    TAP.ok(rc == 0 and r == ["P#4|S#104|v104"] and sr.get("shared_hits") == 1,
           "a write outside the extension: Redis keeps the old item until its TTL", (r, sr))
    time.sleep(1.0)
    r, sr, err, rc = run_proc(reads([104]), opts=", item_ttl=0.5")
    TAP.ok(rc == 0 and r == ["P#4|S#104|outside"],
           "... and a reader whose TTL is shorter than the entry's age asks DynamoDB", (r, sr))


def test_replay():
    """What someone who can write Redis can still do with a genuine sealed
    value (docs/trust-model.md): put it back under its own key after the
    item changed (replay), bounded by the reader's item_ttl; and what it
    cannot: move it to another key."""
    port = redis_port()
    before = redis_keys(port)
    r, sr, err, rc = run_proc(reads([106]))
    new = sorted(redis_keys(port) - before)
    old = resp_cmd(port, "GET", new[0]) if len(new) == 1 else None
    TAP.ok(rc == 0 and r == want_reads([106]) and old is not None,
           "replay: the item's sealed entry in Redis (one new key)", (r, new, err))
    if old is None:
        return
    filled = time.time()
    w, sw, err, rc = run_proc([
        "UPDATE t SET item = json_set(item, '$.v', 'new106') WHERE PK='P#6' AND SK='S#106';"])
    now = resp_cmd(port, "GET", new[0])
    TAP.ok(rc == 0 and now is not None and now != old,
           "replay: the UPDATE through the extension replaced the entry", (err, sw))
    resp_cmd(port, "SET", new[0], old, "PX", "300000")  # the replay
    r, sr, err, rc = run_proc(reads([106]))
    TAP.ok(rc == 0 and r == ["P#6|S#106|v106"] and sr.get("shared_hits") == 1,
           "replay: a reader whose item_ttl covers the old value's age takes it "
           "(stale, as documented: AES-GCM does not prevent replay)", (r, sr, err))
    time.sleep(max(0.0, filled + 1.2 - time.time()))
    r, sr, err, rc = run_proc(reads([106]), opts=", item_ttl=1")
    TAP.ok(rc == 0 and r == ["P#6|S#106|new106"] and sr.get("shared_hits") == 0 and
           sr.get("requests_GetItem") == 1,
           "replay: a reader whose item_ttl is shorter than the old value's age "
           "refuses it (the fill time is sealed in it) and asks DynamoDB", (r, sr, err))
    # what the replay cannot do: make a write computed from it: an UPDATE reads its row from DynamoDB itself, not the tiers
    resp_cmd(port, "SET", new[0], old, "PX", "300000")  # replayed again
    u, su, err, rc = run_proc([
        "UPDATE t SET item = json_set(item, '$.v', json_extract(item, '$.v') || '+1') "
        "WHERE PK='P#6' AND SK='S#106';"])
    c, sc, err2, rc2 = run_proc(reads([106]), opts=", consistent_read=true")
    TAP.ok(rc == 0 and rc2 == 0 and c == ["P#6|S#106|new106+1"],
           "replay: an UPDATE in a fresh process computes from DynamoDB's item, "
           "never the replayed value (new106+1, not v106+1)", (c, err, err2))
    # moved: item 106's genuine value under item 107's key
    before = redis_keys(port)
    run_proc(reads([107]))
    k107 = sorted(redis_keys(port) - before)
    if len(k107) == 1:
        resp_cmd(port, "SET", k107[0], old, "PX", "300000")
    r, sr, err, rc = run_proc(reads([107]))
    TAP.ok(len(k107) == 1 and rc == 0 and r == want_reads([107]) and
           sr.get("shared_hits") == 0 and sr.get("shared_auth_failures") == 1 and
           sr.get("requests_GetItem") == 1,
           "a genuine value moved to another item's key: refused (the key is "
           "its associated data), counted, the right answer", (k107, r, sr, err))


def test_consistent():
    a, sa, err, rc = run_proc(reads([0, 1]) + QUERIES[:1] + [
        "SELECT count(*) FROM dynamodb_log WHERE operation LIKE 'shared%';"],
        opts=", consistent_read=true")
    TAP.ok(rc == 0 and a[:2] == want_reads([0, 1]) and a[-1] == "0" and
           sa.get("shared_hits") == 0 and sa.get("shared_misses") == 0 and
           sa.get("shared_fills") == 0 and sa.get("requests_GetItem") == 2,
           "consistent_read=true: neither tier asked nor filled", (a, sa))


def test_log():
    a, sa, err, rc = run_proc(reads([3]) + [
        "SELECT operation, table_name, items FROM dynamodb_log WHERE operation LIKE 'shared%';"])
    TAP.ok(rc == 0 and "shared_get|%s|1" % TABLE in a,
           "dynamodb_log: a row per round trip to Redis (shared_get, its hits)", a)


def test_options():
    _, _, err, rc = run_proc(["SELECT 1;"], shared="memcached://127.0.0.1:1")
    TAP.ok(rc != 0 and "dynamodb: bad shared_cache 'memcached://127.0.0.1:1': the scheme "
           "must be redis:// or rediss:// (TLS)" in err, "a URL that cannot be honoured: "
           "a clear error", err)
    _, _, err, rc = run_proc(["SELECT 1;"], shared="redis://app:hunter2@127.0.0.1:1")
    TAP.ok(rc != 0 and "shared_cache must not hold a password" in err and "hunter2" not in err,
           "a password in the option is refused (and not echoed)", err)
    env = {"DYNAMODB_SHARED_CACHE": redis_url()}
    a, sa, err, rc = run_proc(reads([0]), env=env, shared=False)
    TAP.ok(rc == 0 and sa.get("shared_hits") == 1 and sa.get("requests_GetItem") == 0,
           "DYNAMODB_SHARED_CACHE without the option: the tier is used", (sa, err))
    a, sa, err, rc = run_proc(reads([0]), env=env, shared="off")
    TAP.ok(rc == 0 and sa.get("shared_hits") == 0 and sa.get("requests_GetItem") == 1,
           "shared_cache=off overrides DYNAMODB_SHARED_CACHE", (sa, err))


def test_tamper():
    """Last of the read tests: every value of the first credentials is
    changed (one byte), or moved to another key."""
    port = redis_port()
    moved = changed = 0
    keys = sorted(redis_keys(port))
    vals = {k: resp_cmd(port, "GET", k) for k in keys}
    sealed = [k for k in keys if vals[k] and not is_gen(vals[k])]
    for i, k in enumerate(sealed):
        v = bytearray(vals[k])
        # (the planted values of test_other_credentials are copies: a
        # neighbour may hold this key's own value)
        if i % 2 == 0 or vals[sealed[i - 1]] == vals[k]:
            v[len(v) // 2] ^= 1
            changed += 1
        else:
            v = vals[sealed[i - 1]]  # its neighbour's value
            moved += 1
        resp_cmd(port, "SET", k, bytes(v), "PX", "300000")
    keys4 = list(range(N_READ))
    b, sb, err, rc = run_proc(reads(keys4) + QUERIES)
    TAP.ok(rc == 0 and b == want_reads(keys4) + want_queries(),
           "tampered values (%d changed, %d moved): the right answers" % (changed, moved),
           (err, b))
    TAP.ok(sb.get("shared_hits") == 0 and sb.get("shared_auth_failures", 0) >= N_READ and
           sb.get("requests_GetItem") == N_READ,
           "tampered values: misses, each counted in shared_auth_failures", sb)


# ---------------------------------------------------------------------------
# Redis down, slow, hostile
PY = "/usr/bin/python3"


def py_env():
    """The environment for PY loading the extension: under SANITIZE=1 the
    extension is built with ASan, which loads only into a process whose first
    library is the ASan runtime (as suites 36, 50 and 55 do)."""
    return preload.python_env(dict(os.environ))

LOOP = r"""
import json, sqlite3, sys, time
ext, opts, table, rounds, pause = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(ext)
db.execute("CREATE VIRTUAL TABLE temp.t USING dynamodb(table=%s%s)" % (table, opts))
def stats():
    return dict(db.execute("SELECT name, value FROM dynamodb_stats").fetchall())
for r in range(rounds):
    db.execute("SELECT dynamodb_cache_clear()").fetchall()
    rows = []
    for i in range(40):
        rows += db.execute("SELECT json_extract(item, '$.v') FROM t WHERE PK=? AND SK=?",
                           ("P#%d" % (i % 10), "S#%03d" % i)).fetchall()
    rows += db.execute("SELECT count(*) FROM t WHERE PK='P#1'").fetchall()
    s = stats()
    print(json.dumps({"round": r, "rows": [x[0] for x in rows],
                      "stats": {k: v for k, v in s.items() if k.startswith("shared") or k.startswith("requests_")}}))
    sys.stdout.flush()
    sys.stdin.readline()  # the driver's go-ahead
    time.sleep(pause)
"""


def want_loop():
    return ["v%d" % i for i in range(40)] + [len([i for i in range(N_ITEMS) if i % 10 == 1])]


def test_killed():
    import json
    url = redis_url()
    port = redis_port()
    # (a bound of 1 s: on a loaded machine 20 ms is sometimes too short for
    # Redis that is up, and this test is about Redis down)
    p = subprocess.Popen([PY, "-c", LOOP, EXT,
                          ", shared_cache='%s', shared_cache_timeout=1" % url, TABLE, "8", "0"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=py_env())
    rounds = []
    try:
        for r in range(8):
            line = p.stdout.readline()
            if not line:
                break
            rounds.append(json.loads(line))
            if r == 1:  # Redis killed mid-run
                subprocess.run([os.path.join(ROOT, "tests", "harness", "redis.sh"), "stop", STATE],
                               check=True)
            if r == 4:  # and back, on the same port: used again after the backoff
                subprocess.run([os.path.join(ROOT, "tests", "harness", "redis.sh"), "start",
                                "--port", str(port), STATE], check=True, capture_output=True)
                time.sleep(DDBC_BACKOFF_MAX + 0.5)
            p.stdin.write("\n")
            p.stdin.flush()
        p.stdin.close()
        err = p.stderr.read()
        rc = p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    want = want_loop()
    TAP.ok(rc == 0 and len(rounds) == 8 and all(r["rows"] == want for r in rounds),
           "Redis killed mid-run: every answer of every round right, no error",
           "rc %s %s %r" % (rc, err, [r["rows"][:3] for r in rounds]))
    if len(rounds) == 8:
        s2, s4, s7 = rounds[2]["stats"], rounds[4]["stats"], rounds[7]["stats"]
        TAP.ok(s2["shared_errors"] + s2["shared_timeouts"] >= 1 and s4["shared_skipped"] >= 1 and
               s4["shared_down"] == 1,
               "Redis down: counted, then skipped while backing off (not asked on every read)",
               (s2, s4))
        TAP.ok(s7["shared_down"] == 0 and s7["shared_fills"] > s4["shared_fills"] and
               s7["shared_hits"] > s4["shared_hits"],
               "Redis back: used again after the backoff", (s4, s7))


DDBC_BACKOFF_MAX = 5.0


class Fake(threading.Thread):
    """A hostile 'Redis' on a loopback port: every request read gets
    `answer`; delay: seconds before answering."""

    def __init__(self, answer, delay=0.0):
        super().__init__(daemon=True)
        self.answer, self.delay = answer, delay
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stop = False

    def run(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        try:
            while not self.stop:
                data = c.recv(65536)
                if not data:
                    break
                if self.delay:
                    time.sleep(self.delay)
                c.sendall(self.answer)
        except OSError:
            pass
        finally:
            c.close()

    def close(self):
        self.stop = True
        self.sock.close()


class SlowProxy(Fake):
    """The real Redis behind a delay of `delay` seconds on every answer."""

    def __init__(self, port, delay):
        super().__init__(b"", delay)
        self.target = port

    def serve(self, c):
        up = socket.create_connection(("127.0.0.1", self.target))
        try:
            while not self.stop:
                data = c.recv(65536)
                if not data:
                    break
                up.sendall(data)
                time.sleep(self.delay)
                up.settimeout(0.2)
                try:
                    while True:
                        got = up.recv(65536)
                        c.sendall(got)
                        if len(got) < 65536:
                            break
                except socket.timeout:
                    pass
        except OSError:
            pass
        finally:
            c.close()
            up.close()


def test_hostile():
    cases = [(b":1\r\n", "wrong type (an integer)"),
             (b"$99999999999\r\n", "a huge bulk length"),
             (b"\x00\xffgarbage\r\n" * 10, "garbage"),
             (b"*40\r\n" + b"$8\r\nABCDEFGH\r\n" * 40, "values that are not ours"),
             (b"-OOM command not allowed when used memory > 'maxmemory'.\r\n",
              "an error answer (Redis full)")]
    for answer, what in cases:
        f = Fake(answer)
        f.start()
        try:
            a, sa, err, rc = run_proc(reads(range(5)) + QUERIES[:1],
                                      shared="redis://127.0.0.1:%d" % f.port)
        finally:
            f.close()
        TAP.ok(rc == 0 and a == want_reads(range(5)) + want_queries()[:1] and
               sa.get("shared_hits") == 0 and
               sa.get("shared_errors", 0) + sa.get("shared_auth_failures", 0) >= 1,
               "a hostile Redis (%s): a miss, counted, the right answers" % what, (a, sa, err))


def test_slow():
    proxy = SlowProxy(redis_port(), 0.15)
    proxy.start()
    try:
        a, sa, err, rc = run_proc(reads(range(5)),
                                  shared="redis://127.0.0.1:%d" % proxy.port,
                                  opts=", shared_cache_timeout=0.02")
    finally:
        proxy.close()
    TAP.ok(rc == 0 and a == want_reads(range(5)) and sa.get("shared_timeouts", 0) >= 1 and
           sa.get("shared_hits") == 0,
           "a slow Redis (150 ms, bound 20 ms): timeouts counted, the right answers", (a, sa, err))


def test_progress():
    f = Fake(b"")  # accepts, never answers
    f.start()
    try:
        sql = ("%s %s" % (vtab(", query_ttl=300, shared_cache='redis://127.0.0.1:%d'" % f.port),
                          "SELECT count(*) FROM t WHERE PK='P#3';"))
        out = subprocess.run(["script", "-qec", "%s :memory: '.load %s' \"%s\"" % (SQLITE3, EXT, sql),
                              "/dev/null"], capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, DYNAMODB_PROGRESS_AFTER="0")).stdout
    finally:
        f.close()
    TAP.ok("shared cache down (timed out)" in out,
           "the progress line shows the outage", out)


def main():
    setup()
    if SERVER == "--setup-only":
        return 0
    test_share()
    test_names_unreadable()
    test_other_credentials()
    test_negative()
    test_writes()
    test_replay()
    test_consistent()
    test_log()
    test_options()
    test_tamper()
    test_hostile()
    test_slow()
    test_progress()
    test_killed()
    try:
        fixtures.drop_table(fixtures.connect(), TABLE)
    except Exception:
        pass
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
