#!/usr/bin/env python3
"""Differential test: the `dynamodb` virtual table against an ordinary SQLite table.
(The items: items.py; the queries: queries.py.)

Creates the DynamoDB table DiffT (PK/SK, GSI GSI1, GSI ByScore KEYS_ONLY, GSI ByMulti of
a multi-attribute key M1, M2 / M3, Score, LSI LSI1),
loads ~3000 random items into it and the same rows into an ordinary table `native`,
then runs a few hundred random SELECTs against both through ONE sqlite3 shell process
(`.load build/dynamodb`, `.mode quote`) and compares the results.  Prints TAP.

Environment:
  AWS_ENDPOINT_URL_DYNAMODB  DynamoDB Local endpoint (tests/harness/run-all.sh sets it; if unset, this
                             script starts its own through tests/harness/ddblocal.sh and stops it)
  DIFF_SEED                  random seed (default 20240611; printed)
  DIFF_QUERIES               number of random queries (default 400)
  DIFF_ITEMS                 approximate number of items (default 3000)
  DIFF_SELFTEST=1            vtab side is a second native copy (validates the harness)
  DIFF_SELFTEST=mutate       same, but the copy is corrupted (failures must show up)
  DIFF_EXT                   extension path for .load (default <repo>/build/dynamodb)
  DIFF_TABLE                 DynamoDB table name (default DiffT)
  DIFF_KEEP=1                keep the work dir (db, script, output) and the DynamoDB table
  DIFF_ONLY=1,5,17           run only these query numbers (TAP numbering of diff lines)
  DIFF_QUERY_TIMEOUT         seconds without output before a query counts as hung (60)
  DIFF_TIMEOUT               overall budget in seconds for the sqlite3 runs (900)
  SQLITE3                    sqlite3 shell (default sqlite3)

Exit status: 0 when the harness ran (test failures are `not ok` lines), non-zero when the
harness itself broke.
"""
import collections
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = os.environ.get("DIFF_TABLE", "DiffT")
SEED = int(os.environ.get("DIFF_SEED", "20240611"))
NQ = int(os.environ.get("DIFF_QUERIES", "400"))
NITEMS = int(os.environ.get("DIFF_ITEMS", "3000"))
SELFTEST = os.environ.get("DIFF_SELFTEST", "")
if SELFTEST in ("0", ""):
    SELFTEST = ""
EXT = os.environ.get("DIFF_EXT", str(ROOT / "build" / "dynamodb"))
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
KEEP = os.environ.get("DIFF_KEEP", "") not in ("", "0")
QTIMEOUT = float(os.environ.get("DIFF_QUERY_TIMEOUT", "60"))
TOTAL_TIMEOUT = float(os.environ.get("DIFF_TIMEOUT", "900"))
ONLY = set(int(x) for x in os.environ.get("DIFF_ONLY", "").split(",") if x.strip())
MARK = "@@DIFF@@"



def log(msg):
    print("# " + msg.replace("\n", "\n# "), flush=True)


class HarnessError(Exception):
    pass

sys.path.insert(0, str(Path(__file__).resolve().parent))
from items import KEYCOLS, gen_items, native_row  # noqa: E402
from queries import Gen, describe, fixed_queries, lit, render, render_full  # noqa: E402
sys.path.insert(0, str(ROOT / "tests" / "harness"))
from tap import Tap  # noqa: E402


# ----------------------------------------------------------------------------------------
# DynamoDB side
# ----------------------------------------------------------------------------------------

class LocalServer:
    """Starts DynamoDB Local through tests/harness/ddblocal.sh when no endpoint is given."""

    def __init__(self):
        self.state = None

    def ensure(self):
        if os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
            return
        script = ROOT / "tests" / "harness" / "ddblocal.sh"
        if not script.exists():
            raise HarnessError("AWS_ENDPOINT_URL_DYNAMODB is not set and tests/harness/ddblocal.sh is missing")
        subprocess.run([str(script), "install"], check=False, stdout=subprocess.DEVNULL)
        self.state = tempfile.mkdtemp(prefix="ddbdiff-local.")
        p = subprocess.run([str(script), "start", self.state], capture_output=True, text=True, timeout=180)
        url = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
        if p.returncode != 0 or not url.startswith("http"):
            raise HarnessError("could not start DynamoDB Local: " + p.stderr.strip()[-300:])
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = url
        log("started DynamoDB Local at %s" % url)

    def stop(self):
        if self.state:
            subprocess.run([str(ROOT / "tests" / "harness" / "ddblocal.sh"), "stop", self.state],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            shutil.rmtree(self.state, ignore_errors=True)
            self.state = None


def ddb_resource():
    import boto3
    ep = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not ep:
        raise HarnessError("AWS_ENDPOINT_URL_DYNAMODB is not set")
    return boto3.resource(
        "dynamodb", endpoint_url=ep,
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"))


def drop_table(res):
    client = res.meta.client
    try:
        client.delete_table(TableName=TABLE)
    except client.exceptions.ResourceNotFoundException:
        return
    client.get_waiter("table_not_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 1, "MaxAttempts": 60})


def create_and_load(res, items):
    from boto3.dynamodb.types import Binary
    drop_table(res)
    client = res.meta.client
    client.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
            {"AttributeName": "GSI1PK", "AttributeType": "S"},
            {"AttributeName": "GSI1SK", "AttributeType": "S"},
            {"AttributeName": "Type", "AttributeType": "S"},
            {"AttributeName": "Score", "AttributeType": "N"},
            {"AttributeName": "LSK", "AttributeType": "S"},
            {"AttributeName": "M1", "AttributeType": "S"},
            {"AttributeName": "M2", "AttributeType": "N"},
            {"AttributeName": "M3", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {"IndexName": "GSI1",
             "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                           {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "ByScore",
             "KeySchema": [{"AttributeName": "Type", "KeyType": "HASH"},
                           {"AttributeName": "Score", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            # a multi-attribute key (DynamoDB since November 2025)
            {"IndexName": "ByMulti",
             "KeySchema": [{"AttributeName": "M1", "KeyType": "HASH"},
                           {"AttributeName": "M2", "KeyType": "HASH"},
                           {"AttributeName": "M3", "KeyType": "RANGE"},
                           {"AttributeName": "Score", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
        ],
        LocalSecondaryIndexes=[
            {"IndexName": "LSI1",
             "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                           {"AttributeName": "LSK", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
        ],
    )
    client.get_waiter("table_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 1, "MaxAttempts": 60})

    def conv(v):
        if isinstance(v, (bytes, bytearray)):
            return Binary(bytes(v))
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v

    table = res.Table(TABLE)
    with table.batch_writer() as bw:
        for it in items:
            bw.put_item(Item=conv(it))
    # sanity: count what landed
    n = 0
    kw = {"Select": "COUNT"}
    while True:
        r = client.scan(TableName=TABLE, **kw)
        n += r["Count"]
        if "LastEvaluatedKey" not in r:
            break
        kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]
    if n != len(items):
        raise HarnessError("loaded %d items but DynamoDB counts %d" % (len(items), n))


# ----------------------------------------------------------------------------------------
# Running the sqlite3 shell
# ----------------------------------------------------------------------------------------

def split_quote_row(line):
    """Split one `.mode quote` output line into its raw fields."""
    out, i, n = [], 0, len(line)
    while i <= n:
        j = i
        if j < n and (line[j] == "'" or (line[j] in "Xx" and j + 1 < n and line[j + 1] == "'")):
            j += 1 if line[j] == "'" else 2
            while j < n:
                if line[j] == "'":
                    if j + 1 < n and line[j + 1] == "'":
                        j += 2
                        continue
                    j += 1
                    break
                j += 1
        while j < n and line[j] != ",":
            j += 1
        out.append(line[i:j])
        i = j + 1
    return out


class ShellRun:
    """Runs a list of blocks through sqlite3, restarting after crashes/hangs."""

    def __init__(self, workdir, dbfile, setup):
        self.workdir = workdir
        self.dbfile = dbfile
        self.setup = setup        # list of lines run first in every process
        self.deadline = time.time() + TOTAL_TIMEOUT
        self.nproc = 0

    def run(self, blocks):
        """blocks: list of (bid, [(side, sql_line), ...]).
        Returns {bid: {side: {"rows": [...], "err": [...]}, "_status": "ok"|"crash"|"hang"|"skipped"}}"""
        results = {}
        pending = list(blocks)
        while pending:
            if time.time() > self.deadline:
                for bid, _ in pending:
                    results[bid] = {"_status": "skipped (time budget)"}
                break
            done_upto, status, res = self._run_once(pending)
            results.update(res)
            if status == "ok":
                break
            # the block in progress crashed/hung: record it and go on after it
            bad_bid = pending[done_upto][0]
            results.setdefault(bad_bid, {})
            results[bad_bid]["_status"] = status
            pending = pending[done_upto + 1:]
        return results

    def _run_once(self, blocks):
        self.nproc += 1
        lines = list(self.setup)
        where = {}   # script line number -> (bid, side)
        for bid, stmts in blocks:
            for side, sql in stmts:
                lines.append(".print %s %s %s" % (MARK, bid, side))
                assert "\n" not in sql
                lines.append(sql + ";")
                where[len(lines)] = (bid, side)
        lines.append(".print %s END END" % MARK)
        script = self.workdir / ("script%d.sql" % self.nproc)
        script.write_text("\n".join(lines) + "\n", encoding="utf-8")
        errf = self.workdir / ("stderr%d.txt" % self.nproc)
        outf = self.workdir / ("stdout%d.txt" % self.nproc)
        env = dict(os.environ)
        env.setdefault("AWS_ACCESS_KEY_ID", "test")
        env.setdefault("AWS_SECRET_ACCESS_KEY", "test")
        env.setdefault("AWS_REGION", "us-east-1")
        cmd = [SQLITE3, "-batch", str(self.dbfile)]
        if shutil.which("stdbuf"):
            cmd = ["stdbuf", "-oL", "-eL"] + cmd
        with open(script, "rb") as fin, open(errf, "wb") as ferr, open(outf, "wb") as fout:
            p = subprocess.Popen(cmd, stdin=fin, stdout=subprocess.PIPE, stderr=ferr, cwd=str(ROOT), env=env)
            res = {}
            cur = None
            order = [bid for bid, _ in blocks]
            idx = {bid: i for i, bid in enumerate(order)}
            last_progress = time.time()
            buf = b""
            status = "ok"
            seen_end = False
            fd = p.stdout.fileno()
            while True:
                rl, _, _ = select.select([fd], [], [], 1.0)
                if rl:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    fout.write(chunk)
                    buf += chunk
                    last_progress = time.time()
                    *complete, buf = buf.split(b"\n")
                    for raw in complete:
                        line = raw.decode("utf-8", "replace")
                        if line.startswith(MARK + " "):
                            _, bid, side = line.split(" ", 2)
                            if bid == "END":
                                seen_end = True
                                cur = None
                                continue
                            cur = (bid, side)
                            res.setdefault(bid, {"_status": "ok"}).setdefault(side, {"rows": [], "err": []})
                        elif cur is not None:
                            res[cur[0]][cur[1]]["rows"].append(line)
                else:
                    now = time.time()
                    if now - last_progress > QTIMEOUT or now > self.deadline:
                        p.kill()
                        p.wait()
                        status = "hang"
                        break
            rc = p.wait()
        # stderr: map "near line N" to the block
        for eline in errf.read_text(encoding="utf-8", errors="replace").splitlines():
            m = re.search(r"near line (\d+):\s*(.*)", eline)
            if m and int(m.group(1)) in where:
                bid, side = where[int(m.group(1))]
                res.setdefault(bid, {"_status": "ok"}).setdefault(side, {"rows": [], "err": []})["err"].append(m.group(2))
            elif eline.strip() and not eline.startswith("  ") and "error here" not in eline and m is None:
                # an error outside any query (setup), keep it visible
                res.setdefault("_setup", []).append(eline)
        if status == "ok" and not seen_end:
            status = "crash (exit status %s)" % rc
        if status == "ok":
            return len(blocks), "ok", res
        # which block was in progress?
        if cur is None:
            started = [b for b in res if b in idx]
            k = max((idx[b] for b in started), default=-1) + 1
            k = min(k, len(blocks) - 1)
        else:
            k = idx[cur[0]]
        setup_err = res.get("_setup")
        if setup_err and k == 0 and not res.get(blocks[0][0]):
            raise HarnessError("sqlite3 setup failed: " + " | ".join(setup_err[:5]))
        return k, status, res


# ----------------------------------------------------------------------------------------
# Comparison and TAP output
# ----------------------------------------------------------------------------------------

def one_line(desc):
    """A test's name: desc on one line, at most 400 characters and "..."."""
    desc = desc.replace("\n", " ")
    return desc[:400] + "..." if len(desc) > 400 else desc


def fmt_rows(rows, k=4):
    out = [r for r in rows[:k]]
    if len(rows) > k:
        out.append("... (%d more)" % (len(rows) - k))
    return out


def compare(qd, r):
    """Returns (good, diag lines)."""
    st = r.get("_status", "ok")
    T = r.get("T", {"rows": [], "err": []})
    N = r.get("N", {"rows": [], "err": []})
    F = r.get("F", N)
    diag = []
    if st != "ok":
        return False, ["vtab query: %s" % st] + ["stderr: " + e for e in T["err"][:3]]
    if N["err"] or F["err"]:
        if T["err"] and N["err"] and T["err"][0] == N["err"][0]:
            return True, []     # both sides reject the query the same way
        return False, ["native side failed (harness bug?): %s" % (N["err"] + F["err"])[:2],
                       "vtab side: %s" % (T["err"][:1] or "no error")]
    if T["err"]:
        return False, ["vtab error: %s" % T["err"][0]]
    t, n, full = T["rows"], N["rows"], F["rows"]
    ct, cn = collections.Counter(t), collections.Counter(n)
    if qd["limit"] is not None and not qd["total"]:
        # only the count, membership, and (if ordered) the order-by columns are determined
        good = len(t) == len(n)
        if not good:
            diag.append("row count: expected %d, got %d" % (len(n), len(t)))
        extra = ct - collections.Counter(full)
        if extra:
            good = False
            diag.append("rows not in the unlimited native result:")
            diag += ["  + " + x for x in fmt_rows(sorted(extra.elements()))]
        k = qd.get("nkeycols", 0)
        if k and good:
            kt = [split_quote_row(x)[:k] for x in t]
            kn = [split_quote_row(x)[:k] for x in n]
            if kt != kn:
                good = False
                diag.append("ORDER BY column values differ: expected %s, got %s" % (kn[:6], kt[:6]))
        if not good:
            diag.append("expected (native, %d rows):" % len(n))
            diag += ["  " + x for x in fmt_rows(n)]
            diag.append("actual (vtab, %d rows):" % len(t))
            diag += ["  " + x for x in fmt_rows(t)]
        return good, diag
    if qd["order"] and qd["total"]:
        if t == n:
            return True, []
        if ct == cn:
            i = next(i for i in range(len(t)) if t[i] != n[i])
            return False, ["same rows, wrong order; first difference at row %d:" % (i + 1),
                           "  expected " + n[i], "  actual   " + t[i]]
    elif ct == cn:
        k = qd.get("nkeycols", 0)
        if k:
            kt = [split_quote_row(x)[:k] for x in t]
            kn = [split_quote_row(x)[:k] for x in n]
            if kt != kn:
                return False, ["ORDER BY column values out of order: expected %s, got %s" % (kn[:6], kt[:6])]
        return True, []
    missing = cn - ct
    extra = ct - cn
    diag.append("expected %d rows, got %d; %d missing, %d extra" % (len(n), len(t), sum(missing.values()), sum(extra.values())))
    diag += ["  - " + x for x in fmt_rows(sorted(missing.elements()))]
    diag += ["  + " + x for x in fmt_rows(sorted(extra.elements()))]
    return False, diag


# ----------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------

def probe_columns(workdir, ext):
    """Column names and declared types as the vtab reports them."""
    if SELFTEST:
        st = os.environ.get("DIFF_SELFTEST_SCORE_TYPE", "NUMERIC")
        return [(c, st if c in ("Score", "M2") else "TEXT") for c in KEYCOLS] + [("item", "TEXT")]
    script = (".load %s\n.mode quote\nCREATE VIRTUAL TABLE t USING dynamodb(table=%s);\n"
              "SELECT name, type, hidden FROM pragma_table_xinfo('t');\n" % (ext, TABLE))
    env = dict(os.environ)
    env.setdefault("AWS_ACCESS_KEY_ID", "test")
    env.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    env.setdefault("AWS_REGION", "us-east-1")
    p = subprocess.run([SQLITE3, "-batch", ":memory:"], input=script.encode(), capture_output=True,
                       cwd=str(ROOT), env=env, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    cols = []
    for line in out.splitlines():
        f = split_quote_row(line)
        if len(f) == 3 and f[0].startswith("'"):
            if f[2] != "0":
                continue
            name = f[0][1:-1].replace("''", "'")
            typ = f[1][1:-1].replace("''", "'") if f[1].startswith("'") else ""
            cols.append((name, typ))
    if not cols or err.strip():
        raise HarnessError("could not read the vtab's columns (rc=%s): %s %s" % (p.returncode, err.strip()[:500], out[:200]))
    return cols


def build_native(dbfile, cols, items):
    import sqlite3
    names = [c for c, _ in cols]
    missing = [c for c in KEYCOLS + ["item"] if c not in names]
    if missing:
        raise HarnessError("vtab lacks expected columns %s; it has %s" % (missing, cols))
    ddl = ", ".join('"%s" %s' % (c, t) for c, t in cols)
    con = sqlite3.connect(str(dbfile))
    con.execute("CREATE TABLE native (%s)" % ddl)
    order = KEYCOLS + ["item"]
    rows = []
    for it in items:
        d = dict(zip(order, native_row(it)))
        rows.append([d.get(c) for c in names])
    con.executemany("INSERT INTO native VALUES (%s)" % ",".join("?" * len(names)), rows)
    if SELFTEST:
        con.execute("CREATE TABLE t (%s)" % ddl)
        con.execute("INSERT INTO t SELECT * FROM native")
        if SELFTEST == "mutate":
            con.execute("DELETE FROM t WHERE rowid IN (SELECT rowid FROM t WHERE GSI1PK IS NOT NULL LIMIT 3)")
            con.execute("UPDATE t SET Score = Score + 1 WHERE rowid IN (SELECT rowid FROM t WHERE Score IS NOT NULL LIMIT 5)")
            con.execute("UPDATE t SET SK = upper(SK) WHERE PK = 'BIG#1' AND SK LIKE 'ITEM#0001%'")
    con.commit()
    con.close()


COST_CHECKS = []


def cost_checks(g):
    """(description, query, predicate on list of call names)"""
    small = [p for p in g.pks if 3 <= len(g.by_pk[p]) and p != "BIG#1"]
    r = random.Random(SEED + 1)
    p1, p2, p3, p4 = r.sample(small, 4)
    it = g.by_pk[p1][0]
    gk = next(k for k in sorted(g.by_g) if not k.startswith("HALF") and len(g.by_g[k]) > 3)
    ty = next(k for k in sorted(g.by_type) if k != "HALF" and len(g.by_type[k]) > 3)
    lsk_pk = next(p for p in small if p not in (p1, p2, p3, p4) and any("LSK" in x for x in g.by_pk[p]))
    its = r.sample(g.by_pk[p4], 2)

    def only(*names):
        return lambda calls: bool(calls) and all(any(c == n or c.startswith(n + " ") for n in names) for c in calls)

    def no_scan(calls):
        return bool(calls) and not any(c.startswith("Scan") for c in calls)

    return [
        ("pk = x AND sk = y -> GetItem",
         "SELECT PK, SK, item FROM t WHERE PK = %s AND SK = %s" % (lit(it["PK"]), lit(it["SK"])),
         lambda c: c == ["GetItem"]),
        ("pk = x -> Query, never Scan",
         "SELECT PK, SK FROM t WHERE PK = %s" % lit(p2),
         lambda c: bool(c) and all(x == "Query" for x in c)),
        ("pk = BIG (> 1 MB, 2 pages) -> Query, never Scan",
         "SELECT count(*) FROM t WHERE PK = 'BIG#1'",
         lambda c: c == ["Query"]),
        ("GSI1PK = x -> Query GSI1",
         "SELECT PK, SK, GSI1SK FROM t WHERE GSI1PK = %s" % lit(gk),
         lambda c: bool(c) and all(x.startswith("Query GSI1") for x in c)),
        ("GSI1PK = x AND GSI1SK > y -> Query GSI1",
         "SELECT PK, SK FROM t WHERE GSI1PK = %s AND GSI1SK > '2'" % lit(gk),
         lambda c: bool(c) and all(x.startswith("Query GSI1") for x in c)),
        ("Type = x AND Score > 0 (KEYS_ONLY GSI) -> Query ByScore (+ BatchGetItem/GetItem for item)",
         "SELECT PK, SK, Score, json_extract(item, '$.name') FROM t WHERE Type = %s AND Score > 0" % lit(ty),
         lambda c: bool(c) and c[0].startswith("Query ByScore") and no_scan(c)),
        ("PK = x AND LSK >= 'L' -> Query LSI1",
         "SELECT PK, SK, LSK FROM t WHERE PK = %s AND LSK >= 'L'" % lit(lsk_pk),
         lambda c: bool(c) and all(x.startswith("Query LSI1") for x in c)),
        ("PK IN (a, b) -> Query per key, never Scan",
         "SELECT PK, SK FROM t WHERE PK IN (%s, %s)" % (lit(p3), lit(p1)),
         lambda c: len(c) >= 2 and all(x == "Query" for x in c)),
        ("PK = x AND SK IN (a, b) -> BatchGetItem (or GetItems), never Scan/Query",
         "SELECT PK, SK FROM t WHERE PK = %s AND SK IN (%s, %s)" % (lit(p4), lit(its[0]["SK"]), lit(its[1]["SK"])),
         lambda c: bool(c) and all(x in ("BatchGetItem", "GetItem") for x in c)),
        ("PK = BIG ORDER BY SK DESC LIMIT 1 -> Query",
         "SELECT SK FROM t WHERE PK = 'BIG#1' ORDER BY SK DESC LIMIT 1",
         lambda c: c == ["Query"]),
    ]


def parse_calls(rows):
    if not rows:
        return None
    s = rows[0]
    if s.startswith("'") and s.endswith("'"):
        s = s[1:-1].replace("''", "'")
    if s in ("(none)", ""):
        return []
    # "Query x3, GetItem": each call once, as a list
    calls = []
    for x in s.split(","):
        x = x.strip()
        m = re.match(r"^(.*) x(\d+)$", x)
        if m:
            calls += [m.group(1)] * int(m.group(2))
        elif x:
            calls.append(x)
    return calls


def main():
    t0 = time.time()
    print("# diff: seed %d (DIFF_SEED), %d queries (DIFF_QUERIES), %s" %
          (SEED, NQ, "SELFTEST=%s" % SELFTEST if SELFTEST else "extension " + EXT), flush=True)
    rng = random.Random(SEED)
    items = gen_items(rng, NITEMS)
    g = Gen(rng, items)
    workdir = Path(tempfile.mkdtemp(prefix="ddbdiff."))
    res = None
    server = LocalServer()
    try:
        if not SELFTEST:
            so = Path(EXT + ".so") if Path(EXT + ".so").exists() else Path(EXT)
            if not so.is_file():
                raise HarnessError("extension %s(.so) not built" % EXT)
            # load a private copy: a rebuild during the run must not change the binary
            shutil.copy2(so, workdir / "dynamodb.so")
            server.ensure()
            res = ddb_resource()
        elif os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
            res = ddb_resource()
        if res is not None:
            create_and_load(res, items)
            log("loaded %d items into %s in %.1fs" % (len(items), TABLE, time.time() - t0))
        ext = str(workdir / "dynamodb")
        cols = probe_columns(workdir, ext)
        log("vtab columns: " + ", ".join("%s %s" % c for c in cols))
        dbfile = workdir / "diff.db"
        build_native(dbfile, cols, items)

        queries = fixed_queries(g) + [g.query() for _ in range(NQ)]
        costs = [] if SELFTEST else cost_checks(g)
        print("1..%d" % (len(costs) + len(queries)), flush=True)

        setup = [".bail off", ".mode quote", ".headers off"]
        if not SELFTEST:
            setup = [".load " + ext] + setup + [
                "CREATE VIRTUAL TABLE IF NOT EXISTS t USING dynamodb(table=%s);" % TABLE]
        blocks = []
        for i, (desc, sql, _) in enumerate(costs):
            blocks.append(("c%d" % i, [("R", "SELECT dynamodb_calls()"), ("T", sql), ("C", "SELECT dynamodb_calls()")]))
        for i, qd in enumerate(queries):
            if ONLY and (len(costs) + i + 1) not in ONLY:
                continue
            st = []
            if not SELFTEST:
                st.append(("E", "EXPLAIN QUERY PLAN " + render(qd, "t", False)))
            st.append(("T", render(qd, "t", bool(SELFTEST))))
            if not SELFTEST:
                st.append(("C", "SELECT dynamodb_calls()"))
            st.append(("N", render(qd, "native", True)))
            if qd["limit"] is not None and not qd["total"]:
                st.append(("F", render_full(qd, "native")))
            blocks.append(("q%d" % i, st))
        sh = ShellRun(workdir, dbfile, setup)
        t1 = time.time()
        out = sh.run(blocks)
        log("sqlite3 ran %d blocks in %.1fs (%d process%s)" % (len(blocks), time.time() - t1, sh.nproc,
                                                              "" if sh.nproc == 1 else "es"))
        if out.get("_setup"):
            log("sqlite3 said outside any query: " + " | ".join(out["_setup"][:5]))
            if any(".so" in e or "no such module" in e or "dynamodb" in e for e in out["_setup"]):
                raise HarnessError("the extension did not load: " + out["_setup"][0])

        tap = Tap()
        for i, (desc, sql, pred) in enumerate(costs):
            r = out.get("c%d" % i, {"_status": "missing"})
            calls = parse_calls(r.get("C", {}).get("rows"))
            T = r.get("T", {"err": []})
            good = r.get("_status") == "ok" and not T["err"] and calls is not None and pred(calls)
            diag = ["query: " + sql, "dynamodb_calls(): %s" % (calls if calls is not None else r.get("C"))]
            if r.get("_status") != "ok":
                diag.append("status: %s" % r.get("_status"))
            if T.get("err"):
                diag.append("error: %s" % T["err"][0])
            tap.ok(good, one_line("diff cost: " + desc), diag)
        for i, qd in enumerate(queries):
            if ONLY and (len(costs) + i + 1) not in ONLY:
                tap.skip("diff: " + describe(qd)[:200], "not in DIFF_ONLY")
                continue
            r = out.get("q%d" % i, {"_status": "missing"})
            good, diag = compare(qd, r)
            if not good:
                diag = diag + ["sql: " + render(qd, "t", False)]
                if r.get("E", {}).get("rows"):
                    diag.append("plan: " + " / ".join(x.strip() for x in r["E"]["rows"] if x.strip() != "QUERY PLAN"))
                if r.get("C", {}).get("rows"):
                    diag.append("calls: " + r["C"]["rows"][0])
            tap.ok(good, one_line("diff: " + describe(qd)), diag)
        nonempty = sum(1 for i in range(len(queries))
                       if out.get("q%d" % i, {}).get("N", {}).get("rows") and
                       out["q%d" % i]["N"]["rows"] not in (["0"], ["0,0"]))
        log("%d of %d queries have a non-empty native result" % (nonempty, len(queries)))
        log("diff: %d passed, %d failed (seed %d, %.1fs)" % (tap.n - tap.failed, tap.failed, SEED, time.time() - t0))
        return 0
    except HarnessError as e:
        print("Bail out! diff harness: %s" % e, flush=True)
        return 2
    finally:
        if res is not None and not KEEP:
            try:
                drop_table(res)
            except Exception as e:   # noqa
                log("could not drop %s: %s" % (TABLE, e))
        server.stop()
        if KEEP:
            log("kept work dir %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
