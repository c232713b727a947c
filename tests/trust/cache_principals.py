#!/usr/bin/env python3
"""Cache isolation end to end (tests/suites/27-cache-trust.sh): in ONE
sqlite3 process, virtual tables with different credentials, regions and
spellings of one endpoint, against a DynamoDB Local started WITHOUT
-sharedDb (tests/harness/ddblocal.sh start --per-key), which keeps one database per
access key id and region as real AWS keeps accounts apart.  boto3 is the
oracle that loads each principal's data.  Prints TAP lines.

Environment: SQLITE3 (shell, default sqlite3), DDB_EXT (extension,
default build/dynamodb), DDB_PERKEY_URL (use this per-key server instead
of starting one), API_PRINCIPALS (the C API driver, tests/trust/
api_principals.c, built by the suite; its checks are skipped without it).
"""
import os
import signal
import subprocess
import sys
import tempfile

import boto3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build", "dynamodb"))

PROFILES = {  # name: (access key id, secret)
    "A": ("AKIDALPHA", "secret-alpha"),
    "B": ("AKIDBRAVO", "secret-bravo"),
    "Awrong": ("AKIDALPHA", "not-the-secret-of-alpha"),
}

TAP = Tap()


def ddb(url, profile, region="us-east-1"):
    ak, sk = PROFILES[profile]
    return boto3.client("dynamodb", endpoint_url=url, region_name=region,
                        aws_access_key_id=ak, aws_secret_access_key=sk)


def make_table(c, name, items, sort_key=True):
    schema = [{"AttributeName": "PK", "KeyType": "HASH"}]
    attrs = [{"AttributeName": "PK", "AttributeType": "S"}]
    if sort_key:
        schema.append({"AttributeName": "SK", "KeyType": "RANGE"})
        attrs.append({"AttributeName": "SK", "AttributeType": "S"})
    try:
        c.delete_table(TableName=name)  # a server reused by hand
    except c.exceptions.ResourceNotFoundException:
        pass
    c.create_table(TableName=name, KeySchema=schema,
                   AttributeDefinitions=attrs, BillingMode="PAY_PER_REQUEST")
    for it in items:
        c.put_item(TableName=name,
                   Item={k: {"S": v} for k, v in it.items()})


def run_sql(statements, env):
    """Run (name, sql) blocks in one sqlite3 process; return {name: [lines]}."""
    script = [".bail off", ".headers off", ".mode list", ".load " + EXT]
    for name, sql in statements:
        script.append(".print @@" + name)
        script.append(sql)
    p = subprocess.run([SQLITE3, "-batch", ":memory:"], input="\n".join(script) + "\n",
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=env, timeout=300)
    out = {}
    cur = None
    for line in p.stdout.splitlines():
        if line.startswith("@@"):
            cur = line[2:]
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    if p.returncode not in (0, 1):
        out["__died__"] = ["sqlite3 exited with %d" % p.returncode, p.stdout[-2000:]]
    return out


def stat(name):
    return "SELECT value FROM dynamodb_stats WHERE name = '%s';" % name


def main():
    tmp = tempfile.mkdtemp(prefix="cache-trust-")
    url = os.environ.get("DDB_PERKEY_URL")
    state = None
    # a TERM (the suite's timeout) still runs the finally below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if not url:
        state = os.path.join(tmp, "ddb")
        url = subprocess.run([os.path.join(ROOT, "tests", "harness", "ddblocal.sh"), "start",
                              "--per-key", state], capture_output=True, text=True,
                             check=True).stdout.strip()
    try:
        run(url, tmp)
    finally:
        if state:
            subprocess.run([os.path.join(ROOT, "tests", "harness", "ddblocal.sh"), "stop", state],
                           capture_output=True)
    return TAP.done()


def run(url, tmp):
    port = url.rsplit(":", 1)[1]
    # each principal's own data: the same table names, other items
    a, b = ddb(url, "A"), ddb(url, "B")
    make_table(a, "Twin", [{"PK": "x", "SK": "1", "v": "A's"}])
    make_table(b, "Twin", [{"PK": "x", "SK": "1", "v": "B's"},
                        {"PK": "x", "SK": "2", "v": "B's second"}])
    make_table(a, "OnlyA", [{"PK": "secret", "SK": "1", "v": "A only"}])
    make_table(ddb(url, "A", "us-west-2"), "Twin",
               [{"PK": "x", "SK": "1", "v": "A's in us-west-2"}])

    creds = os.path.join(tmp, "credentials")
    conf = os.path.join(tmp, "config")
    with open(creds, "w") as f:
        for name, (ak, sk) in PROFILES.items():
            f.write("[%s]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n"
                    % (name, ak, sk))
    with open(conf, "w") as f:
        for name in PROFILES:
            f.write("[profile %s]\nregion = us-east-1\n\n" % name)
    env = dict(os.environ)
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
              "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
              "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        env.pop(k, None)
    env["AWS_SHARED_CREDENTIALS_FILE"] = creds
    env["AWS_CONFIG_FILE"] = conf
    env["AWS_EC2_METADATA_DISABLED"] = "true"

    ep = "endpoint='%s'" % url
    get = "SELECT json_extract(item, '$.v') FROM %s WHERE PK = 'x' AND SK = '1';"
    out = run_sql([
        ("setup", "CREATE VIRTUAL TABLE ta USING dynamodb(table=Twin, profile=A, %s);"
                  "CREATE VIRTUAL TABLE tb USING dynamodb(table=Twin, profile=B, %s);"
                  % (ep, ep)),
        ("get_a", get % "ta"),
        ("get_b", get % "tb"),
        ("query_a", "SELECT SK, json_extract(item, '$.v') FROM ta WHERE PK = 'x';"),
        ("query_b", "SELECT SK, json_extract(item, '$.v') FROM tb WHERE PK = 'x';"),
        ("scan_a", "SELECT count(*) FROM ta;"),
        ("scan_b", "SELECT count(*) FROM tb;"),
        # a table only A has: B must not connect to it from A's description
        ("only_a", "CREATE VIRTUAL TABLE oa USING dynamodb(table=OnlyA, profile=A, %s);"
                   "SELECT json_extract(item, '$.v') FROM oa WHERE PK = 'secret' AND SK = '1';"
                   % ep),
        ("only_b", "CREATE VIRTUAL TABLE ob USING dynamodb(table=OnlyA, profile=B, %s);"
                   "SELECT json_extract(item, '$.v') FROM ob WHERE PK = 'secret' AND SK = '1';"
                   % ep),
        # the same key id with a wrong secret: a request, never A's entry
        ("wrong", "SELECT dynamodb_calls();"
                  "CREATE VIRTUAL TABLE tw USING dynamodb(table=Twin, profile=Awrong, %s);"
                  "SELECT dynamodb_calls();" % ep
                  + (get % "ta") + "SELECT dynamodb_calls();"
                  + (get % "tw") + "SELECT dynamodb_calls();"),
        # another region of the same credentials
        ("west", "CREATE VIRTUAL TABLE twest USING dynamodb(table=Twin, profile=A, "
                 "region='us-west-2', %s);" % ep + (get % "twest")),
        # one server however spelled: localhost and a trailing slash
        ("alias", "CREATE VIRTUAL TABLE tl USING dynamodb(table=Twin, profile=A, "
                  "endpoint='http://LOCALHOST:%s/');" % port
                  + stat("item_hits") + stat("requests_GetItem")
                  + (get % "tl")
                  + stat("item_hits") + stat("requests_GetItem")),
        # and as libcurl reads it: a percent-encoded host, IPv4 in short
        # form, a dot segment (the place comes from the one parse)
        ("alias2", "CREATE VIRTUAL TABLE tp USING dynamodb(table=Twin, profile=A, "
                   "endpoint='http://local%%68ost:%s/./');"
                   "CREATE VIRTUAL TABLE tq USING dynamodb(table=Twin, profile=A, "
                   "endpoint='http://127.1:%s');" % (port, port)
                   + stat("item_hits") + stat("requests_GetItem")
                   + (get % "tp") + (get % "tq")
                   + stat("item_hits") + stat("requests_GetItem")),
        # a write through A drops B's cached item: B reads its own again
        ("write", (get % "tb") + "UPDATE ta SET item = json_set(item, '$.v', 'A wrote') "
                  "WHERE PK = 'x' AND SK = '1';" + (get % "ta") + (get % "tb")),
    ], env)
    died = out.get("__died__")
    if died:
        TAP.ok(False, "sqlite3 session", "\n".join(died))
    TAP.ok(out.get("get_a") == ["A's"], "item: A reads its item", out.get("get_a"))
    TAP.ok(out.get("get_b") == ["B's"],
           "item: B reads its own item, not A's cached one (same endpoint and table)",
           out.get("get_b"))
    TAP.ok(out.get("query_a") == ["1|A's"], "query: A's partition", out.get("query_a"))
    TAP.ok(out.get("query_b") == ["1|B's", "2|B's second"],
           "query: B's Query is not answered by A's cached page", out.get("query_b"))
    TAP.ok(out.get("scan_a") == ["1"] and out.get("scan_b") == ["2"],
           "scan: B's Scan is not answered by A's cached pages",
           (out.get("scan_a"), out.get("scan_b")))
    TAP.ok(out.get("only_a") == ["A only"], "describe: A reads its table OnlyA",
           out.get("only_a"))
    ob = out.get("only_b") or []
    TAP.ok(len(ob) >= 1 and "OnlyA" in ob[0] and "A only" not in "\n".join(ob),
           "describe: B, without a table OnlyA, can neither connect to it nor read "
           "it after A did", ob)
    w = out.get("wrong") or []
    # dynamodb_calls(): the calls since the last dynamodb_calls()
    TAP.ok(len(w) == 6 and w[1] == "DescribeTable" and w[2:5] == ["A's", "(none)", "A's"]
           and w[5] == "GetItem",
           "secret: the same access key id with a wrong secret sends its own "
           "GetItem (and DescribeTable), never served A's entries", w)
    TAP.ok(out.get("west") == ["A's in us-west-2"],
           "region: us-west-2 reads its own table, not us-east-1's cached item",
           out.get("west"))
    al = out.get("alias") or []
    ok = len(al) == 5 and al[2] == "A's"
    if ok:
        hits0, gets0, hits1, gets1 = int(al[0]), int(al[1]), int(al[3]), int(al[4])
        ok = hits1 == hits0 + 1 and gets1 == gets0
    TAP.ok(ok, "endpoint: http://LOCALHOST:PORT/ and http://127.0.0.1:PORT share "
           "one cache (a hit, no GetItem)", al)
    al = out.get("alias2") or []
    ok = len(al) == 6 and al[2:4] == ["A's", "A's"]
    if ok:
        hits0, gets0, hits1, gets1 = int(al[0]), int(al[1]), int(al[4]), int(al[5])
        ok = hits1 == hits0 + 2 and gets1 == gets0
    TAP.ok(ok, "endpoint: http://local%68ost:PORT/./ and http://127.1:PORT share "
           "that cache too (two hits, no GetItem)", al)
    TAP.ok(out.get("write") == ["B's", "A wrote", "B's"],
           "write: A's write drops B's entry of the item, B reads its own item "
           "again (never A's written one)", out.get("write"))

    api = os.environ.get("API_PRINCIPALS")
    if api and not os.access(api, os.X_OK):
        TAP.ok(False, "C API: the driver tests/trust/api_principals.c did not build", api)
    elif api:
        # A's item as boto3 made it (the session above updated it)
        a.put_item(TableName="Twin", Item={"PK": {"S": "x"}, "SK": {"S": "1"},
                                           "v": {"S": "A's"}})
        p = subprocess.run([api, url], capture_output=True, text=True, env=env,
                           timeout=120)
        lines = p.stdout.splitlines()
        TAP.ok(p.returncode == 0 and lines == ["A: A's", "B: B's", "A: A's", "B: B's",
                                               "Awrong: request", "west: A's in us-west-2",
                                               "localhost: hit"],
               "C API: two clients with profiles A and B (and a wrong secret, a "
               "region, localhost) keep their own cache entries",
               p.stdout + p.stderr)


if __name__ == "__main__":
    sys.exit(main())
