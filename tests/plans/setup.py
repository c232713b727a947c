#!/usr/bin/env python3
"""The multi-tenant table of test-sql/110..119 (plans that read no more
than they need), made with boto3.  Needs AWS_ENDPOINT_URL_DYNAMODB
(see tests/harness/fixtures.py).

    setup.py TABLE      (re)create TABLE (PK S, SK S) with 40 tenants of
                        100 items each (4,000): PK 'T#00'..'T#39'; SK
                        'META' (name 'tenant 00', plan 'gold'/'free'),
                        'INV#000'..'INV#059' (amount = i), 'ORD#00'..
                        'ORD#38' (qty = i); and on every item of tenant
                        t an attribute named 't<t>' ('t07'), so that the
                        names a sample finds say how many tenants it
                        reached; the GSI ByPlan (plan, SK): the 40 META
                        items, whose sort keys repeat
    setup.py TABLE big  (re)create TABLE (PK S, SK N): one partition 'P'
                        of 10,000 items of about 300 bytes (several pages)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "harness"))
import fixtures  # noqa: E402


def make(c, name, keys, gsi=None):
    """Table name of key attributes keys [(name, type)], and the GSI
    gsi = (index name, [(name, type)]) projecting ALL."""
    defs = dict(keys + (gsi[1] if gsi else []))
    extra = {}
    if gsi:
        extra["GlobalSecondaryIndexes"] = [{
            "IndexName": gsi[0],
            "KeySchema": [{"AttributeName": n,
                           "KeyType": "HASH" if i == 0 else "RANGE"}
                          for i, (n, _) in enumerate(gsi[1])],
            "Projection": {"ProjectionType": "ALL"}}]
    fixtures.drop_table(c, name)
    c.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in sorted(defs.items())],
        KeySchema=[{"AttributeName": n,
                    "KeyType": "HASH" if i == 0 else "RANGE"}
                   for i, (n, _) in enumerate(keys)],
        BillingMode="PAY_PER_REQUEST", **extra)
    fixtures.wait_active(c, name)


def put_all(c, name, items):
    for i in range(0, len(items), 25):
        req = {name: [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]}
        while req:
            req = c.batch_write_item(RequestItems=req).get(
                "UnprocessedItems") or None


def tenants():
    items = []
    for t in range(40):
        pk = {"S": "T#%02d" % t}
        extra = {"t%02d" % t: {"S": "y"}}
        items.append(dict(PK=pk, SK={"S": "META"},
                          name={"S": "tenant %02d" % t},
                          plan={"S": "gold" if t % 4 == 0 else "free"},
                          **extra))
        for i in range(60):
            items.append(dict(PK=pk, SK={"S": "INV#%03d" % i},
                              amount={"N": str(i)}, **extra))
        for i in range(39):
            items.append(dict(PK=pk, SK={"S": "ORD#%02d" % i},
                              qty={"N": str(i)}, **extra))
    return items


def main():
    t = sys.argv[1]
    c = fixtures.connect()
    if len(sys.argv) > 2 and sys.argv[2] == "big":
        make(c, t, [("PK", "S"), ("SK", "N")])
        put_all(c, t, [{"PK": {"S": "P"}, "SK": {"N": str(i)},
                        "pad": {"S": "%0280d" % i}} for i in range(10000)])
        return
    make(c, t, [("PK", "S"), ("SK", "S")],
         ("ByPlan", [("plan", "S"), ("SK", "S")]))
    put_all(c, t, tenants())


if __name__ == "__main__":
    main()
