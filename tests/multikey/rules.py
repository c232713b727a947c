#!/usr/bin/env python3
"""The key conditions a server takes on a multi-attribute GSI key, asked
with boto3 (the oracle of test-sql/102): on TABLE of setup.py, index G22
(HASH ten S, grp N; RANGE st S, ts N); and two FilterExpressions on its
key attributes.  Prints one line a condition: "ok"
and the ids it found, or "refused" (the server's words differ: not
printed).  Needs AWS_ENDPOINT_URL_DYNAMODB (tests/harness/fixtures.py).

    rules.py TABLE
"""
import os
import sys

from botocore.exceptions import ClientError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "harness"))
import fixtures  # noqa: E402

VALUES = {":a": {"S": "t1"}, ":b": {"N": "2"}, ":c": {"S": "b"},
          ":d": {"N": "2"}, ":e": {"N": "3"}, ":p": {"S": "b"}}
CONDITIONS = [
    "ten = :a AND grp = :b",
    "ten = :a",
    "grp = :b",
    "ten = :a AND grp > :b",
    "ten = :a AND grp = :b AND st = :c",
    "ten = :a AND grp = :b AND st = :c AND ts = :d",
    "ten = :a AND grp = :b AND st = :c AND ts > :d",
    "ten = :a AND grp = :b AND st = :c AND ts BETWEEN :d AND :e",
    "ten = :a AND grp = :b AND st > :c",
    "ten = :a AND grp = :b AND begins_with(st, :p)",
    "ten = :a AND grp = :b AND ts = :d",
    "ten = :a AND grp = :b AND st > :c AND ts = :d",
    "ten = :a AND grp = :b AND st < :c AND ts < :d",
    "grp = :b AND ten = :a AND ts = :d AND st = :c",
    "ten = :a AND grp = :b AND st = :c AND ts = :d AND ts = :e",
    # a FilterExpression (after "|") on a key attribute of the index read
    "ten = :a AND grp = :b | ts > :d",
    "ten = :a AND grp = :b AND st = :c | ts > :d",
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    c = fixtures.connect()
    for kc in CONDITIONS:
        vals = {k: v for k, v in VALUES.items() if k in kc}
        args = dict(TableName=sys.argv[1], IndexName="G22",
                    KeyConditionExpression=kc.split(" | ")[0],
                    ExpressionAttributeValues=vals)
        if " | " in kc:
            args["FilterExpression"] = kc.split(" | ")[1]
        try:
            r = c.query(**args)
            ids = ",".join(sorted(it["id"]["S"] for it in r["Items"]))
            print("ok       %s: %s" % (kc, ids or "-"))
        except ClientError as e:
            if e.response["Error"]["Code"] != "ValidationException":
                raise
            print("refused  %s" % kc)


if __name__ == "__main__":
    main()
