#!/usr/bin/env python3
"""Create a DynamoDB table from an example of this folder and load its items.

Usage:
    python3 examples/load.py examples/ecommerce/store.json Store
    python3 examples/load.py examples/lesson/store.json Lesson

An example file is JSON: {"table": {"key": [PK, SK], "indexes": [{"name":
..., "key": [PK, SK]}, ...]}, "items": [...]}.  An index may instead give
"partition": [A, ...] and "sort": [B, ...], up to 4 attributes each (a
multi-attribute key, DynamoDB since November 2025).  A key attribute is a
string (S) unless "types" ({"total": "N"}) says otherwise; every index
projects ALL attributes, and the table is PAY_PER_REQUEST.  Items are plain JSON, as the virtual table's `item`
column shows them: strings are S, numbers N (with exactly the digits
written), true/false BOOL, null NULL, arrays L, objects M.

The table is dropped first if it exists, so this is meant for DynamoDB
Local: it refuses to run unless AWS_ENDPOINT_URL_DYNAMODB is set (`make
shell` and `make demo` set it to the server they start).  Credentials and
region come from the environment as for any boto3 program; `make shell`
uses dummy ones (DynamoDB Local accepts any).  Needs boto3 (Debian:
python3-boto3).  Prints nothing on success.
"""

import json
import os
import sys
import time
from decimal import Decimal


def read_example(path):
    """The example file at `path`: (table spec, items), numbers as Decimal
    so that every digit survives."""
    with open(path, encoding="utf-8") as f:
        spec = json.load(f, parse_float=Decimal, parse_int=Decimal)
    return spec["table"], spec["items"]


def attribute_value(v):
    """A plain JSON value as a DynamoDB attribute value."""
    if isinstance(v, bool):
        return {"BOOL": v}
    if v is None:
        return {"NULL": True}
    if isinstance(v, str):
        return {"S": v}
    if isinstance(v, Decimal):
        return {"N": str(v)}
    if isinstance(v, list):
        return {"L": [attribute_value(x) for x in v]}
    if isinstance(v, dict):
        return {"M": {k: attribute_value(x) for k, x in v.items()}}
    raise TypeError("cannot store %r" % (v,))


def _key_schema(names, sort=None):
    """KeySchema of names ([PK] or [PK, SK]), or, with sort given, of the
    partition attributes names and the sort attributes sort."""
    if sort is None:
        kinds = ("HASH", "RANGE")
        return [{"AttributeName": n, "KeyType": kinds[i]}
                for i, n in enumerate(names)]
    return ([{"AttributeName": n, "KeyType": "HASH"} for n in names] +
            [{"AttributeName": n, "KeyType": "RANGE"} for n in sort])


def _wait(client, name, gone):
    """Wait until table `name` is ACTIVE (with its indexes) or, when
    `gone`, deleted."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            t = client.describe_table(TableName=name)["Table"]
        except client.exceptions.ResourceNotFoundException:
            if gone:
                return
            t = None
        if t and not gone and t["TableStatus"] == "ACTIVE" and all(
                g.get("IndexStatus", "ACTIVE") == "ACTIVE"
                for g in t.get("GlobalSecondaryIndexes", [])):
            return
        time.sleep(0.1)
    raise SystemExit("load: timed out waiting for table %s" % name)


def load(client, name, path):
    """(Re)create table `name` as the example file at `path` describes it
    and write its items (BatchWriteItem, 25 a call, unprocessed ones
    again)."""
    table, items = read_example(path)
    try:
        client.delete_table(TableName=name)
        _wait(client, name, gone=True)
    except client.exceptions.ResourceNotFoundException:
        pass
    names = list(table["key"])
    indexes = []
    for ix in table.get("indexes", []):
        if "partition" in ix:
            key = _key_schema(ix["partition"], ix.get("sort", []))
        else:
            key = _key_schema(ix["key"])
        names += [k["AttributeName"] for k in key
                  if k["AttributeName"] not in names]
        indexes.append({"IndexName": ix["name"], "KeySchema": key,
                        "Projection": {"ProjectionType": "ALL"}})
    kwargs = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                  KeySchema=_key_schema(table["key"]),
                  AttributeDefinitions=[
                      {"AttributeName": n,
                       "AttributeType": table.get("types", {}).get(n, "S")}
                      for n in names])
    if indexes:
        kwargs["GlobalSecondaryIndexes"] = indexes
    client.create_table(**kwargs)
    _wait(client, name, gone=False)
    puts = [{"PutRequest": {"Item": {k: attribute_value(v)
                                     for k, v in it.items()}}}
            for it in items]
    for i in range(0, len(puts), 25):
        pending = {name: puts[i:i + 25]}
        for attempt in range(20):
            pending = client.batch_write_item(
                RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
            time.sleep(0.05 * (attempt + 1))
        else:
            raise SystemExit("load: items left unprocessed in %s" % name)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    endpoint = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not endpoint:
        sys.stderr.write("load: AWS_ENDPOINT_URL_DYNAMODB is not set (this "
                         "drops and recreates the table: DynamoDB Local "
                         "only)\n")
        return 2
    import boto3
    region = (os.environ.get("AWS_REGION")
              or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1")
    client = boto3.client("dynamodb", endpoint_url=endpoint,
                          region_name=region)
    load(client, argv[1], argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
