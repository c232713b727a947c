#!/usr/bin/env python3
"""Tables with multi-attribute GSI keys (up to 4 partition and 4 sort
attributes, DynamoDB since November 2025), made with boto3, for
test-sql/101 to 104.  Needs AWS_ENDPOINT_URL_DYNAMODB (see
tests/harness/fixtures.py).

    setup.py TABLE      (re)create TABLE (id S) with three GSIs:
        G22  HASH ten S, grp N;  RANGE st S, ts N            (ALL)
        G44  HASH h1 S, h2 N, h3 B, h4 S;
             RANGE r1 N, r2 S, r3 B, r4 N                    (ALL)
        G12  HASH ten S;  RANGE st S, id S (the table's key)  (KEYS_ONLY)
      and its items (items()): 48 with every G22 attribute
      (ten t1/t2, grp 1/2, st a/b/c, ts 1..4), 4 that each lack one of
      them, 32 with every G44 attribute, 8 that each lack one of those;
      v (N) on every item.
    setup.py TABLE items    the items, one line of DynamoDB JSON each
    setup.py TABLE wide     (re)create TABLE (id S) with 9 GSIs of 4 + 4
                            attributes of their own (73 key attributes)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "harness"))
import fixtures  # noqa: E402

G22 = (["ten", "grp"], ["st", "ts"])
G44 = (["h1", "h2", "h3", "h4"], ["r1", "r2", "r3", "r4"])
G12 = (["ten"], ["st", "id"])
TYPES = {"id": "S", "ten": "S", "grp": "N", "st": "S", "ts": "N",
         "h1": "S", "h2": "N", "h3": "B", "h4": "S",
         "r1": "N", "r2": "S", "r3": "B", "r4": "N"}


def av(name, value):
    t = TYPES.get(name, "N" if isinstance(value, int) else "S")
    if t == "N":
        return {"N": str(value)}
    if t == "B":
        return {"B": value}
    return {"S": value}


def items():
    """Every item, as {name: python value} (B as bytes)."""
    out = []
    n = 0
    for ten in ("t1", "t2"):
        for grp in (1, 2):
            for st in ("a", "b", "c"):
                for ts in (1, 2, 3, 4):
                    out.append({"id": "i%02d" % n, "ten": ten, "grp": grp,
                                "st": st, "ts": ts, "v": n})
                    n += 1
    full = {"ten": "t1", "grp": 1, "st": "a", "ts": 2}
    for k, miss in enumerate(G22[0] + G22[1]):
        it = {"id": "m%d" % k, "v": 100 + k}
        it.update({a: b for a, b in full.items() if a != miss})
        out.append(it)
    n = 0
    for h2 in (1, 2):
        for r1 in (1, 2):
            for r2 in ("p", "q"):
                for r3 in (b"\x00", b"\x01"):
                    for r4 in (1, 2):
                        out.append({"id": "k%02d" % n, "h1": "x", "h2": h2,
                                    "h3": b"\x01", "h4": "y", "r1": r1,
                                    "r2": r2, "r3": r3, "r4": r4,
                                    "v": 200 + n})
                        n += 1
    full = {"h1": "x", "h2": 1, "h3": b"\x01", "h4": "y", "r1": 1,
            "r2": "p", "r3": b"\x00", "r4": 2}
    for k, miss in enumerate(G44[0] + G44[1]):
        it = {"id": "n%d" % k, "v": 300 + k}
        it.update({a: b for a, b in full.items() if a != miss})
        out.append(it)
    return out


def to_ddb(it):
    return {k: av(k, v) for k, v in it.items()}


def gsi(name, key, proj):
    return {"IndexName": name,
            "KeySchema": [{"AttributeName": a, "KeyType": "HASH"}
                          for a in key[0]] +
                         [{"AttributeName": a, "KeyType": "RANGE"}
                          for a in key[1]],
            "Projection": {"ProjectionType": proj}}


def make(c, name):
    fixtures.drop_table(c, name)
    used = sorted(set(G22[0] + G22[1] + G44[0] + G44[1] + G12[0] + G12[1]))
    c.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": TYPES[a]}
                              for a in used],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[gsi("G22", G22, "ALL"),
                                gsi("G44", G44, "ALL"),
                                gsi("G12", G12, "KEYS_ONLY")],
        BillingMode="PAY_PER_REQUEST")
    fixtures.wait_active(c, name)
    all_items = [to_ddb(it) for it in items()]
    for i in range(0, len(all_items), 25):
        c.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": it}} for it in all_items[i:i + 25]]})


def make_wide(c, name):
    fixtures.drop_table(c, name)
    attrs, gsis = ["id"], []
    for g in range(9):
        names = ["a%d_%d" % (g, k) for k in range(8)]
        attrs += names
        gsis.append({"IndexName": "Wide%d" % g,
                     "KeySchema": [{"AttributeName": n,
                                    "KeyType": "HASH" if k < 4 else "RANGE"}
                                   for k, n in enumerate(names)],
                     "Projection": {"ProjectionType": "KEYS_ONLY"}})
    c.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in attrs],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=gsis, BillingMode="PAY_PER_REQUEST")
    fixtures.wait_active(c, name)


def main():
    if len(sys.argv) == 3 and sys.argv[2] == "wide":
        make_wide(fixtures.connect(), sys.argv[1])
        return
    if len(sys.argv) == 3 and sys.argv[2] == "items":
        for it in items():
            print(json.dumps({k: (v.hex() if isinstance(v, bytes) else v)
                              for k, v in it.items()}, sort_keys=True))
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    make(fixtures.connect(), sys.argv[1])


if __name__ == "__main__":
    main()
