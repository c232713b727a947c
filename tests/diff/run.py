#!/usr/bin/env python3
"""Differential test: the `dynamodb` virtual table against an ordinary SQLite table.

Creates the DynamoDB table DiffT (PK/SK, GSI GSI1, GSI ByScore KEYS_ONLY, LSI LSI1),
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
import base64
import collections
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
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

KEYCOLS = ["PK", "SK", "GSI1PK", "GSI1SK", "Type", "Score", "LSK"]
TEXTKEYS = ["PK", "SK", "GSI1PK", "GSI1SK", "Type", "LSK"]
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def log(msg):
    print("# " + msg.replace("\n", "\n# "), flush=True)


class HarnessError(Exception):
    pass


# ----------------------------------------------------------------------------------------
# Data generation
# ----------------------------------------------------------------------------------------

KEY_PREFIXES = [
    "ORDER#", "order#", "ORDER$", "Order#", "ORDERS#", "ORDER", "ORD", "ITEM#", "item#",
    "USER#", "user#", "café#", "Café#", "cafe#", "CAFÉ#", "naïve-", "Ωmega#", "ωmega#",
    "日本#", "日本語#", "中文", "🎉#", "🎉🎉", "émoji😀", "x_y#", "x%y#", "O'Brien#",
    "a b#", "#", "##", "A", "a", "Z", "z", "0", "5", "9", "10", "-1", "~", "ÿ",
    # U+E000..U+FFFF sort after emoji in UTF-16 but before them in UTF-8 (DynamoDB's order)
    "Ａ#", "ｦ", "ﬁ", "\ue000", "\uffee",
]
SUFFIX_CHARS = "abcXYZ019#$_%é日🎉 -Ａ\ue001"


def rand_suffix(rng):
    r = rng.random()
    if r < 0.45:
        return str(rng.randrange(0, 10 ** rng.randint(1, 4))).zfill(rng.choice([1, 3, 4]))
    if r < 0.8:
        return "".join(rng.choice(SUFFIX_CHARS) for _ in range(rng.randint(1, 6))).strip() or "q"
    if r < 0.9:
        return ""
    return rng.choice(["Ä", "ä", "é", "E", "e", "日本", "🎉", "😀x", "zz", "ZZ"])


def rand_key(rng, prefixes):
    s = rng.choice(prefixes) + rand_suffix(rng)
    return s if s else "k"


GSI1PK_POOL = ["G#1", "G#2", "g#1", "G#10", "G#1x", "GRP#é", "GRP#e", "GRP#日本", "G$1",
               "Gx", "🎉G", "5", "G#1'q"]
GSI1SK_PREFIXES = ["2024-01-0", "2024-1", "2024-10-", "STATUS#open#", "status#OPEN#",
                   "STATUS#closed#", "é", "E", "e", "日本", "🎉", "5", "10", "9", "#"]
TYPE_POOL = ["A", "a", "B", "alpha", "Alpha", "alpha#2", "Ü", "ü", "型", "🎉", "10"]
LSK_PREFIXES = ["L#", "l#", "L$", "lsk", "Ł", "日", "5", "10", "🎉", "L#é"]
SPECIAL_PKS = ["5", "42", "-1", "1.5", "1000.0", "10", "Z", "z", "ORDER#", "order#", "é", "e"]
SPECIAL_SKS = ["5", "10", "9", "100", "1.5", "-1", "ORDER#", "order#", "ORDER$", "Order#1",
               "ORDER#0001", "order#0001", "é", "É", "e", "E", "🎉", "日本", "a", "A", "#"]
WORDS = ["alpha", "Beta", "gamma", "déjà vu", "naïve", "日本語", "中文", "🎉 party", "O'Neil",
         "x,y", "100%", "a_b", "  spaced  ", "tab\there", "ÅÄÖ", "zz"]
COLORS = ["red", "Red", "blue", "grün", "紫", "🟢", ""]


def rand_decimal(rng):
    """A Decimal with at most 15 significant digits, sometimes in a non-canonical form."""
    r = rng.random()
    if r < 0.35:
        return Decimal(rng.randint(-20, 120))
    if r < 0.45:
        return Decimal(rng.choice([0, 10, 100, -10, 1, -1, 7]))
    if r < 0.55:
        return Decimal(rng.choice([
            INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 2 ** 53, 2 ** 53 + 1,
            -(2 ** 53) - 1, 10 ** 18, 4611686018427387904, 9007199254740993]))
    if r < 0.60:
        # DynamoDB's extremes: 1E-130 comes back written out in full
        return Decimal(rng.choice(["1E-130", "-1E-130", "9.99999999999999E+125", "-9.99999999999999E+125",
                                   "1E+125", "1.5E-100", "-2.5E-129", "123456789012345E-140"]))
    if r < 0.85:
        digits = rng.randint(1, 15)
        m = rng.randint(10 ** (digits - 1), 10 ** digits - 1) * rng.choice([1, -1])
        e = -rng.randint(1, min(digits + 3, 12))
        return Decimal(m).scaleb(e)
    # non-canonical spellings: DynamoDB normalizes them
    return Decimal(rng.choice(["10.0", "1.50", "1.23E+4", "0.0000001", "-0.50", "1E+2",
                               "0.1", "2.5", "-2.5", "3.14159265358979"]))


def canon(d):
    """DynamoDB Local normalizes top-level numbers but returns nested ones (in M/L) as
    written; real DynamoDB normalizes both. Nested numbers are therefore stored canonical."""
    s = dec_json(d)
    if len(s.lstrip("-").replace(".", "").lstrip("0")) > 38:
        return Decimal(s).normalize()   # 1E+125: 126 digits written out, too many for boto3
    return Decimal(s)


def dec_to_sql(d):
    """Value the vtab must produce for an N key: INTEGER if integral in int64, else REAL."""
    if d == d.to_integral_value():
        i = int(d)
        if INT64_MIN <= i <= INT64_MAX:
            return i
    return float(d)


def dec_json(d):
    s = format(d.normalize(), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s in ("-0", ""):
        s = "0"
    return s


def gen_items(rng, nitems):
    items = []
    seen = set()

    def add(item):
        k = (item["PK"], item["SK"])
        if k in seen:
            return False
        seen.add(k)
        items.append(item)
        return True

    def decorate(it, big=False):
        r = rng.random()
        if r < 0.45:
            it["GSI1PK"] = rng.choice(GSI1PK_POOL)
            it["GSI1SK"] = rand_key(rng, GSI1SK_PREFIXES)
        # An item with an index's partition key but not its sort key is
        # not in the index, and the partition-key column shows NULL for it
        # (README: "Indexes and items without all index keys"; native_row
        # models the rule), whichever path a query takes.
        elif r < 0.49:   # GSI1SK without GSI1PK
            it["GSI1SK"] = rand_key(rng, GSI1SK_PREFIXES)
        elif r < 0.53:   # GSI1PK without GSI1SK: not in GSI1
            it["GSI1PK"] = rng.choice(["HALF#1", "HALF#2"] + GSI1PK_POOL)
        r = rng.random()
        if r < 0.42:
            it["Type"] = rng.choice(TYPE_POOL)
            it["Score"] = rand_decimal(rng)
        elif r < 0.48:   # Score without Type
            it["Score"] = rand_decimal(rng)
        elif r < 0.52:   # Type without Score: not in ByScore
            it["Type"] = rng.choice(["HALF"] + TYPE_POOL)
        if rng.random() < 0.4:
            it["LSK"] = rand_key(rng, LSK_PREFIXES)
        # non-key attributes
        if rng.random() < 0.8:
            it["name"] = rng.choice(WORDS) + ("" if rng.random() < 0.5 else str(rng.randint(0, 99)))
        if rng.random() < 0.7:
            it["qty"] = rand_decimal(rng) if rng.random() < 0.5 else Decimal(rng.randint(0, 50))
        if rng.random() < 0.05:
            it["qty"] = Decimal("3.14159265358979323846")   # > 15 digits, non-key
        if rng.random() < 0.03:   # 38 digits, and one written out in full
            it["qty"] = Decimal(rng.choice(["12345678901234567890123456789012345678",
                                            "-1.2345678901234567890123456789012345678E-92"]))
        if rng.random() < 0.6:
            it["active"] = rng.random() < 0.5
        if rng.random() < 0.15:
            it["note"] = None
        if rng.random() < 0.5:
            m = {"color": rng.choice(COLORS)}
            if rng.random() < 0.6:
                m["size"] = canon(rand_decimal(rng))
            if rng.random() < 0.4:
                m["inner"] = {"flag": rng.random() < 0.5, "tags": [rng.choice(WORDS), Decimal(rng.randint(0, 9))]}
            it["meta"] = m
        if rng.random() < 0.4:
            it["list"] = [Decimal(rng.randint(-5, 5)), rng.choice(WORDS), rng.random() < 0.5][: rng.randint(1, 3)]
        if rng.random() < 0.25:
            it["tags"] = set(rng.sample(["t1", "t2", "T1", "é", "日本", "🎉", "x y"], rng.randint(1, 4)))
        if rng.random() < 0.15:
            it["nums"] = set(Decimal(x) for x in rng.sample(["1", "2.5", "-3", "100", "0.001"], rng.randint(1, 3)))
        if rng.random() < 0.15:
            it["blob"] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 12)))
        if big:
            it["pad"] = "".join(rng.choice("abcdefghij") for _ in range(2000))
        return it

    # one big partition (> 1 MB) so that Query and Scan paginate
    nbig = min(700, max(1, nitems // 4))
    i = 0
    while len(items) < nbig:
        sk = "ITEM#%05d" % i if rng.random() < 0.85 else rand_key(rng, KEY_PREFIXES)
        i += 1
        add(decorate({"PK": "BIG#1", "SK": sk}, big=True))
    # many smaller partitions
    pks = set(SPECIAL_PKS)
    while len(pks) < 90:
        pks.add(rand_key(rng, KEY_PREFIXES))
    pks = sorted(pks)
    rng.shuffle(pks)
    weights = [rng.choice([1, 1, 2, 3, 5, 8, 20, 40, 80]) for _ in pks]
    tries = 0
    while len(items) < nitems and tries < nitems * 20:
        tries += 1
        pk = rng.choices(pks, weights)[0]
        sk = rng.choice(SPECIAL_SKS) if rng.random() < 0.15 else rand_key(rng, KEY_PREFIXES)
        add(decorate({"PK": pk, "SK": sk}))
    return items


def to_json(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, Decimal):
        return dec_json(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (bytes, bytearray)):
        return json.dumps(base64.b64encode(bytes(v)).decode("ascii"))
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + to_json(x) for k, x in v.items()) + "}"
    if isinstance(v, (set, frozenset)):
        return "[" + ",".join(to_json(x) for x in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + ",".join(to_json(x) for x in v) + "]"
    raise TypeError(type(v))


# An index's partition-key column shows NULL for an item not in the index.
GATES = {"GSI1PK": "GSI1SK", "Type": "Score"}


def native_row(item):
    row = []
    for c in KEYCOLS:
        v = item.get(c)
        if c in GATES and GATES[c] not in item:
            v = None
        if isinstance(v, Decimal):
            v = dec_to_sql(v)
        row.append(v)
    row.append(to_json(item))
    return row


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
# SQL generation
# ----------------------------------------------------------------------------------------

def q(s):
    return "'" + s.replace("'", "''") + "'"


def lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        r = repr(v)
        return r if ("e" in r or "." in r or "inf" in r) else r + ".0"
    if isinstance(v, (bytes, bytearray)):
        return "X'" + bytes(v).hex() + "'"
    if isinstance(v, Decimal):
        return lit(dec_to_sql(v))
    return q(str(v))


class X:
    """An SQL fragment in two renderings: for the vtab (v) and for the native table (n).
    They differ only in begins_with(), which the native side spells out in plain SQL."""

    def __init__(self, v, n=None):
        self.v = v
        self.n = v if n is None else n

    def __add__(self, o):
        o = o if isinstance(o, X) else X(o)
        return X(self.v + o.v, self.n + o.n)

    def __radd__(self, o):
        return X(o) + self


def join(sep, parts):
    parts = [p if isinstance(p, X) else X(p) for p in parts]
    return X(sep.join(p.v for p in parts), sep.join(p.n for p in parts))


def begins_with(a, b):
    """begins_with(a, b): 1 if text(a) starts with text(b), 0 if not, NULL if either is NULL."""
    a = a if isinstance(a, X) else X(a)
    b = b if isinstance(b, X) else X(b)
    nat = ("(CASE WHEN ({a}) IS NULL OR ({b}) IS NULL THEN NULL ELSE "
           "substr(CAST(({a}) AS TEXT),1,length(CAST(({b}) AS TEXT)))=CAST(({b}) AS TEXT) END)")
    return X("begins_with(%s, %s)" % (a.v, b.v), nat.format(a=a.n, b=b.n))


class Gen:
    def __init__(self, rng, items):
        self.rng = rng
        self.items = items
        self.vals = {c: sorted(set(it[c] for it in items if c in it), key=lambda x: (str(type(x)), x))
                     for c in KEYCOLS}
        self.vals["Score"] = sorted(set(dec_to_sql(it["Score"]) for it in items if "Score" in it))
        self.by_pk = collections.defaultdict(list)
        self.by_g = collections.defaultdict(list)
        self.by_type = collections.defaultdict(list)
        for it in items:
            self.by_pk[it["PK"]].append(it)
            if "GSI1PK" in it:
                self.by_g[it["GSI1PK"]].append(it)
            if "Type" in it:
                self.by_type[it["Type"]].append(it)
        self.pks = sorted(self.by_pk)

    # ---- value pickers -----------------------------------------------------------------
    def mutate_text(self, s):
        r = self.rng
        k = r.random()
        if k < 0.3:
            return s + r.choice(["zz", "~", "0", "é", "#"])
        if k < 0.5:
            return s.swapcase() if s.swapcase() != s else s + "X"
        if k < 0.7 and len(s) > 1:
            return s[:-1]
        if k < 0.85:
            return r.choice(["nothing-here", "ZZZZ", "", "🎉🎉🎉", "日本語#999"])
        return s + " "

    def pick(self, col, pool=None):
        r = self.rng
        pool = pool if pool is not None else self.vals[col]
        x = r.random()
        if col == "Score":
            if x < 0.75 and pool:
                return r.choice(pool)
            return r.choice([0, 10, 10.0, 1.5, -1, 0.1, 1e300, -1e300, INT64_MAX, INT64_MIN,
                             9.3e18, -9.3e18, 2 ** 53 + 1, 0.5, 99999, -0.0000001, 7.25])
        if x < 0.72 and pool:
            return r.choice(pool)
        if pool:
            return self.mutate_text(r.choice(pool))
        return "nothing"

    def prefix_of(self, col, pool=None, for_like=False, for_glob=False):
        r = self.rng
        v = self.pick(col, pool)
        s = str(v) if not isinstance(v, str) else v
        if not s:
            s = "a"
        n = len(s)
        k = r.choice([1, 1, 2, 3, max(1, n // 2), max(1, n - 1), n, n])
        p = s[:k]
        if for_like and r.random() < 0.35:
            p = p.swapcase()
        if for_like and r.random() < 0.15 and len(p) > 1:
            i = r.randrange(len(p))
            p = p[:i] + "_" + p[i + 1:]
        if for_glob and r.random() < 0.15 and len(p) > 1:
            i = r.randrange(len(p))
            p = p[:i] + r.choice(["?", "[#$]", "[a-z]"]) + p[i + 1:]
        return p

    # ---- atoms -------------------------------------------------------------------------
    def wrong_type(self, col):
        r = self.rng
        if col == "Score":
            return r.choice(["'10'", "'abc'", "'-1'", "'1.5'", "'0'", "X'00'", "'9223372036854775807'",
                             "''", "'1e2'", "' 10'"])
        return r.choice(["5", "10", "9", "-1", "1.5", "1000.0", "1e3", "X'00'", "X'4f52'", "0", "42", "100"])

    def atom(self, col, pool=None, kinds=None):
        """One predicate on key column `col`."""
        r = self.rng
        L = lambda: lit(self.pick(col, pool))
        if kinds is None:
            kinds = ["=", "=", "<", "<=", ">", ">=", "between", "between", "in", "like", "like",
                     "glob", "bw", "bw", "!=", "isnull", "notnull", "nullcmp", "wrong", "wrong",
                     "notlike", "likeany", "bwodd", "twosided", "rangeprefix"]
        k = r.choice(kinds)
        if k in ("=", "<", "<=", ">", ">=", "!="):
            return X("%s %s %s" % (col, k, L()))
        if k == "between":
            a, b = self.pick(col, pool), self.pick(col, pool)
            if r.random() < 0.75:
                try:
                    a, b = sorted([a, b])
                except TypeError:
                    pass
            return X("%s %sBETWEEN %s AND %s" % (col, "NOT " if r.random() < 0.08 else "", lit(a), lit(b)))
        if k == "in":
            vs = [L() for _ in range(r.randint(1, 5))]
            if r.random() < 0.15:
                vs.append("NULL")
            if r.random() < 0.15:
                vs.append(vs[0])
            if r.random() < 0.05:
                vs = []
            return X("%s %sIN (%s)" % (col, "NOT " if r.random() < 0.08 else "", ", ".join(vs)))
        if k == "like":
            return X("%s LIKE %s" % (col, q(self.prefix_of(col, pool, for_like=True) + "%")))
        if k == "glob":
            return X("%s GLOB %s" % (col, q(self.prefix_of(col, pool, for_glob=True) + "*")))
        if k == "bw":
            return begins_with(X(col), X(q(self.prefix_of(col, pool))))
        if k == "isnull":
            return X("%s IS NULL" % col)
        if k == "notnull":
            return X("%s IS NOT NULL" % col)
        if k == "nullcmp":
            return X("%s %s NULL" % (col, r.choice(["=", "<", ">=", "!=", "IS", "IS NOT", "LIKE", "GLOB"])))
        if k == "wrong":
            return X("%s %s %s" % (col, r.choice(["=", "=", "<", ">", ">=", "<=", "!="]), self.wrong_type(col)))
        if k == "notlike":
            return X("%s NOT %s %s" % (col, r.choice(["LIKE", "GLOB"]), q(self.prefix_of(col, pool) + r.choice(["%", "*"]))))
        if k == "likeany":
            p = self.prefix_of(col, pool, for_like=True)
            pat = r.choice(["%" + p, p, "%" + p + "%", p + "%" + "0", p + "_%", p + "%%", p + "_"])
            op = r.choice(["LIKE", "LIKE", "GLOB"])
            if op == "GLOB":
                pat = pat.replace("%", "*").replace("_", "?")
            if r.random() < 0.15:
                return X("%s LIKE %s ESCAPE '!'" % (col, q(p.replace("!", "!!") + "!%%")))
            return X("%s %s %s" % (col, op, q(pat)))
        if k == "bwodd":
            c = r.choice([
                begins_with(X(col), X(q(""))),
                begins_with(X(col), X("NULL")),
                begins_with(X(col), X(r.choice(["1", "5", "-", "10", "1.", "9"]))),
                begins_with(X(q(str(self.pick(col, pool)))), X(col)),
                begins_with(X(col), X(q(self.prefix_of(col, pool)))) + X(" = 0"),
                X("NOT ") + begins_with(X(col), X(q(self.prefix_of(col, pool)))),
                begins_with(X(col), X(q(self.prefix_of(col, pool).swapcase()))),
                begins_with(X("lower(%s)" % col), X(q(self.prefix_of(col, pool).lower()))),
            ])
            return c
        if k == "twosided":
            a, b = self.pick(col, pool), self.pick(col, pool)
            try:
                a, b = sorted([a, b])
            except TypeError:
                pass
            return X("%s %s %s AND %s %s %s" % (col, r.choice([">", ">="]), lit(a), col, r.choice(["<", "<="]), lit(b)))
        if k == "rangeprefix":
            p = self.prefix_of(col, pool)
            other = r.choice([">", ">=", "<", "<="])
            comb = r.choice(["LIKE", "GLOB", "bw"])
            if comb == "bw":
                e = begins_with(X(col), X(q(p)))
            else:
                e = X("%s %s %s" % (col, comb, q(p + ("%" if comb == "LIKE" else "*"))))
            return e + X(" AND %s %s %s" % (col, other, L()))
        raise AssertionError(k)

    def extra_filter(self):
        r = self.rng
        return r.choice([
            X("json_extract(item, '$.qty') > %d" % r.randint(0, 20)),
            X("json_extract(item, '$.active') = %d" % r.randint(0, 1)),
            X("json_extract(item, '$.meta.color') = %s" % q(r.choice(COLORS))),
            X("json_type(item, '$.note') = 'null'"),
            X("item LIKE '%é%'"),
            X("GSI1PK IS NULL"), X("GSI1PK IS NOT NULL"), X("LSK IS NULL"), X("Score IS NOT NULL"),
            X("Type = %s" % lit(self.pick("Type"))),
            X("SK != %s" % lit(self.pick("SK"))),
            X("SK = PK"), X("GSI1SK > SK"), X("length(SK) > 5"),
            X("Score > %s" % lit(self.pick("Score"))),
            X("1"),
            X("0"),
        ])

    # ---- select lists ------------------------------------------------------------------
    def json_cols(self):
        r = self.rng
        pool = [
            "json_extract(item, '$.name')", "json_extract(item, '$.qty')", "json_extract(item, '$.active')",
            "json_type(item, '$.note')", "json_extract(item, '$.meta.color')", "json_extract(item, '$.meta.size')",
            "json_extract(item, '$.meta.inner.flag')", "json_extract(item, '$.meta.inner.tags[1]')",
            "json_extract(item, '$.list[0]')", "json_extract(item, '$.list[2]')", "json_extract(item, '$.blob')",
            "json_extract(item, '$.missing')", "json_array_length(item, '$.tags')", "json_type(item, '$.nums')",
            "(SELECT group_concat(value, '|') FROM (SELECT value FROM json_each(item, '$.tags') ORDER BY value))",
            "(SELECT group_concat(value, '|') FROM (SELECT value FROM json_each(item, '$.nums') ORDER BY value))",
            "json_extract(item, '$.PK') = PK", "json_extract(item, '$.Score')", "json_extract(item, '$.SK')",
            "json_valid(item)", "typeof(Score)", "typeof(SK)", "typeof(GSI1PK)",
        ]
        return r.sample(pool, r.randint(1, 3))

    # ---- joins and subqueries: the vtab gets its constraint values from another table ----
    def join_query(self):
        r = self.rng
        pks = [lit(self.pick("PK", self.pks)) for _ in range(r.randint(1, 3))]
        outer = r.choice([
            X("a.PK IN (%s)" % ", ".join(pks)),
            X("a.GSI1PK = %s" % lit(self.pick("GSI1PK"))),
            X("a.Type = %s AND a.Score > %s" % (lit(self.pick("Type")), lit(self.pick("Score")))),
            X("a.PK = %s AND a.SK > %s" % (pks[0], lit(self.pick("SK")))),
            X("a.LSK LIKE %s" % q(self.prefix_of("LSK") + "%")),
        ])
        on = r.choice([
            "b.PK = a.PK AND b.SK = a.SK",
            "b.PK = a.PK",
            "b.PK = a.PK AND b.SK > a.SK",
            "b.PK = a.PK AND b.SK >= a.GSI1SK",
            "b.GSI1PK = a.GSI1PK AND b.GSI1SK = a.GSI1SK",
            "b.GSI1PK = a.GSI1PK",
            "b.Type = a.Type AND b.Score = a.Score",
            "b.Type = a.Type AND b.Score < a.Score",
            "b.PK = a.PK AND b.LSK = a.LSK",
            "b.PK = a.SK",
            "b.PK = a.PK AND b.SK = a.LSK",
            "b.PK = a.PK AND b.SK IN (a.SK, a.LSK, a.GSI1SK)",
            "b.PK = a.PK AND b.SK LIKE a.GSI1SK || '%'",
            "b.PK = a.PK AND begins_with(b.SK, substr(a.SK, 1, 2))",
        ])
        kind = r.choice(["join", "join", "join", "left", "in", "exists", "scalar"])
        if kind in ("join", "left"):
            onx = X(on) if "begins_with" not in on else (
                X("b.PK = a.PK AND ") + begins_with(X("b.SK"), X("substr(a.SK, 1, 2)")))
            frm = "native a %sJOIN {T} b ON %s" % ("LEFT " if kind == "left" else "", onx.v)
            frm_n = "native a %sJOIN {T} b ON %s" % ("LEFT " if kind == "left" else "", onx.n)
            sel = [X(c) for c in ["a.PK", "a.SK", "b.PK", "b.SK", "b.GSI1SK", "b.Score", "b.LSK",
                                  "json_extract(b.item, '$.name')", "json_extract(b.item, '$.qty')"]]
            qd = {"where": outer, "select": sel, "order": [], "limit": None, "offset": None,
                  "total": False, "agg": False, "nkeycols": 0, "from": frm}
            if frm != frm_n:
                qd["from_n"] = frm_n
            if r.random() < 0.2:
                qd["limit"] = r.choice([1, 3, 10])
            return qd
        inner = on.replace("a.", "o.")
        if "begins_with" in inner:
            inner = "b.PK = o.PK"
        if kind == "in":
            col = r.choice(["PK", "GSI1PK", "SK"])
            w = X("%s IN (SELECT o.%s FROM native o WHERE %s)" % (col, col, outer.v.replace("a.", "o.")))
            if col == "PK" and r.random() < 0.5:
                w = w + " AND " + self.atom("SK")
            return {"where": w, "select": [X(c) for c in KEYCOLS] + [X("json_extract(item, '$.name')")],
                    "order": [], "limit": None, "offset": None, "total": False, "agg": False, "nkeycols": 0}
        if kind == "exists":
            w = X("EXISTS (SELECT 1 FROM {T} b WHERE %s)" % inner.replace("o.", "a."))
            return {"where": outer + " AND " + w, "select": [X("a.PK"), X("a.SK"), X("a.GSI1PK")],
                    "order": [], "limit": None, "offset": None, "total": False, "agg": False, "nkeycols": 0,
                    "from": "native a"}
        sub = X("(SELECT count(*) || ':' || ifnull(max(b.SK), '-') FROM {T} b WHERE %s)" % on)
        return {"where": outer, "select": [X("a.PK"), X("a.SK"), sub], "order": [], "limit": None,
                "offset": None, "total": False, "agg": False, "nkeycols": 0, "from": "native a"}

    # ---- whole queries -----------------------------------------------------------------
    def query(self):
        """Returns dict: where (X), order (list of (col, dir)), limit, offset, total (bool),
        select (list of X), count (bool)."""
        r = self.rng
        shape = r.choices(
            ["pk", "pk_sk", "pk_in", "gsi", "score", "lsi", "scan", "or", "odd", "agg", "join"],
            [10, 22, 7, 12, 10, 7, 14, 8, 6, 4, 6])[0]
        if shape == "join":
            return self.join_query()
        where = None
        order = []
        fixed_pk = False
        if shape == "pk":
            pk = self.pick("PK", self.pks)
            where = X("PK = %s" % lit(pk))
            fixed_pk = True
            if r.random() < 0.3:
                where = where + " AND " + self.extra_filter()
        elif shape == "pk_sk":
            pk = r.choice(self.pks) if r.random() < 0.9 else self.pick("PK")
            sks = [it["SK"] for it in self.by_pk.get(pk, [])]
            where = join(" AND ", [X("PK = %s" % lit(pk)), self.atom("SK", sks or None)])
            fixed_pk = True
            if r.random() < 0.15:
                where = where + " AND " + self.atom("SK", sks or None)
            if r.random() < 0.15:
                where = where + " AND " + self.extra_filter()
        elif shape == "pk_in":
            pks = [lit(self.pick("PK", self.pks)) for _ in range(r.randint(1, 4))]
            where = X("PK IN (%s)" % ", ".join(pks))
            if r.random() < 0.7:
                where = where + " AND " + self.atom("SK")
        elif shape == "gsi":
            g = self.pick("GSI1PK", self.vals["GSI1PK"])
            pool = [it["GSI1SK"] for it in self.by_g.get(g, []) if "GSI1SK" in it]
            where = X("GSI1PK = %s" % lit(g))
            if r.random() < 0.1:
                where = X("GSI1PK IN (%s, %s)" % (lit(g), lit(self.pick("GSI1PK"))))
            if r.random() < 0.75:
                where = where + " AND " + self.atom("GSI1SK", pool or None)
            if r.random() < 0.15:
                where = where + " AND " + self.extra_filter()
        elif shape == "score":
            ty = self.pick("Type", self.vals["Type"])
            pool = [dec_to_sql(it["Score"]) for it in self.by_type.get(ty, []) if "Score" in it]
            where = X("Type = %s" % lit(ty))
            if r.random() < 0.8:
                where = where + " AND " + self.atom("Score", pool or None)
            if r.random() < 0.1:
                where = where + " AND " + self.extra_filter()
        elif shape == "lsi":
            pk = r.choice(self.pks)
            pool = [it["LSK"] for it in self.by_pk[pk] if "LSK" in it]
            where = join(" AND ", [X("PK = %s" % lit(pk)), self.atom("LSK", pool or None)])
            fixed_pk = True
            if r.random() < 0.3:
                where = where + " AND " + self.atom("SK", [it["SK"] for it in self.by_pk[pk]])
        elif shape == "scan":
            col = r.choice(KEYCOLS)
            where = self.atom(col)
            if r.random() < 0.3:
                where = where + " AND " + self.atom(r.choice(KEYCOLS))
        elif shape == "or":
            a = r.choice([
                lambda: X("PK = %s" % lit(self.pick("PK", self.pks))),
                lambda: join(" AND ", [X("PK = %s" % lit(self.pick("PK", self.pks))), self.atom("SK")]),
                lambda: X("GSI1PK = %s" % lit(self.pick("GSI1PK"))),
                lambda: join(" AND ", [X("Type = %s" % lit(self.pick("Type"))), self.atom("Score")]),
                lambda: self.atom(r.choice(KEYCOLS)),
            ])
            xs = [a() for _ in range(r.randint(2, 3))]
            where = join(" OR ", [X("(") + x + X(")") for x in xs])
            if r.random() < 0.3:
                where = X("(") + where + X(") AND ") + self.atom(r.choice(KEYCOLS))
        elif shape == "odd":
            pk = r.choice(self.pks)
            where = r.choice([
                X("PK = %s AND PK = %s" % (lit(pk), lit(self.pick("PK", self.pks)))),
                X("PK = %s AND PK IN (%s, %s)" % (lit(pk), lit(pk), lit(self.pick("PK", self.pks)))),
                X("PK = NULL"), X("PK IS NULL"), X("PK IS NOT NULL AND SK = %s" % lit(self.pick("SK"))),
                X("PK IN ()"), X("PK = %s AND SK IN ()" % lit(pk)),
                X("PK = %s AND SK = NULL" % lit(pk)),
                X("PK = %s AND SK IS NULL" % lit(pk)),
                X("PK %s %s" % (r.choice(["=", ">", "<"]), self.wrong_type("PK"))),
                X("PK = %s AND SK %s %s" % (lit(pk), r.choice(["=", ">", "<", ">="]), self.wrong_type("SK"))),
                X("Type = %s AND Score %s %s" % (lit(self.pick("Type")), r.choice(["=", ">", "<", ">=", "<="]), self.wrong_type("Score"))),
                X("PK = %s || %s" % (lit(pk[:2]), lit(pk[2:]))),
                X("PK = %s AND SK > lower(%s)" % (lit(pk), lit(self.pick("SK")))),
                X("PK = %s COLLATE NOCASE" % lit(pk.swapcase())),
                X("PK = %s AND SK = %s COLLATE NOCASE" % (lit(pk), lit(self.pick("SK").swapcase()))),
                X("pk = %s AND sk >= %s" % (lit(pk), lit(self.pick("SK")))),
                X("%s = PK" % lit(pk)),
                X("%s < SK AND PK = %s" % (lit(self.pick("SK")), lit(pk))),
                X("+PK = %s" % lit(pk)),
                X("PK = %s AND NOT (SK > %s)" % (lit(pk), lit(self.pick("SK")))),
                X("PK = (SELECT %s)" % lit(pk)),
                X("GSI1PK = %s AND GSI1SK IS NULL" % lit(r.choice(["HALF#1", "HALF#2", self.pick("GSI1PK")]))),
                X("GSI1PK = %s" % lit(r.choice(["HALF#1", "HALF#2"]))),
                X("Type = 'HALF'"), X("Type = 'HALF' AND Score IS NULL"),
                X("Score IS NOT NULL AND Type IS NULL"),
                X("GSI1SK IS NOT NULL AND GSI1PK IS NULL"),
                X("PK = %s AND SK BETWEEN %s AND %s" % (lit(pk), lit("z"), lit("a"))),
                X("Type = %s AND Score BETWEEN %s AND %s" % (lit(self.pick("Type")), lit(self.pick("Score")), lit(self.pick("Score")))),
                X("PK = %s AND LSK IS NOT NULL" % lit(pk)),
                X("PK = %s AND LSK IS NULL" % lit(pk)),
            ])
            fixed_pk = where.v.startswith("PK = ") and " OR " not in where.v and "COLLATE" not in where.v \
                and "||" not in where.v and "(SELECT" not in where.v
        elif shape == "agg":
            pk = r.choice(self.pks)
            where = r.choice([X("1"), X("PK = %s" % lit(pk)), X("GSI1PK = %s" % lit(self.pick("GSI1PK"))),
                              X("Type = %s" % lit(self.pick("Type"))), self.atom(r.choice(KEYCOLS))])
            sel = [X("count(*)"), X("count(GSI1PK)"), X("count(DISTINCT Type)"), X("min(SK)"), X("max(SK)"),
                   X("min(Score)"), X("max(Score)"), X("sum(length(SK))"),
                   X("max(json_extract(item, '$.qty'))"), X("count(LSK)")]
            return {"where": where, "select": r.sample(sel, r.randint(1, 3)), "order": [], "limit": None,
                    "offset": None, "total": True, "agg": True}

        # ORDER BY / LIMIT
        lim = off = None
        if r.random() < 0.4:
            if fixed_pk and r.random() < 0.6:
                order = [("SK", r.choice(["ASC", "DESC", ""]))]
                if r.random() < 0.1:
                    order = [("SK COLLATE NOCASE", r.choice(["ASC", "DESC"])), ("SK", "")]
            elif shape == "gsi":
                order = [("GSI1SK", r.choice(["ASC", "DESC"]))]
            elif shape == "score":
                order = [("Score", r.choice(["ASC", "DESC"]))]
            elif shape == "lsi":
                order = [("LSK", r.choice(["ASC", "DESC"]))]
            else:
                order = [(r.choice(KEYCOLS), r.choice(["ASC", "DESC"]))]
            if not fixed_pk and r.random() < 0.5:
                order += [("PK", ""), ("SK", "")]
            elif fixed_pk and order[0][0] != "SK" and r.random() < 0.5:
                order += [("SK", "")]
        if r.random() < 0.3:
            lim = r.choice([0, 1, 1, 2, 3, 5, 10, 50, 200, -1])
            if r.random() < 0.4:
                off = r.choice([0, 1, 3, 20, 600, 699])
        ocols = [c for c, _ in order]
        bare = [c.split()[0] for c in ocols]
        total = ("SK" in bare) and ("PK" in bare or fixed_pk)
        # select list: the ORDER BY columns first (so their order can be checked),
        # then key columns and a few json_extract()s
        sel = []
        for c in ocols:
            if c.split()[0] not in [s.v for s in sel]:
                sel.append(X(c.split()[0]))
        rest = [c for c in KEYCOLS if c not in [s.v for s in sel]]
        if r.random() < 0.15:   # keys of one index only (KEYS_ONLY projections)
            rest = [c for c in r.choice([["Type", "Score", "PK", "SK"], ["GSI1PK", "GSI1SK", "PK", "SK"],
                                          ["PK", "SK"], ["PK", "SK", "LSK"]]) if c not in [s.v for s in sel]]
            extra = []
        else:
            extra = [X(c) for c in self.json_cols()]
            if r.random() < 0.1:
                extra.append(begins_with(X("SK"), X(q(self.prefix_of("SK")))))
        sel += [X(c) for c in rest] + extra
        return {"where": where, "select": sel, "order": order, "limit": lim, "offset": off,
                "total": total, "agg": False, "nkeycols": len(ocols)}


def fixed_queries(g):
    """Hand-written edge cases that always run."""
    pk_small = next(p for p in g.pks if len(g.by_pk[p]) >= 5 and p != "BIG#1")
    qs = []

    def add(where, order=(), limit=None, offset=None, total=None, sel=None, agg=False):
        order = list(order)
        bare = [c.split()[0] for c, _ in order]
        fixed_pk = where.v.startswith("PK = ") and " OR " not in where.v
        if total is None:
            total = agg or (("SK" in bare) and ("PK" in bare or fixed_pk))
        s = []
        for c in bare:
            if c not in [x.v for x in s]:
                s.append(X(c))
        s += [X(c) for c in KEYCOLS if c not in [x.v for x in s]]
        s += [X("json_extract(item, '$.name')"), X("json_extract(item, '$.qty')")]
        qs.append({"where": where, "select": sel or s, "order": order, "limit": limit, "offset": offset,
                   "total": total, "agg": agg, "nkeycols": len(order)})

    add(X("1"), sel=[X("count(*)")], agg=True)
    add(X("1"), sel=[X("count(*), count(GSI1PK), count(GSI1SK), count(Type), count(Score), count(LSK)")], agg=True)
    add(X("PK = 'BIG#1'"), sel=[X("count(*), min(SK), max(SK)")], agg=True)
    add(X("PK = 'BIG#1'"), order=[("SK", "DESC")], limit=3)
    add(X("PK = 'BIG#1'"), order=[("SK", "ASC")], limit=5, offset=690)
    add(X("PK = 'BIG#1' AND SK > 'ITEM#00400'"), order=[("SK", "")], limit=4, offset=250)
    add(X("PK = 'BIG#1' AND SK BETWEEN 'ITEM#00100' AND 'ITEM#00110'"), order=[("SK", "DESC")])
    add(X("PK = 'BIG#1' AND SK LIKE 'item#0069%'"))
    add(X("PK = %s" % lit(pk_small)), order=[("SK", "DESC")])
    add(X("SK = 5"))
    add(X("SK = '5'"))
    add(X("PK = 5"))
    add(X("PK = 1.5"))
    add(X("PK = 1000.0"))
    add(X("PK = 1e3"))
    add(X("PK = 42 AND SK > 0"))
    add(X("Score = '10'"))
    add(X("Score > 'abc'"))
    add(X("Score < 'abc'"))
    add(X("Score = 10.0"))
    add(X("Score = 9223372036854775807"))
    add(X("Score >= 9.3e18"))
    add(X("Score = 9007199254740993"))
    add(X("Score < X'00'"))
    add(X("Score LIKE '1%'"))
    add(X("Score GLOB '-*'"))
    add(begins_with(X("Score"), X("'1'")))
    add(X("Type = 'A' AND Score = '10'"))
    add(X("Type = 'A' AND Score > 'abc'"))
    add(X("Type = 'A' AND Score < 'abc'"))
    add(X("Type = 'A' AND Score > 5"), order=[("Score", "DESC"), ("PK", ""), ("SK", "")])
    add(X("Type = 'a' AND Score BETWEEN -1 AND 1.5"))
    add(X("Type = 'HALF'"))
    add(X("GSI1PK = 'HALF#1'"))
    add(X("GSI1PK = 'G#1'"), order=[("GSI1SK", "")])
    add(X("GSI1PK = 'G#1' AND GSI1SK LIKE 'status#open#%'"))
    add(X("GSI1PK = 'G#1' AND GSI1SK GLOB 'STATUS#open#*'"))
    add(X("GSI1PK = 'G#1'") + " AND " + begins_with(X("GSI1SK"), X("'2024-1'")))
    add(X("GSI1PK IS NULL"), sel=[X("count(*)")], agg=True)
    add(X("GSI1PK IS NOT NULL AND GSI1SK IS NULL"))
    add(X("SK LIKE 'order#%'"))
    add(X("SK LIKE 'ORDER_%'"))
    add(X("SK GLOB 'ORDER[#$]*'"))
    add(X("SK LIKE 'é%'"))
    add(X("SK LIKE 'É%'"))
    add(X("PK LIKE 'café#%'"))
    add(X("PK LIKE 'CAFÉ#%'"))
    add(X("PK LIKE 'x_y#%'"))
    add(X("PK LIKE 'x%y#%'"))
    add(X("PK LIKE 'x!%y#%' ESCAPE '!'"))
    add(begins_with(X("SK"), X("''")), sel=[X("count(*)")], agg=True)
    add(begins_with(X("SK"), X("NULL")), sel=[X("count(*)")], agg=True)
    add(begins_with(X("SK"), X("5")))
    add(X("PK = %s AND " % lit(pk_small)) + begins_with(X("SK"), X("''")))
    add(X("PK = 'BIG#1' AND ") + begins_with(X("SK"), X("'ITEM#0001'")), order=[("SK", "DESC")])
    add(X("PK IN ()"))
    add(X("PK = NULL"))
    add(X("PK IN ('5', '42', NULL, '5')"))
    add(X("PK = '5' AND SK IN ('5', 5, '10', NULL)"))
    add(X("SK > X'00'"), sel=[X("count(*)")], agg=True)
    add(X("SK < X'00'"), sel=[X("count(*)")], agg=True)
    add(X("PK = %s AND SK < X'00'" % lit(pk_small)))
    add(X("PK = %s AND SK > 5" % lit(pk_small)))
    add(X("PK = 'O''Brien#' OR PK LIKE 'O''Brien#%'"))
    add(X("PK = %s AND LSK >= 'L#'" % lit(pk_small)), order=[("LSK", "DESC"), ("SK", "")])
    add(X("PK = 'BIG#1' AND LSK LIKE 'l#%'"), order=[("LSK", ""), ("SK", "")])
    return qs


def render(qd, table, native):
    sel = ", ".join((s.n if native else s.v) for s in qd["select"])
    w = qd["where"].n if native else qd["where"].v
    frm = qd.get("from_n", qd.get("from", "{T}")) if native else qd.get("from", "{T}")
    sql = "SELECT %s FROM %s WHERE %s" % (sel, frm, w)
    sql = sql.replace("{T}", table)
    if qd["order"]:
        sql += " ORDER BY " + ", ".join((c + (" " + d if d else "")) for c, d in qd["order"])
    if qd["limit"] is not None:
        sql += " LIMIT %d" % qd["limit"]
        if qd["offset"] is not None:
            sql += " OFFSET %d" % qd["offset"]
    return sql


def render_full(qd, table):
    d = dict(qd, limit=None, offset=None)
    return render(d, table, True)


def describe(qd):
    s = qd["where"].v
    if qd["order"]:
        s += " ORDER BY " + ", ".join((c + (" " + d if d else "")) for c, d in qd["order"])
    if qd["limit"] is not None:
        s += " LIMIT %d" % qd["limit"]
        if qd["offset"] is not None:
            s += " OFFSET %d" % qd["offset"]
    if qd.get("agg"):
        s = "[" + ", ".join(x.v for x in qd["select"]) + "] " + s
    if qd.get("from"):
        s = "[FROM %s] %s" % (qd["from"].replace("{T}", "t"), s)
        if any("{T}" in x.v for x in qd["select"]):
            s = "[SELECT %s] %s" % (", ".join(x.v for x in qd["select"] if "{T}" in x.v), s)
    return s.replace("{T}", "t")


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

class Tap:
    def __init__(self):
        self.n = 0
        self.failed = []
        self.passed = 0

    def ok(self, good, desc, diag=None):
        self.n += 1
        desc = desc.replace("\n", " ")
        if len(desc) > 400:
            desc = desc[:400] + "..."
        print("%s %d - %s" % ("ok" if good else "not ok", self.n, desc), flush=True)
        if good:
            self.passed += 1
        else:
            self.failed.append((self.n, desc))
            if diag:
                for l in diag:
                    print("#   " + l[:300], flush=True)


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
        return [(c, st if c == "Score" else "TEXT") for c in KEYCOLS] + [("item", "TEXT")]
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
    return [x.strip() for x in s.split(",") if x.strip()]


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
            tap.ok(good, "diff cost: " + desc, diag)
        for i, qd in enumerate(queries):
            if ONLY and (len(costs) + i + 1) not in ONLY:
                tap.n += 1
                print("ok %d - diff: %s # SKIP not in DIFF_ONLY" % (tap.n, describe(qd)[:200]))
                continue
            r = out.get("q%d" % i, {"_status": "missing"})
            good, diag = compare(qd, r)
            if not good:
                diag = diag + ["sql: " + render(qd, "t", False)]
                if r.get("E", {}).get("rows"):
                    diag.append("plan: " + " / ".join(x.strip() for x in r["E"]["rows"] if x.strip() != "QUERY PLAN"))
                if r.get("C", {}).get("rows"):
                    diag.append("calls: " + r["C"]["rows"][0])
            tap.ok(good, "diff: " + describe(qd), diag)
        nonempty = sum(1 for i in range(len(queries))
                       if out.get("q%d" % i, {}).get("N", {}).get("rows") and
                       out["q%d" % i]["N"]["rows"] not in (["0"], ["0,0"]))
        log("%d of %d queries have a non-empty native result" % (nonempty, len(queries)))
        log("diff: %d passed, %d failed (seed %d, %.1fs)" % (tap.passed, len(tap.failed), SEED, time.time() - t0))
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
