"""Differential test, part one: the random items (keys of every shape, numbers at
DynamoDB's edges, sparse indexes) and their rows in the ordinary table.  Used by run.py."""
import base64
import json
from decimal import Decimal

KEYCOLS = ["PK", "SK", "GSI1PK", "GSI1SK", "Type", "Score", "LSK", "M1", "M2",
           "M3"]
TEXTKEYS = ["PK", "SK", "GSI1PK", "GSI1SK", "Type", "LSK", "M1", "M3"]
# GSI ByMulti, a multi-attribute key: partition M1 (S), M2 (N); sort M3 (S),
# Score (N)
MULTI = (["M1", "M2"], ["M3", "Score"])
M1_POOL = ["m#1", "m#2", "M#1", "é", "e", "日本", "🎉"]
M3_POOL = ["a", "b", "B", "ba", "é", "10", "9", "st#1", "st#2"]
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


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
            -(2 ** 53) - 1, 10 ** 18, 4611686018427387904, 9007199254740993, 2 ** 60]))
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
        # (docs/query-planning.md: "Indexes and items without all index
        # keys"; native_row models the rule), whichever path a query takes.
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
        # ByMulti: most items with M1, M2, M3 have every attribute of its
        # key (Score too); some lack one, and are not in the index
        r = rng.random()
        if r < 0.4:
            it["M1"] = rng.choice(M1_POOL)
            it["M2"] = Decimal(rng.choice([1, 2, 3, 10, -1]))
            it["M3"] = rng.choice(M3_POOL)
            if "Score" not in it and rng.random() < 0.8:
                it["Score"] = rand_decimal(rng)
            if rng.random() < 0.1:
                del it[rng.choice(["M1", "M2", "M3"])]
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
    # Scores at 2^60 and the ends of 64 bits, which whole-number REALs
    # name exactly (fixed_queries: Score = 1152921504606846976.0)
    for i, v in enumerate([2 ** 60, INT64_MIN, INT64_MIN + 1, INT64_MAX, 2 ** 53 + 1]):
        add({"PK": "EDGE#N", "SK": "S#%d" % i, "Type": "EDGE", "Score": Decimal(v)})
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


# An index's partition-key column shows NULL for an item not in the index:
# one without every other key attribute of it (ByMulti: M1 and M2 both).
GATES = {"GSI1PK": ["GSI1SK"], "Type": ["Score"],
         "M1": ["M2", "M3", "Score"], "M2": ["M1", "M3", "Score"]}


def native_row(item):
    row = []
    for c in KEYCOLS:
        v = item.get(c)
        if c in GATES and any(g not in item for g in GATES[c]):
            v = None
        if isinstance(v, Decimal):
            v = dec_to_sql(v)
        row.append(v)
    row.append(to_json(item))
    return row
