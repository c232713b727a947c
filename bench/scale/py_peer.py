#!/usr/bin/env python3
"""boto3 peer of the scale benchmark: one workload, measured in-process.

    python3 bench/scale/py_peer.py MODE WORKLOAD ENDPOINT TABLE [KEYS.json]

Environment: BENCH_PEER_SEGMENTS (1): the full Scans run as that many
parallel segments (Segment/TotalSegments), one thread each, the counts and
lengths summed; the report compares with 8.

MODE      client     low-level client, ExclusiveStartKey paging by hand
          paginator  client.get_paginator(...).paginate(...)
WORKLOAD  count        full Scan, Select=COUNT
          count_items  full Scan reading the items, counting them
          scan_json    full Scan, every item to plain JSON (TypeDeserializer +
                       json.dumps), the lengths summed
          query_json   Query of the HOT#0 partition, every item to JSON
          get          GetItem of each key of KEYS.json, each item to JSON,
                       twice: "get_cold" then "get_warm" (boto3 has no
                       cache: the second pass makes every call again)
          batch        "get_batch": batch_get_item of KEYS.json, 100 keys
                       a call, 4 calls in flight (threads), UnprocessedKeys
                       asked again, each item to JSON

The client is made, and one DescribeTable sent, before the clock starts (the
extension does the same at CREATE VIRTUAL TABLE).  Prints one JSON line per
measurement: workload, items, calls, wall (s), cpu (user+sys of this process,
all threads, from getrusage), check (sum of JSON lengths).
"""

import base64
import concurrent.futures
import json
import os
import resource
import sys
import time
from decimal import Decimal

import boto3
from boto3.dynamodb.types import TypeDeserializer
from botocore.config import Config

MAX_PAGES = 100000  # a bound on every paging loop
BATCH = 100  # keys a BatchGetItem call
IN_FLIGHT = 4  # BatchGetItem calls at once
HOT_PK = "HOT#0"
DESER = TypeDeserializer()


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _default(o):
    if isinstance(o, Decimal):
        return int(o) if o == o.to_integral_value() else float(o)
    if isinstance(o, set):
        return sorted(o, key=str)
    if isinstance(o, (bytes, bytearray)):
        return base64.b64encode(o).decode()
    if hasattr(o, "value"):  # boto3 Binary
        return base64.b64encode(o.value).decode()
    raise TypeError(type(o))


def to_json(item):
    plain = {k: DESER.deserialize(v) for k, v in item.items()}
    return json.dumps(plain, default=_default, separators=(",", ":"))


def pages(ddb, mode, op, **kw):
    """Yield the response pages of a Scan or Query, following LastEvaluatedKey."""
    if mode == "paginator":
        yield from ddb.get_paginator(op).paginate(**kw)
        return
    call = ddb.scan if op == "scan" else ddb.query
    start = None
    for _ in range(MAX_PAGES):
        if start:
            kw["ExclusiveStartKey"] = start
        page = call(**kw)
        yield page
        start = page.get("LastEvaluatedKey")
        if not start:
            return
    raise RuntimeError("more than %d pages" % MAX_PAGES)


def run(name, fn):
    w0, c0 = time.perf_counter(), cpu()
    items, calls, check = fn()
    wall, used = time.perf_counter() - w0, cpu() - c0
    print(json.dumps({"workload": name, "items": items, "calls": calls,
                      "wall": wall, "cpu": used, "check": check}), flush=True)


def main(argv):
    if len(argv) not in (5, 6):
        sys.exit(__doc__)
    mode, workload, endpoint, table = argv[1:5]
    if mode not in ("client", "paginator"):
        sys.exit("py_peer: bad mode %r" % mode)
    ddb = boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=Config(retries={"max_attempts": 10, "mode": "standard"},
                      read_timeout=300, max_pool_connections=16))
    ddb.describe_table(TableName=table)
    nseg = int(os.environ.get("BENCH_PEER_SEGMENTS", "1"))
    if not 1 <= nseg <= 64:
        sys.exit("py_peer: BENCH_PEER_SEGMENTS must be 1..64")

    def scan(select_count, render):
        def segment(seg):
            n = calls = check = 0
            kw = {"TableName": table}
            if select_count:
                kw["Select"] = "COUNT"
            if nseg > 1:
                kw["Segment"], kw["TotalSegments"] = seg, nseg
            for page in pages(ddb, mode, "scan", **kw):
                calls += 1
                if select_count:
                    n += page["Count"]
                    continue
                for it in page["Items"]:
                    n += 1
                    if render:
                        check += len(to_json(it))
            return n, calls, check

        def fn():
            if nseg == 1:
                return segment(0)
            with concurrent.futures.ThreadPoolExecutor(nseg) as ex:
                parts = list(ex.map(segment, range(nseg)))
            return tuple(sum(p[i] for p in parts) for i in range(3))
        return fn

    def query():
        n = calls = check = 0
        for page in pages(ddb, mode, "query", TableName=table,
                          KeyConditionExpression="#p = :p",
                          ExpressionAttributeNames={"#p": "PK"},
                          ExpressionAttributeValues={":p": {"S": HOT_PK}}):
            calls += 1
            for it in page["Items"]:
                n += 1
                check += len(to_json(it))
        return n, calls, check

    def gets(keys):
        def fn():
            n = check = 0
            for k in keys:
                r = ddb.get_item(TableName=table,
                                 Key={"PK": {"S": k["PK"]},
                                      "SK": {"S": k["SK"]}})
                if "Item" in r:
                    n += 1
                    check += len(to_json(r["Item"]))
            return n, len(keys), check
        return fn

    def batch(keys):
        def one(chunk):
            n = calls = check = 0
            req = {table: {"Keys": [{"PK": {"S": k["PK"]},
                                     "SK": {"S": k["SK"]}} for k in chunk]}}
            for _ in range(MAX_PAGES):
                r = ddb.batch_get_item(RequestItems=req)
                calls += 1
                for it in r["Responses"].get(table, []):
                    n += 1
                    check += len(to_json(it))
                req = r.get("UnprocessedKeys")
                if not req:
                    return n, calls, check
            raise RuntimeError("UnprocessedKeys without end")

        def fn():
            chunks = [keys[i:i + BATCH] for i in range(0, len(keys), BATCH)]
            with concurrent.futures.ThreadPoolExecutor(IN_FLIGHT) as ex:
                parts = list(ex.map(one, chunks))
            return tuple(sum(p[i] for p in parts) for i in range(3))
        return fn

    if workload == "count":
        run("count", scan(True, False))
    elif workload == "count_items":
        run("count_items", scan(False, False))
    elif workload == "scan_json":
        run("scan_json", scan(False, True))
    elif workload == "query_json":
        run("query_json", query)
    elif workload in ("get", "batch"):
        if len(argv) != 6:
            sys.exit("py_peer: %s needs KEYS.json" % workload)
        with open(argv[5]) as f:
            keys = json.load(f)
        if workload == "batch":
            run("get_batch", batch(keys))
        else:
            run("get_cold", gets(keys))
            run("get_warm", gets(keys))
    else:
        sys.exit("py_peer: bad workload %r" % workload)


if __name__ == "__main__":
    main(sys.argv)
