#!/usr/bin/env python3
"""Tables of test-sql/057_keys.test (keys = ?), made with boto3.  Needs
AWS_ENDPOINT_URL_DYNAMODB (see tests/harness/fixtures.py).

    setup.py TABLE      (re)create TABLE (PK S, SK N) with 300 items:
                        PK 'C#<i % 30>', SK i (i = 0..299), v = i;
                        TABLEh (PK S only): 'H#<i>' for i = 0..49;
                        TABLEb (PK B, SK S): PK bytes([i, 255]), SK 's',
                        for i = 0..9; TABLEk (partition key named keys,
                        S): 'K1'
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "harness"))
import fixtures  # noqa: E402


def make(c, name, keys):
    fixtures.drop_table(c, name)
    c.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in keys],
        KeySchema=[{"AttributeName": n,
                    "KeyType": "HASH" if i == 0 else "RANGE"}
                   for i, (n, _) in enumerate(keys)],
        BillingMode="PAY_PER_REQUEST")
    fixtures.wait_active(c, name)


def put_all(c, name, items):
    for i in range(0, len(items), 25):
        c.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": it}} for it in items[i:i + 25]]})


def main():
    t = sys.argv[1]
    c = fixtures.connect()
    make(c, t, [("PK", "S"), ("SK", "N")])
    put_all(c, t, [{"PK": {"S": "C#%d" % (i % 30)}, "SK": {"N": str(i)},
                    "v": {"N": str(i)}} for i in range(300)])
    make(c, t + "h", [("PK", "S")])
    put_all(c, t + "h", [{"PK": {"S": "H#%d" % i}, "v": {"N": str(i)}}
                         for i in range(50)])
    make(c, t + "b", [("PK", "B"), ("SK", "S")])
    put_all(c, t + "b", [{"PK": {"B": bytes([i, 255])}, "SK": {"S": "s"},
                          "v": {"N": str(i)}} for i in range(10)])
    make(c, t + "k", [("keys", "S")])
    put_all(c, t + "k", [{"keys": {"S": "K1"}, "v": {"N": "1"}}])


if __name__ == "__main__":
    main()
