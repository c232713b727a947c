#!/usr/bin/env python3
"""Load known data into DynamoDB (Local) for the tests, and read it back.

Usage:
    python3 tests/harness/fixtures.py ecommerce TABLE # examples/ecommerce: the single-table design
    python3 tests/harness/fixtures.py lesson TABLE    # examples/lesson: customers and orders
    python3 tests/harness/fixtures.py drop TABLE      # delete the table if it exists
    python3 tests/harness/fixtures.py count TABLE     # item count (paginated, consistent Scan)
    python3 tests/harness/fixtures.py get TABLE KEY...
        KEY is one argument in DynamoDB JSON, e.g.
            '{"PK":{"S":"USER#alice"},"SK":{"S":"USER#alice"}}'
        or NAME=VALUE arguments (string; NAME:N=VALUE for a number, NAME:S=
        explicit string), e.g.  PK=USER#alice SK=ORDER#o-0001
        Use the NAME=VALUE form from a .test file: the sqlite3 shell's .shell
        drops the double quotes inside JSON. Prints the item as DynamoDB
        JSON, sorted keys, one line; "(no item)" (exit 0) if absent.
    python3 tests/harness/fixtures.py bulk TABLE N SIZE  # N items of SIZE bytes in partition P#big
    python3 tests/harness/fixtures.py load TABLE FILE  # (re)create from {"create": {...}, "items": [...]}
    python3 tests/harness/fixtures.py put TABLE NAME=VALUE...   # PutItem of S/N attributes
    python3 tests/harness/fixtures.py scan TABLE      # every item, one per line like `get`,
                                             # sorted by primary key (bytewise, N numeric)
    python3 tests/harness/fixtures.py describe TABLE  # DescribeTable's ItemCount and TableSizeBytes
                                             # as one line of JSON, for a test to compare
                                             # with what the extension stored
    python3 tests/harness/fixtures.py ttl TABLE ATTR  # UpdateTimeToLive: TTL on, attribute ATTR

Environment: AWS_ENDPOINT_URL_DYNAMODB (required, so that nothing here ever
talks to real AWS by accident), AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
(default test/test), AWS_REGION (default us-east-1).

ecommerce and lesson (re)create the table from examples/*/store.json
(examples/load.py): delete it if it exists, wait, create, wait until the
table and its indexes are ACTIVE, then write the items. Output
is empty on success (so they can run from a .test file's setup section);
errors go to stderr with exit status 1.

Importable: connect(), create_table(), drop_table(), wait_active(), put_items(), to_ddb(),
ecommerce(), ecommerce_items(), lesson(), count_items(), get_item().
"""

import json
import os
import sys
import time
from decimal import Decimal

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

DEFAULT_REGION = "us-east-1"


# --------------------------------------------------------------------------
# connection and generic helpers

def connect(endpoint=None):
    """A boto3 DynamoDB *client* for AWS_ENDPOINT_URL_DYNAMODB (or `endpoint`)."""
    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not endpoint:
        raise SystemExit("fixtures: AWS_ENDPOINT_URL_DYNAMODB is not set "
                         "(refusing to talk to real AWS)")
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
        config=Config(connect_timeout=5, read_timeout=60,
                      retries={"max_attempts": 5, "mode": "standard"}),
    )


def to_ddb(value):
    """Plain Python value -> DynamoDB attribute value (DynamoDB JSON).

    str -> S, int/Decimal -> N (text kept exactly), bool -> BOOL, None -> NULL,
    bytes -> B, list -> L, dict -> M, set of str -> SS, set of numbers -> NS.
    Floats are refused: write numbers as Decimal("9.99") to keep them exact.
    A dict that already is an attribute value (single key S/N/...) is NOT
    special-cased: pass plain values only.
    """
    if isinstance(value, bool):
        return {"BOOL": value}
    if value is None:
        return {"NULL": True}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, (int, Decimal)):
        return {"N": str(value)}
    if isinstance(value, float):
        raise TypeError("use Decimal, not float, for numbers: %r" % value)
    if isinstance(value, (bytes, bytearray)):
        return {"B": bytes(value)}
    if isinstance(value, (list, tuple)):
        return {"L": [to_ddb(v) for v in value]}
    if isinstance(value, dict):
        return {"M": {k: to_ddb(v) for k, v in value.items()}}
    if isinstance(value, (set, frozenset)):
        vals = sorted(value)
        if all(isinstance(v, str) for v in vals):
            return {"SS": vals}
        return {"NS": [str(v) for v in vals]}
    raise TypeError("cannot convert %r" % (value,))


def item_to_ddb(item):
    return {k: to_ddb(v) for k, v in item.items()}


def table_exists(client, name):
    try:
        client.describe_table(TableName=name)
        return True
    except ClientError as e:
        if e.response["Error"]["Code"] == "ResourceNotFoundException":
            return False
        raise


def _wait(pred, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        if pred():
            return
        if time.monotonic() > deadline:
            raise SystemExit("fixtures: timed out waiting for %s" % what)
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


def drop_table(client, name):
    """Delete table `name` if it exists and wait until it is gone."""
    try:
        client.delete_table(TableName=name)
    except ClientError as e:
        if e.response["Error"]["Code"] == "ResourceNotFoundException":
            return
        raise
    _wait(lambda: not table_exists(client, name), "table %s to be deleted" % name)


def _active(client, name):
    try:
        t = client.describe_table(TableName=name)["Table"]
    except ClientError as e:
        if e.response["Error"]["Code"] == "ResourceNotFoundException":
            return False
        raise
    if t.get("TableStatus") != "ACTIVE":
        return False
    return all(g.get("IndexStatus", "ACTIVE") == "ACTIVE"
               for g in t.get("GlobalSecondaryIndexes", []))


def wait_active(client, name):
    """Wait until table `name` and its GSIs are ACTIVE, polling from 50 ms
    up to 1 s apart (boto3's waiters poll every 20 s: slow on a server
    that keeps a new table CREATING for a moment, as dynalite and AWS do)."""
    _wait(lambda: _active(client, name), "table %s to become ACTIVE" % name)


def create_table(client, name, hash_key, range_key=None, gsis=(),
                 attr_types=None, recreate=True):
    """Create a PAY_PER_REQUEST table and wait until it and its GSIs are ACTIVE.

    hash_key/range_key: attribute names. gsis: list of
    (index_name, hash_attr, range_attr_or_None, projection) where projection
    is "ALL", "KEYS_ONLY" or a list of attribute names (INCLUDE).
    attr_types: {attr: "S"|"N"|"B"} for key attributes (default "S").
    recreate: drop an existing table of that name first.
    """
    attr_types = dict(attr_types or {})
    if recreate:
        drop_table(client, name)

    def keyschema(h, r):
        ks = [{"AttributeName": h, "KeyType": "HASH"}]
        if r:
            ks.append({"AttributeName": r, "KeyType": "RANGE"})
        return ks

    used = [hash_key] + ([range_key] if range_key else [])
    gsi_defs = []
    for iname, h, r, proj in gsis:
        used += [h] + ([r] if r else [])
        if isinstance(proj, (list, tuple)):
            projection = {"ProjectionType": "INCLUDE",
                          "NonKeyAttributes": list(proj)}
        else:
            projection = {"ProjectionType": proj}
        gsi_defs.append({"IndexName": iname, "KeySchema": keyschema(h, r),
                         "Projection": projection})
    attrs = []
    for a in used:
        if a not in [d["AttributeName"] for d in attrs]:
            attrs.append({"AttributeName": a,
                          "AttributeType": attr_types.get(a, "S")})
    kwargs = dict(TableName=name, AttributeDefinitions=attrs,
                  KeySchema=keyschema(hash_key, range_key),
                  BillingMode="PAY_PER_REQUEST")
    if gsi_defs:
        kwargs["GlobalSecondaryIndexes"] = gsi_defs
    client.create_table(**kwargs)
    wait_active(client, name)


def put_items(client, name, items):
    """Write plain-Python items (see to_ddb) with BatchWriteItem, in order."""
    reqs = [{"PutRequest": {"Item": item_to_ddb(it)}} for it in items]
    for i in range(0, len(reqs), 25):
        pending = {name: reqs[i:i + 25]}
        for attempt in range(20):
            out = client.batch_write_item(RequestItems=pending)
            pending = out.get("UnprocessedItems") or {}
            if not pending:
                break
            time.sleep(0.05 * (attempt + 1))
        else:
            raise SystemExit("fixtures: unprocessed items remain for %s" % name)


def count_items(client, name):
    n = 0
    kwargs = dict(TableName=name, Select="COUNT", ConsistentRead=True)
    while True:
        out = client.scan(**kwargs)
        n += out["Count"]
        lek = out.get("LastEvaluatedKey")
        if not lek:
            return n
        kwargs["ExclusiveStartKey"] = lek


def scan_items(client, name):
    items = []
    kwargs = dict(TableName=name, ConsistentRead=True)
    while True:
        out = client.scan(**kwargs)
        items += out.get("Items", [])
        lek = out.get("LastEvaluatedKey")
        if not lek:
            return items
        kwargs["ExclusiveStartKey"] = lek


def sort_by_key(client, name, items):
    """Sort items by the table's primary key (hash, then range), then by text."""
    ks = client.describe_table(TableName=name)["Table"]["KeySchema"]
    names = [k["AttributeName"] for k in ks]

    def keyval(av):
        if av is None:
            return (0, "")
        if "N" in av:
            return (1, Decimal(av["N"]))
        if "S" in av:
            return (2, av["S"].encode("utf-8"))
        return (3, av.get("B", b""))

    return sorted(items, key=lambda i: ([keyval(i.get(n)) for n in names],
                                        dump_item(i)))


def get_item(client, name, key):
    """key: DynamoDB JSON dict. Returns the item (DynamoDB JSON) or None."""
    out = client.get_item(TableName=name, Key=key, ConsistentRead=True)
    return out.get("Item")


def _jsonable(v):
    if isinstance(v, (bytes, bytearray)):
        import base64
        return base64.b64encode(bytes(v)).decode("ascii")
    raise TypeError("not JSON serializable: %r" % (v,))


def dump_item(item):
    """One line of DynamoDB JSON with sorted keys (B values base64, as the wire)."""
    return json.dumps(item, sort_keys=True, ensure_ascii=False,
                      default=_jsonable)


# --------------------------------------------------------------------------
# The examples of examples/ (examples/load.py reads and loads them):
#
# ecommerce: the e-commerce single-table design of examples/ecommerce/
# (users, orders, categories, products, reviews; GSI1 = GSI1PK/GSI1SK,
# GSI2 = Type/SK, projection ALL).  Its README.md is the worksheet of the
# 15 access patterns with what this data returns for each.
#
# lesson: the customers-and-orders table of examples/lesson/ (profiles,
# SK PROFILE, and orders, SK ORDER#<date>#<id>; GSI1 on GSI1PK/GSI1SK,
# orders only), 6 items.

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import load as example_load  # noqa: E402  (examples/load.py)

ECOMMERCE_FILE = os.path.join(ROOT, "examples", "ecommerce", "store.json")
LESSON_FILE = os.path.join(ROOT, "examples", "lesson", "store.json")


def ecommerce_items():
    """The e-commerce example's items, plain Python (numbers Decimal)."""
    return example_load.read_example(ECOMMERCE_FILE)[1]


def ecommerce(client, name):
    example_load.load(client, name, ECOMMERCE_FILE)


def lesson(client, name):
    example_load.load(client, name, LESSON_FILE)


def put_ddb_items(client, name, items):
    """Write items already in DynamoDB JSON, one PutItem each, in order."""
    for it in items:
        client.put_item(TableName=name, Item=it)


def bulk(client, name, n, size):
    """(Re)create table `name` (PK S, SK S; GSI ByGrp on Grp/SK, ALL) with n
    items of about `size` bytes in partition P#big: SK S#00000.., Grp g<i%3>,
    num = i."""
    create_table(client, name, "PK", "SK", gsis=[("ByGrp", "Grp", "SK", "ALL")])
    pad = "x" * max(0, size - 60)
    items = [{"PK": "P#big", "SK": "S#%05d" % i, "Grp": "g%d" % (i % 3),
              "num": i, "pad": pad} for i in range(n)]
    put_items(client, name, items)


def load_file(client, name, path):
    """(Re)create table `name` from a JSON file {"create": {CreateTable
    arguments without TableName}, "items": [items in DynamoDB JSON]}."""
    with open(path) as f:
        spec = json.load(f)
    drop_table(client, name)
    kwargs = dict(spec["create"])
    kwargs["TableName"] = name
    kwargs.setdefault("BillingMode", "PAY_PER_REQUEST")
    client.create_table(**kwargs)
    wait_active(client, name)
    put_ddb_items(client, name, [_binary(it) for it in spec.get("items", [])])


def _binary(item):
    """DynamoDB JSON as written in a file carries B/BS as base64 text;
    boto3 wants the bytes (it encodes them itself)."""
    import base64

    def av(v):
        (t, x), = v.items()
        if t == "B":
            return {"B": base64.b64decode(x)}
        if t == "BS":
            return {"BS": [base64.b64decode(e) for e in x]}
        if t == "M":
            return {"M": {k: av(e) for k, e in x.items()}}
        if t == "L":
            return {"L": [av(e) for e in x]}
        return v
    return {k: av(v) for k, v in item.items()}



# --------------------------------------------------------------------------
# command line

def parse_key(args):
    """Key from the command line: one DynamoDB JSON argument, or NAME=VALUE,
    NAME:S=VALUE, NAME:N=VALUE arguments. Raises ValueError."""
    if len(args) == 1 and args[0].lstrip().startswith("{"):
        try:
            key = json.loads(args[0])
        except ValueError as e:
            raise ValueError("%s (from a .test file's .shell, the JSON's double "
                             "quotes get lost: use PK=... SK=... instead)" % e)
        if not isinstance(key, dict):
            raise ValueError("key JSON must be an object")
        return key
    key = {}
    for a in args:
        name, sep, value = a.partition("=")
        if not sep or not name:
            raise ValueError("expected NAME=VALUE, got %r" % a)
        typ = "S"
        if ":" in name:
            name, typ = name.rsplit(":", 1)
            if typ not in ("S", "N"):
                raise ValueError("type must be S or N in %r" % a)
        key[name] = {typ: value}
    return key


def extension():
    """The extension under test: DDB_EXT (a path from the tree's top, without
    its .so), else build/dynamodb; absolute."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    return os.path.abspath(os.path.join(
        root, os.environ.get("DDB_EXT", "build/dynamodb")))


def recording_proxy(upstream, folder):
    """Start tests/faults/proxy.py in front of upstream, recording every
    request into folder/requests.jsonl (emptied first).  Returns (the
    process, the log's path); the proxy's port is its stdout's first line."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    log = os.path.join(folder, "requests.jsonl")
    open(log, "w").close()
    proxy = subprocess.Popen(
        [sys.executable, os.path.join(here, "..", "faults", "proxy.py"),
         "--upstream", upstream, "--log", log],
        stdout=subprocess.PIPE, text=True)
    return proxy, log


def _usage():
    sys.stderr.write(__doc__.split("\nEnvironment")[0].split("\n", 2)[2] + "\n")
    return 2


# Older names of the two example subcommands, kept for tests written
# before the examples had names.
ALIASES = {"seed000": "ecommerce", "seed001": "lesson"}


def main(argv):
    if len(argv) < 2:
        return _usage()
    cmd, args = argv[0], argv[1:]
    try:
        client = connect()
        cmd = ALIASES.get(cmd, cmd)
        if cmd == "ecommerce" and len(args) == 1:
            ecommerce(client, args[0])
        elif cmd == "lesson" and len(args) == 1:
            lesson(client, args[0])
        elif cmd == "drop" and len(args) == 1:
            drop_table(client, args[0])
        elif cmd == "count" and len(args) == 1:
            print(count_items(client, args[0]))
        elif cmd == "bulk" and len(args) == 3:
            bulk(client, args[0], int(args[1]), int(args[2]))
        elif cmd == "load" and len(args) == 2:
            load_file(client, args[0], args[1])
        elif cmd == "put" and len(args) >= 2:
            try:
                item = parse_key(args[1:])
            except ValueError as e:
                sys.stderr.write("fixtures: bad item: %s\n" % e)
                return 2
            client.put_item(TableName=args[0], Item=item)
        elif cmd == "get" and len(args) >= 2:
            try:
                key = parse_key(args[1:])
            except ValueError as e:
                sys.stderr.write("fixtures: bad key: %s\n" % e)
                return 2
            item = get_item(client, args[0], key)
            if item is None:
                print("(no item)")
                return 0
            print(dump_item(item))
        elif cmd == "ttl" and len(args) == 2:
            client.update_time_to_live(
                TableName=args[0],
                TimeToLiveSpecification={"Enabled": True,
                                         "AttributeName": args[1]})
        elif cmd == "describe" and len(args) == 1:
            t = client.describe_table(TableName=args[0])["Table"]
            print(json.dumps({"ItemCount": t.get("ItemCount", 0),
                              "TableSizeBytes": t.get("TableSizeBytes", 0)}))
        elif cmd == "scan" and len(args) == 1:
            for item in sort_by_key(client, args[0], scan_items(client, args[0])):
                print(dump_item(item))
        else:
            return _usage()
    except ClientError as e:
        err = e.response.get("Error", {})
        sys.stderr.write("fixtures: %s: %s: %s\n"
                         % (cmd, err.get("Code"), err.get("Message")))
        return 1
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
