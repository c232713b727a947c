#!/usr/bin/env python3
"""Every legal and illegal WHERE shape on the multi-attribute indexes of
tests/multikey/setup.py, as SQL for the sqlite3 shell (test-sql/102).

    shapes.py VTAB       print the SQL: for each shape, its rows through
                         the virtual table VTAB as planned, through VTAB
                         forced to a Scan (every column written +col), and
                         through a native table o holding the same items as
                         the virtual table shows them (an index's partition
                         attribute NULL where the item lacks another key
                         attribute of that index); the calls each planned
                         SELECT made (dynamodb_calls()); its count(*) as
                         planned and on o; then one summary line per index
                         and the shapes that went wrong.

A shape is legal for an index when it has = on every partition attribute
(the first may be IN: a Query a value) and its sort attributes are a
left-to-right prefix of =, at most the last one a range: then the SELECT
must cost one Query of such an index; when no index allows it, no Query of
a multi-attribute index.  Rows must be the same three ways, and the
count(*) the same both ways.
"""
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import setup  # noqa: E402

INDEXES = {"G22": setup.G22, "G44": setup.G44, "G12": setup.G12}
COLS = ["id", "ten", "st", "grp", "ts", "h1", "h2", "h3", "h4",
        "r1", "r2", "r3", "r4"]
# a value of each attribute that some items have (most shapes match rows)
VAL = {"ten": "t1", "grp": 2, "st": "b", "ts": 3, "h1": "x", "h2": 1,
       "h3": b"\x01", "h4": "y", "r1": 1, "r2": "q", "r3": b"\x00", "r4": 2,
       "id": "i05"}
HI = {"st": "c", "ts": 4, "r1": 2, "r2": "q", "r3": b"\x01", "r4": 2,
      "ten": "t2", "grp": 2, "h2": 2, "id": "i30"}


def lit(v):
    if isinstance(v, bytes):
        return "x'%s'" % v.hex()
    if isinstance(v, int):
        return str(v)
    return "'%s'" % v


def shown(item):
    """The item's columns as the virtual table shows them: a partition
    attribute of an index is NULL when the item lacks another of that
    index's key attributes (that is not the table's key, id)."""
    out = {c: item.get(c) for c in COLS}
    for pk, sk in INDEXES.values():
        need = [a for a in pk + sk if a != "id"]
        if any(a not in item for a in need):
            for a in pk:
                if a != "id":
                    out[a] = None
    return out


def cond(a, op, plus):
    col = ("+" if plus else "") + a
    v = VAL[a]
    if op == "=":
        return "%s = %s" % (col, lit(v))
    if op in (">", ">=", "<", "<="):
        return "%s %s %s" % (col, op, lit(v))
    if op == "between":
        return "%s BETWEEN %s AND %s" % (col, lit(v), lit(HI.get(a, v)))
    if op == "begins":
        return "begins_with(%s, %s)" % (col, lit(v[:1]))
    if op == "like":
        return "%s LIKE %s" % (col, lit(v[:1] + "%"))
    if op == "glob":
        return "%s GLOB %s" % (col, lit(v[:1] + "*"))
    if op == "isnull":
        return "%s IS NULL" % col
    if op == "notnull":
        return "%s IS NOT NULL" % col
    if op == "ne":
        return "%s != %s" % (col, lit(v))
    if op == "in":
        return "%s IN (%s, %s)" % (col, lit(v), lit(HI.get(a, v)))
    if op == "nocase":
        return "%s = %s COLLATE NOCASE" % (col, lit(v))
    raise ValueError(op)


RANGES = ["=", ">", ">=", "<", "<=", "between", "begins", "like", "glob"]


def range_ops(a):
    s = setup.TYPES[a] == "S"
    return [o for o in RANGES
            if o != "=" and (s or o not in ("begins", "like", "glob"))]


def legal(shape, key):
    """Does shape ({attr: op}) allow a Query of the index key?"""
    pk, sk = key
    if shape.get(pk[0]) not in ("=", "in") or \
            any(shape.get(a) != "=" for a in pk[1:]):
        return False  # (the first may be IN: a Query a value)
    if any(shape.get(a) == "isnull" for a in sk):
        return False  # no item of the index lacks one
    i = 0
    while i < len(sk) and shape.get(sk[i]) == "=":
        i += 1
    if i < len(sk) and shape.get(sk[i]) in range_ops(sk[i]):
        i += 1
    # any other condition on a later sort attribute stays a filter: legal
    return True


def shapes_of(key):
    pk, sk = key
    out = []
    eq = {a: "=" for a in pk}
    # legal: every prefix, each range on the next attribute
    for k in range(len(sk) + 1):
        base = dict(eq, **{a: "=" for a in sk[:k]})
        out.append(dict(base))
        if k < len(sk):
            for o in range_ops(sk[k]):
                out.append(dict(base, **{sk[k]: o}))
    # a partition attribute missing, as a range, IN, != or NOCASE
    for a in pk:
        out.append({b: "=" for b in pk if b != a})
        for o in (">", "in", "ne", "nocase", "isnull", "notnull"):
            out.append(dict(eq, **{a: o}))
    # sort attributes: a gap, a range before an =, two ranges, NULL tests
    for i, j in itertools.combinations(range(len(sk)), 2):
        out.append(dict(eq, **{sk[j]: "="}))                     # gap
        out.append(dict(eq, **{sk[i]: ">", sk[j]: "="}))          # range, =
        out.append(dict(eq, **{sk[i]: ">=", sk[j]: "<="}))        # 2 ranges
    for a in sk:
        for o in ("isnull", "notnull", "in", "ne", "nocase"):
            out.append(dict(eq, **{a: o}))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    vt = sys.argv[1]
    print("CREATE TEMP TABLE o(%s);" % ", ".join(
        "%s %s" % (c, {"S": "TEXT", "N": "NUMERIC", "B": "BLOB"}[
            setup.TYPES[c]]) for c in COLS))
    for it in setup.items():
        row = shown(it)
        print("INSERT INTO o VALUES(%s);" % ", ".join(
            "NULL" if row[c] is None else lit(row[c]) for c in COLS))
    print("CREATE TEMP TABLE r(n INTEGER PRIMARY KEY, idx, want, shape, "
          "a, b, c, calls, scan_calls, d, e, count_calls);")
    print("SELECT dynamodb_calls() IS NULL;")  # a reset; prints 0
    seen = set()
    n = 0
    for name, key in INDEXES.items():
        for shape in shapes_of(key):
            w = " AND ".join(cond(a, o, False) for a, o in sorted(shape.items()))
            if not w or w in seen:
                continue
            seen.add(w)
            wplus = " AND ".join(cond(a, o, True)
                                 for a, o in sorted(shape.items()))
            want = ",".join(sorted(x for x, k in INDEXES.items()
                                   if legal(shape, k))) or "-"
            n += 1
            q = "(SELECT group_concat(id) FROM (SELECT id FROM %s WHERE %s " \
                "ORDER BY id))"
            print("INSERT INTO r(n, idx, want, shape, a) VALUES(%d, '%s', "
                  "'%s', %s, %s);" % (n, name, want, lit(w.replace("'", "")),
                                      q % (vt, w)))
            print("UPDATE r SET calls = dynamodb_calls() WHERE n = %d;" % n)
            print("UPDATE r SET b = %s, c = %s WHERE n = %d;" % (
                q % (vt, wplus), q % ("o", w), n))
            print("UPDATE r SET scan_calls = dynamodb_calls() WHERE n = %d;"
                  % n)
            # count(*) as planned (Select=COUNT where every column used is
            # fixed by an = of the call) and on the native table
            cq = "(SELECT count(*) FROM %s WHERE %s)"
            print("UPDATE r SET d = %s, e = %s WHERE n = %d;" % (
                cq % (vt, w), cq % ("o", w), n))
            print("UPDATE r SET count_calls = dynamodb_calls() WHERE n = %d;"
                  % n)
    # summary: shapes; legal ones; those that cost one Query of a legal
    # index (or a cheaper keyed call: GetItem, BatchGetItem, none), or, with
    # none legal, no Query of a multi-attribute index; rows that differ;
    # forced Scans that were no single Scan
    ok = """(CASE WHEN want = '-' THEN calls NOT LIKE '%Query G%'
         ELSE (calls LIKE 'Query G%' AND instr(want, substr(calls, 7, 3))
               AND calls NOT LIKE '%Scan%'
               AND (calls NOT LIKE 'Query G__ x%'
                    OR (shape LIKE '% IN (%' AND calls LIKE 'Query G__ x2%')))
           OR (calls NOT LIKE '%Scan%' AND calls NOT LIKE '%Query%') END)"""
    print("SELECT dynamodb_calls() IS NULL;")
    print("SELECT idx, count(*), sum(want != '-'), sum(" + ok + "),\n"
          "       sum(a IS NOT b OR a IS NOT c OR d IS NOT e),\n"
          "       sum(scan_calls != 'Scan')\n"
          "  FROM r GROUP BY idx ORDER BY idx;")
    print("SELECT 'bad: ' || shape || ' want ' || want || ' got ' || calls\n"
          "       || ' rows ' || ifnull(a, '-') || ' / ' || ifnull(b, '-')\n"
          "       || ' / ' || ifnull(c, '-')\n"
          "  FROM r WHERE a IS NOT b OR a IS NOT c OR d IS NOT e\n"
          "    OR scan_calls != 'Scan'\n"
          "    OR NOT " + ok + " LIMIT 20;")


if __name__ == "__main__":
    main()
