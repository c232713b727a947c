"""Differential test, part two: the random SELECTs (every operator, NULLs, wrong
types, ORDER BY, LIMIT, joins) rendered for the virtual table and for the ordinary
table.  Used by run.py."""
import collections
from decimal import Decimal

from items import COLORS, INT64_MAX, INT64_MIN, KEYCOLS, dec_to_sql


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
        self.vals["M2"] = sorted(set(dec_to_sql(it["M2"]) for it in items if "M2" in it))
        self.by_pk = collections.defaultdict(list)
        self.by_g = collections.defaultdict(list)
        self.by_type = collections.defaultdict(list)
        self.by_m = collections.defaultdict(list)
        for it in items:
            if "M1" in it and "M2" in it:
                self.by_m[(it["M1"], dec_to_sql(it["M2"]))].append(it)
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
        if col in ("Score", "M2"):   # the N keys
            if x < 0.75 and pool:
                return r.choice(pool)
            # whole-number REALs near 2^63 (2^60, -2^63, 2^63) name their exact integers
            return r.choice([0, 10, 10.0, 1.5, -1, 0.1, 1e300, -1e300, INT64_MAX, INT64_MIN,
                             9.3e18, -9.3e18, 2 ** 53 + 1, 0.5, 99999, -0.0000001, 7.25,
                             float(2 ** 60), float(INT64_MIN), float(2 ** 63)])
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
        if col in ("Score", "M2"):
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
            ["pk", "pk_sk", "pk_in", "gsi", "score", "lsi", "scan", "or", "odd", "agg", "join",
             "multi"],
            [10, 22, 7, 12, 10, 7, 14, 8, 6, 4, 6, 10])[0]
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
        elif shape == "multi":
            # ByMulti (M1, M2 / M3, Score): = on both partition attributes,
            # then M3 and Score as a prefix, the last maybe a range; or a
            # shape DynamoDB would refuse as a key condition (a partition
            # attribute missing or a range, Score without M3, a range on M3
            # before Score =), which must read another way, same rows
            key = r.choice(sorted(self.by_m)) if self.by_m and r.random() < 0.9 \
                else (self.pick("M1"), self.pick("M2"))
            part = self.by_m.get(key, [])
            m3s = [it["M3"] for it in part if "M3" in it]
            scores = [dec_to_sql(it["Score"]) for it in part if "Score" in it]
            ps = [X("M1 = %s" % lit(key[0])), X("M2 = %s" % lit(key[1]))]
            kind = r.choice(["pk", "m3", "m3eq", "m3eq_score", "bad_pk", "gap", "range_eq"])
            if kind == "bad_pk":
                ps = [r.choice(ps), self.atom(r.choice(["M1", "M2"]))]
            if kind in ("m3", "range_eq"):
                ps.append(self.atom("M3", m3s or None))
            if kind in ("m3eq", "m3eq_score"):
                ps.append(X("M3 = %s" % lit(r.choice(m3s) if m3s else self.pick("M3"))))
            if kind in ("m3eq_score", "gap"):
                ps.append(self.atom("Score", scores or None))
            if kind == "range_eq":
                ps.append(X("Score = %s" % lit(r.choice(scores) if scores else self.pick("Score"))))
            if kind != "bad_pk" and r.random() < 0.2:   # M1 IN: a Query a value
                ps[0] = X("M1 IN (%s, %s)" % (lit(key[0]), lit(self.pick("M1"))))
            where = join(" AND ", ps)
            if r.random() < 0.15:
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
            elif shape == "multi":
                d = r.choice(["ASC", "DESC"])
                order = r.choice([[("M3", d), ("Score", d)], [("Score", d)], [("M3", d)]])
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
    # whole-number REALs near 2^63 are their exact integers (EDGE#N items)
    add(X("Type = 'EDGE' AND Score = 1152921504606846976.0"))
    add(X("Type = 'EDGE' AND Score <= -9223372036854775808.0"))
    add(X("Type = 'EDGE' AND Score > 1152921504606846975.0"), order=[("Score", "")])
    add(X("Type = 'EDGE' AND Score >= 9223372036854775807.0"))
    add(X("Score = 1152921504606846976.0"))
    add(X("Score IN (1152921504606846976, -9223372036854775808)"))
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
