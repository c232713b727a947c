#!/usr/bin/env python3
"""The number of Query requests boto3 takes to read partition PK of TABLE
(PK S) page by page, following LastEvaluatedKey (no Limit): the oracle of
test-sql/111_limit_push.test.  Needs AWS_ENDPOINT_URL_DYNAMODB.

    pages.py TABLE PK
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "harness"))
import fixtures  # noqa: E402


def main():
    c = fixtures.connect()
    kw = dict(TableName=sys.argv[1], KeyConditionExpression="PK = :p",
              ExpressionAttributeValues={":p": {"S": sys.argv[2]}})
    calls = 0
    while True:
        page = c.query(**kw)
        calls += 1
        if "LastEvaluatedKey" not in page:
            break
        kw["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    print(calls)


if __name__ == "__main__":
    main()
