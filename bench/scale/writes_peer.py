#!/usr/bin/env python3
"""boto3 side of the writes benchmark (bench/scale/writes.py): one workload
measured in-process, the loads of the partitions the other workloads
start from, and the oracle that checks every workload's items afterwards.

    python3 bench/scale/writes_peer.py WORKLOAD ENDPOINT TABLE TAG

WORKLOAD  insert   10,000 items (writes.py: item()) with batch_writer:
                   BatchWriteItem of 25, one call at a time,
                   UnprocessedItems resent (boto3's own loop)
          update   Query of the partition U#TAG, then update_item
                   SET brand = 'v2' of each of its 1,000 items on condition
                   that it exists, 8 threads
          delete   Query of the keys of D#TAG, then batch_writer of their
                   DeleteRequests
          load     (not timed) the 1,000 items of U#TAG and of D#TAG
          check    (not timed) what boto3 finds of TAG's items: one JSON
                   line {insert: [count, checksum], update: [...], delete:
                   [...]} (count and sum of n, of len(pad), of brand =
                   'v2', over consistent Queries)

The client is made, and one DescribeTable sent, before the clock starts.
Prints one JSON line: workload, items, calls, wall (s), cpu (user+sys of
this process, all threads, from getrusage).
"""

import concurrent.futures
import json
import resource
import sys
import time

import boto3
from botocore.config import Config

THREADS = 8  # update_item calls at once
PARTS = 100  # the insert's partitions (100 items each)
N_INSERT = 10000
N_PART = 1000
MAX_PAGES = 100000


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def item(prefix, i):
    """Item i of a workload: ~250 bytes, as the extension's INSERT writes
    it (writes.py: EXT_ITEM)."""
    return {"PK": {"S": "%s#%03d" % (prefix, i // 100)},
            "SK": {"S": "%05d" % i}, "n": {"N": str(i)},
            "pad": {"S": "x" * 200}, "brand": {"S": "b"}}


def part_item(pk, i):
    return {"PK": {"S": pk}, "SK": {"S": "%05d" % i}, "n": {"N": str(i)},
            "pad": {"S": "x" * 200}, "brand": {"S": "b"}}


def query(ddb, table, pk, **kw):
    """Every item of partition pk (consistent), and the calls."""
    out, calls, start = [], 0, None
    for _ in range(MAX_PAGES):
        args = dict(TableName=table, KeyConditionExpression="PK = :p",
                    ExpressionAttributeValues={":p": {"S": pk}}, **kw)
        if start:
            args["ExclusiveStartKey"] = start
        r = ddb.query(**args)
        calls += 1
        out += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            return out, calls
    raise RuntimeError("too many pages")


def w_insert(ddb, res, table, tag):
    calls = [0]
    res.meta.client.meta.events.register(
        "before-send.dynamodb.BatchWriteItem",
        lambda **kw: calls.__setitem__(0, calls[0] + 1))
    with res.Table(table).batch_writer() as bw:
        for i in range(N_INSERT):
            it = item("I#" + tag, i)
            bw.put_item(Item={"PK": it["PK"]["S"], "SK": it["SK"]["S"],
                              "n": i, "pad": it["pad"]["S"], "brand": "b"})
    return N_INSERT, calls[0]


def w_update(ddb, res, table, tag):
    items, calls = query(ddb, table, "U#" + tag)

    def one(it):
        ddb.update_item(TableName=table,
                        Key={"PK": it["PK"], "SK": it["SK"]},
                        UpdateExpression="SET #b = :b",
                        ConditionExpression="attribute_exists(PK)",
                        ExpressionAttributeNames={"#b": "brand"},
                        ExpressionAttributeValues={":b": {"S": "v2"}})
    with concurrent.futures.ThreadPoolExecutor(THREADS) as ex:
        list(ex.map(one, items))
    return len(items), calls + len(items)


def w_delete(ddb, res, table, tag):
    keys, calls = query(ddb, table, "D#" + tag, ProjectionExpression="PK, SK")
    n = [0]
    res.meta.client.meta.events.register(
        "before-send.dynamodb.BatchWriteItem",
        lambda **kw: n.__setitem__(0, n[0] + 1))
    with res.Table(table).batch_writer() as bw:
        for k in keys:
            bw.delete_item(Key={"PK": k["PK"]["S"], "SK": k["SK"]["S"]})
    return len(keys), calls + n[0]


def load(ddb, res, table, tag):
    with res.Table(table).batch_writer() as bw:
        for pk in ("U#" + tag, "D#" + tag):
            for i in range(N_PART):
                bw.put_item(Item={"PK": pk, "SK": "%05d" % i, "n": i,
                                  "pad": "x" * 200, "brand": "b"})


def summary(items):
    """[count, sum of n, sum of len(pad), items with brand v2]."""
    return [len(items), sum(int(it["n"]["N"]) for it in items),
            sum(len(it["pad"]["S"]) for it in items),
            sum(it.get("brand", {}).get("S") == "v2" for it in items)]


def check(ddb, table, tag):
    ins = [0, 0, 0, 0]
    for p in range(PARTS):
        s = summary(query(ddb, table, "I#%s#%03d" % (tag, p),
                          ConsistentRead=True)[0])
        ins = [a + b for a, b in zip(ins, s)]
    return {"insert": ins,
            "update": summary(query(ddb, table, "U#" + tag,
                                    ConsistentRead=True)[0]),
            "delete": summary(query(ddb, table, "D#" + tag,
                                    ConsistentRead=True)[0])}


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    workload, endpoint, table, tag = argv[1:5]
    cfg = Config(retries={"max_attempts": 10, "mode": "standard"},
                 max_pool_connections=THREADS * 2)
    ddb = boto3.client("dynamodb", endpoint_url=endpoint, config=cfg,
                       region_name="us-east-1")
    res = boto3.resource("dynamodb", endpoint_url=endpoint, config=cfg,
                         region_name="us-east-1")
    ddb.describe_table(TableName=table)
    if workload == "load":
        load(ddb, res, table, tag)
        return 0
    if workload == "check":
        print(json.dumps(check(ddb, table, tag)))
        return 0
    fn = {"insert": w_insert, "update": w_update, "delete": w_delete}[workload]
    res.Table(table).load()  # the resource's DescribeTable, before the clock
    w0, c0 = time.perf_counter(), cpu()
    items, calls = fn(ddb, res, table, tag)
    print(json.dumps({"workload": workload, "items": items, "calls": calls,
                      "wall": time.perf_counter() - w0, "cpu": cpu() - c0}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
