#!/usr/bin/env python3
"""boto3 side of tests/suites/25-trust-fork.sh (python3 with boto3).

    oracle.py setup TABLE          create TABLE (PK, SK strings) with items
                                   F/k000..k199 (v = SK) and P/p000..p129
                                   (v = SK, 60 KB each: a Query of P is 8
                                   pages)
    oracle.py written TABLE FILE   every SK listed in FILE (one a line) is an
                                   item W/SK whose v is SK; prints
                                   "written: N of N"
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "harness"))
import fixtures  # noqa: E402


def main():
    cmd, table = sys.argv[1], sys.argv[2]
    c = fixtures.connect()
    if cmd == "setup":
        fixtures.create_table(c, table, "PK", "SK")
        items = [{"PK": "F", "SK": "k%03d" % i, "v": "k%03d" % i}
                 for i in range(200)]
        items += [{"PK": "P", "SK": "p%03d" % i, "v": "p%03d" % i,
                   "pad": "x" * 60000} for i in range(130)]
        fixtures.put_items(c, table, items)
        return 0
    if cmd == "written":
        sks = [l.strip() for l in open(sys.argv[3]) if l.strip()]
        ok = 0
        for sk in sks:
            r = c.get_item(TableName=table, ConsistentRead=True,
                           Key={"PK": {"S": "W"}, "SK": {"S": sk}})
            it = r.get("Item")
            if it and it.get("v", {}).get("S") == sk:
                ok += 1
            else:
                print("missing: %s" % sk)
        print("written: %d of %d" % (ok, len(sks)))
        return 0 if ok == len(sks) else 1
    raise SystemExit("usage: see the docstring")


if __name__ == "__main__":
    sys.exit(main())
