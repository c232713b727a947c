#!/usr/bin/env python3
"""The boto3 side of the transaction tests (test-sql/075_txn.test and
tests/suites/50-python.sh): an independent oracle, and the concurrent
writer.  Needs AWS_ENDPOINT_URL_DYNAMODB (see tests/harness/fixtures.py).

    check.py create TABLE [b]          (re)create TABLE: PK S, SK S (or B
                                       with `b`), GSI ByGrp (Grp S, Num N)
    check.py fill TABLE PK N           items PK/000..N-1: n=0, Grp=PK, Num=i
    check.py part TABLE PK             the partition PK, one line an item:
                                       SK (x'hex' unless printable ASCII
                                       text), then the item's other
                                       attributes as sorted JSON
    check.py get TABLE PK SK           one item as sorted JSON, or (no item)
    check.py meddle TABLE PK SK1 [SK2] another writer: SET other='boto' on
                                       PK/SK1, delete PK/SK2
    check.py setn TABLE PK SK N        another writer: SET n = N on PK/SK
    check.py wide TABLE PK SK N        put PK/SK with N attributes a0.. (n=0)
    check.py setpath TABLE PK SK PATH N  another writer: SET PATH = N on
                                       PK/SK (PATH: m.x, l[1], ...)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "harness"))
import fixtures  # noqa: E402


def plain(av):
    (t, v), = av.items()
    if t == "N":
        return float(v) if any(c in v for c in ".eE") else int(v)
    if t == "B":
        return bytes(v).hex()
    if t == "M":
        return {k: plain(x) for k, x in v.items()}
    if t == "L":
        return [plain(x) for x in v]
    if t in ("SS", "NS", "BS"):
        return sorted(v)
    if t == "NULL":
        return None
    return v


def sk_hex(av):
    """The sort key as text when it is printable ASCII, else x'hex'."""
    (t, v), = av.items()
    b = bytes(v) if t == "B" else v.encode("utf-8")
    if t == "S" and all(32 < c < 127 for c in b):
        return v
    return "x'%s'" % b.hex()


def rest(item):
    return json.dumps({k: plain(v) for k, v in item.items()
                       if k not in ("PK", "SK")}, sort_keys=True)


def main(argv):
    c = fixtures.connect()
    cmd, t = argv[0], argv[1]
    if cmd == "create":
        sk_type = "B" if len(argv) > 2 and argv[2] == "b" else "S"
        fixtures.drop_table(c, t)
        c.create_table(
            TableName=t, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": "PK", "AttributeType": "S"},
                {"AttributeName": "SK", "AttributeType": sk_type},
                {"AttributeName": "Grp", "AttributeType": "S"},
                {"AttributeName": "Num", "AttributeType": "N"}],
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                       {"AttributeName": "SK", "KeyType": "RANGE"}],
            GlobalSecondaryIndexes=[{
                "IndexName": "ByGrp",
                "KeySchema": [{"AttributeName": "Grp", "KeyType": "HASH"},
                              {"AttributeName": "Num", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}])
        fixtures.wait_active(c, t)
    elif cmd == "fill":
        pk, n = argv[2], int(argv[3])
        fixtures.put_items(c, t, [{"PK": pk, "SK": "%03d" % i, "n": 0,
                                   "Grp": pk, "Num": i} for i in range(n)])
    elif cmd == "part":
        pages = c.get_paginator("query").paginate(
            TableName=t, KeyConditionExpression="PK = :p",
            ExpressionAttributeValues={":p": {"S": argv[2]}},
            ConsistentRead=True)
        for page in pages:
            for it in page["Items"]:
                print(sk_hex(it["SK"]), rest(it))
    elif cmd == "get":
        r = c.get_item(TableName=t, ConsistentRead=True,
                       Key={"PK": {"S": argv[2]}, "SK": {"S": argv[3]}})
        print(rest(r["Item"]) if "Item" in r else "(no item)")
    elif cmd == "meddle":
        pk, sk1 = argv[2], argv[3]
        c.update_item(TableName=t, Key={"PK": {"S": pk}, "SK": {"S": sk1}},
                      UpdateExpression="SET #o = :o",
                      ExpressionAttributeNames={"#o": "other"},
                      ExpressionAttributeValues={":o": {"S": "boto"}})
        if len(argv) > 4:
            c.delete_item(TableName=t,
                          Key={"PK": {"S": pk}, "SK": {"S": argv[4]}})
    elif cmd == "setn":
        c.update_item(TableName=t,
                      Key={"PK": {"S": argv[2]}, "SK": {"S": argv[3]}},
                      UpdateExpression="SET n = :n",
                      ExpressionAttributeValues={":n": {"N": argv[4]}})
    elif cmd == "setpath":
        c.update_item(TableName=t,
                      Key={"PK": {"S": argv[2]}, "SK": {"S": argv[3]}},
                      UpdateExpression="SET %s = :n" % argv[4],
                      ExpressionAttributeValues={":n": {"N": argv[5]}})
    elif cmd == "wide":
        item = {"PK": {"S": argv[2]}, "SK": {"S": argv[3]}, "n": {"N": "0"}}
        for i in range(int(argv[4])):
            item["a%d" % i] = {"N": str(i)}
        c.put_item(TableName=t, Item=item)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
