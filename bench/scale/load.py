#!/usr/bin/env python3
"""Create and load the benchmark's single-table store in DynamoDB Local.

    python3 bench/scale/load.py ENDPOINT TABLE OUTDIR [NKEYS]

The store (deterministic, seed 6):
  * 9,000 customer partitions CUST#00000 .. CUST#08999, 10 orders each
    (SK ORDER#0000 .. ORDER#0009): 90,000 items;
  * one hot partition HOT#0 with 10,000 events (SK EVENT#00000 ..): the
    partition workload 3 queries;
  * 100,000 items in all, about 250 bytes each as DynamoDB counts them
    (attribute names + values), with a GSI (GSI1PK/GSI1SK) as single-table
    designs have.

Written with BatchWriteItem (25 items a call, UnprocessedItems retried) from
a few threads.  Then OUTDIR/keys.json and OUTDIR/keys.sql: NKEYS (2,000)
distinct random keys (same seed) for the GetItem workloads, as JSON for the
peers and as a TEMP table `k(pk, sk)` for the sqlite3 shell.  Last, a full
Scan with Select=COUNT checks the count and warms the server's Scan path.
Prints one JSON line: items, bytes (DynamoDB size), seconds.
"""

import json
import os
import random
import sys
import threading
import time

import boto3
from botocore.config import Config

N_CUST = 9000
ORDERS = 10
HOT_PK = "HOT#0"
HOT_N = 10000
STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled"]
CITIES = ["Lisbon", "Porto", "Madrid", "Seville", "Lyon", "Nantes", "Turin",
          "Genoa", "Ghent", "Bruges"]
MAX_ROUNDS = 200  # UnprocessedItems retries of one batch, at the most


def client(endpoint):
    return boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=Config(retries={"max_attempts": 10, "mode": "standard"},
                      max_pool_connections=4))


def ddb_size(av):
    """Size of an attribute value as DynamoDB counts it (close enough)."""
    (t, v), = av.items()
    if t == "S":
        return len(v.encode())
    if t == "N":
        return 1 + (len(v.lstrip("-").replace(".", "")) + 1) // 2
    if t == "M":
        return 3 + sum(len(k.encode()) + 1 + ddb_size(x) for k, x in v.items())
    if t == "L":
        return 3 + sum(1 + ddb_size(x) for x in v)
    if t == "SS":
        return sum(len(x.encode()) for x in v)
    if t == "BOOL":
        return 1
    return 1


def item_size(item):
    return sum(len(k.encode()) + ddb_size(v) for k, v in item.items())


def make_item(rng, pk, sk, typ, n):
    status = STATUSES[n % len(STATUSES)]
    day = "2025-%02d-%02d" % (1 + n % 12, 1 + n % 28)
    item = {
        "PK": {"S": pk},
        "SK": {"S": sk},
        "GSI1PK": {"S": "STATUS#" + status},
        "GSI1SK": {"S": "%sT%02d:%02d:%02dZ#%s" % (day, n % 24, n % 60,
                                                    (n * 7) % 60, pk)},
        "Type": {"S": typ},
        "status": {"S": status},
        "total": {"N": "%d.%02d" % (rng.randrange(1, 5000), rng.randrange(100))},
        "qty": {"N": str(rng.randrange(1, 20))},
        "email": {"S": "user%05d@example.com" % rng.randrange(100000)},
        "address": {"M": {
            "street": {"S": "%d Rua das Flores" % rng.randrange(1, 999)},
            "city": {"S": rng.choice(CITIES)},
            "zip": {"S": "%05d" % rng.randrange(100000)},
        }},
        "tags": {"SS": sorted({"t%d" % rng.randrange(20)
                               for _ in range(3)})},
        "gift": {"BOOL": n % 7 == 0},
    }
    # Filler to about 250 bytes.
    pad = 250 - item_size(item) - len("note")
    item["note"] = {"S": "".join(rng.choice("abcdefghij klmnop")
                                 for _ in range(max(pad, 1)))}
    return item


def all_items():
    rng = random.Random(6)
    n = 0
    for c in range(N_CUST):
        pk = "CUST#%05d" % c
        for o in range(ORDERS):
            yield make_item(rng, pk, "ORDER#%04d" % o, "order", n)
            n += 1
    for e in range(HOT_N):
        yield make_item(rng, HOT_PK, "EVENT#%05d" % e, "event", n)
        n += 1


def create_table(ddb, table):
    try:
        ddb.delete_table(TableName=table)
        ddb.get_waiter("table_not_exists").wait(TableName=table)
    except ddb.exceptions.ResourceNotFoundException:
        pass
    s = {"AttributeType": "S"}
    ddb.create_table(
        TableName=table, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[dict(s, AttributeName=a)
                              for a in ("PK", "SK", "GSI1PK", "GSI1SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "GSI1",
            "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                          {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}])
    ddb.get_waiter("table_exists").wait(TableName=table)


def writer(endpoint, table, chunks, errors):
    ddb = client(endpoint)
    try:
        for chunk in chunks:
            pending = {table: [{"PutRequest": {"Item": it}} for it in chunk]}
            for rnd in range(MAX_ROUNDS):
                out = ddb.batch_write_item(RequestItems=pending)
                pending = out.get("UnprocessedItems") or {}
                if not pending:
                    break
                time.sleep(min(0.05 * (rnd + 1), 1.0))
            else:
                raise RuntimeError("UnprocessedItems after %d rounds"
                                   % MAX_ROUNDS)
    except Exception as e:  # reported by the main thread
        errors.append(e)


def write_keys(items_keys, outdir, nkeys):
    rng = random.Random(2000)
    keys = rng.sample(items_keys, nkeys)
    with open(os.path.join(outdir, "keys.json"), "w") as f:
        json.dump([{"PK": pk, "SK": sk} for pk, sk in keys], f)
    with open(os.path.join(outdir, "keys.sql"), "w") as f:
        f.write("CREATE TEMP TABLE k(pk TEXT, sk TEXT);\nBEGIN;\n")
        for pk, sk in keys:
            f.write("INSERT INTO k VALUES ('%s', '%s');\n" % (pk, sk))
        f.write("COMMIT;\n")


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    endpoint, table, outdir = argv[1], argv[2], argv[3]
    nkeys = int(argv[4]) if len(argv) == 5 else 2000
    if not endpoint.startswith(("http://127.", "http://localhost")):
        sys.exit("load.py: loopback endpoints only, not %s" % endpoint)
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    create_table(client(endpoint), table)
    items = list(all_items())
    size = sum(item_size(i) for i in items)
    chunks = [items[i:i + 25] for i in range(0, len(items), 25)]
    nthreads = 4
    errors = []
    threads = [threading.Thread(target=writer,
                                args=(endpoint, table, chunks[t::nthreads],
                                      errors))
               for t in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit("load.py: %s" % errors[0])
    write_keys([(i["PK"]["S"], i["SK"]["S"]) for i in items], outdir, nkeys)
    # A check and a warm-up of the server's Scan path before anything is
    # timed: a full Scan with Select=COUNT.
    ddb, count, start = client(endpoint), 0, None
    for _ in range(10000):
        kw = {"TableName": table, "Select": "COUNT"}
        if start:
            kw["ExclusiveStartKey"] = start
        page = ddb.scan(**kw)
        count += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    if count != len(items):
        sys.exit("load.py: %d items written, a Scan counts %d"
                 % (len(items), count))
    print(json.dumps({"items": len(items), "bytes": size,
                      "avg_item_bytes": round(size / len(items), 1),
                      "seconds": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main(sys.argv)
