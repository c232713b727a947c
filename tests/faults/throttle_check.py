#!/usr/bin/env python3
"""Throttling that explains itself (suite 29).

tests/faults/proxy.py in front of DynamoDB Local answers one operation of
a statement with each form of throttling DynamoDB sends: the old ones
without reasons (ProvisionedThroughputExceededException,
ThrottlingException), and today's: ThrottlingException with
throttlingReasons, ProvisionedThroughputExceededException and
RequestLimitExceeded with ThrottlingReasons (botocore's service-2.json,
shape ThrottlingReason: {"reason", "resource"}), for the table and for an
index, reads and writes, each LimitType.  For each form, in the sqlite3
shell with the extension:

  transient   the first try is throttled, the retry goes through: the
              statement prints what it prints unthrottled; dynamodb_log
              shows the request's retry and its reasons (column throttle);
              dynamodb_hot counts the throttle for the key, and marks it
              key_range only when DynamoDB named that key's table or index
              as a hot key range;
  persistent  every try is throttled (max_retries=2): the statement fails
              with one line naming the reason and the table or index.

Needs AWS_ENDPOINT_URL_DYNAMODB; SQLITE3, DDB_EXT, SQLITE3_PRELOAD as
tests/harness/run_sql.py reads them.  Prints TAP lines.
"""

import json
import os
import subprocess
import sys
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

TABLE = "Thr029"
ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/" + TABLE
IARN = ARN + "/index/ByStatus"
P = "com.amazonaws.dynamodb.v20120810#"
PTE_MSG = ("The level of configured provisioned throughput for the table "
           "was exceeded. Consider increasing your provisioning level with "
           "the UpdateTable API.")
TAP = Tap("throttle: ")


def reasons(member, *pairs):
    return {member: [{"reason": r, "resource": res} for r, res in pairs]}


def body(typ, msg, extra=None):
    b = {"__type": P + typ, "message": msg}
    b.update(extra or {})
    return b


class Case:
    """One form of throttling on one operation of one statement."""

    def __init__(self, name, op, sql, out, ans, log, hot, error):
        self.name = name    # what the TAP line says
        self.op = op        # the DynamoDB operation throttled
        self.sql = sql      # the statement
        self.out = out      # what it prints, unthrottled
        self.ans = ans      # the throttling answer (JSON)
        self.log = log      # dynamodb_log's throttle text of that request
        self.hot = hot      # dynamodb_hot rows with throttled > 0
        self.error = error  # the persistent error, exactly


READ_Q = "SELECT SK, v FROM t WHERE PK = 'P#1' ORDER BY SK;"
READ_G = "SELECT v FROM t WHERE PK = 'P#1' AND SK = 'a';"
READ_I = "SELECT PK, SK FROM t WHERE status = 'open' ORDER BY PK, SK;"
SCAN = "SELECT count(*) FROM t;"
ERR = "Runtime error near line 6: dynamodb: "


def cases():
    return [
        Case("old ProvisionedThroughputExceededException, no reasons",
             "Query", READ_Q, "a|1\nb|2",
             body("ProvisionedThroughputExceededException", PTE_MSG),
             "ProvisionedThroughputExceededException",
             ["Thr029||P#1|1|0"],
             ERR + "ProvisionedThroughputExceededException: " + PTE_MSG +
             " (after 2 retries)"),
        Case("old ThrottlingException, no reasons",
             "GetItem", READ_G, "1",
             body("ThrottlingException", "Rate exceeded"),
             "ThrottlingException",
             ["Thr029||P#1|1|0"],
             ERR + "ThrottlingException: Rate exceeded (after 2 retries)"),
        Case("ThrottlingException: TableReadKeyRangeThroughputExceeded",
             "Query", READ_Q, "a|1\nb|2",
             body("ThrottlingException", "Throughput exceeds the current "
                  "capacity for one or more partitions of your table.",
                  reasons("throttlingReasons",
                          ("TableReadKeyRangeThroughputExceeded", ARN))),
             "TableReadKeyRangeThroughputExceeded Thr029",
             ["Thr029||P#1|1|1"],
             ERR + "ThrottlingException: TableReadKeyRangeThroughputExceeded"
             " on table 'Thr029' (a hot partition key): Throughput exceeds "
             "the current capacity for one or more partitions of your "
             "table. (after 2 retries)"),
        Case("ProvisionedThroughputExceededException: "
             "TableReadProvisionedThroughputExceeded",
             "GetItem", READ_G, "1",
             body("ProvisionedThroughputExceededException", PTE_MSG,
                  reasons("ThrottlingReasons",
                          ("TableReadProvisionedThroughputExceeded", ARN))),
             "TableReadProvisionedThroughputExceeded Thr029",
             ["Thr029||P#1|1|0"],
             ERR + "ProvisionedThroughputExceededException: "
             "TableReadProvisionedThroughputExceeded on table 'Thr029' "
             "(over its provisioned capacity): " + PTE_MSG +
             " (after 2 retries)"),
        Case("RequestLimitExceeded: TableReadAccountLimitExceeded",
             "Scan", SCAN, "4",
             body("RequestLimitExceeded", "Throughput exceeds the current "
                  "throughput limit for your account.",
                  reasons("ThrottlingReasons",
                          ("TableReadAccountLimitExceeded", ARN))),
             "TableReadAccountLimitExceeded Thr029",
             [],
             ERR + "RequestLimitExceeded: TableReadAccountLimitExceeded on "
             "table 'Thr029' (over the account's per-table quota): "
             "Throughput exceeds the current throughput limit for your "
             "account. (after 2 retries)"),
        Case("ThrottlingException: TableReadMaxOnDemandThroughputExceeded",
             "Scan", SCAN, "4",
             body("ThrottlingException", "Rate exceeded",
                  reasons("throttlingReasons",
                          ("TableReadMaxOnDemandThroughputExceeded", ARN))),
             "TableReadMaxOnDemandThroughputExceeded Thr029",
             [],
             ERR + "ThrottlingException: "
             "TableReadMaxOnDemandThroughputExceeded on table 'Thr029' "
             "(over its on-demand maximum): Rate exceeded "
             "(after 2 retries)"),
        Case("ThrottlingException: IndexReadKeyRangeThroughputExceeded",
             "Query", READ_I, "P#1|a\nP#2|a",
             body("ThrottlingException", "Rate exceeded",
                  reasons("throttlingReasons",
                          ("IndexReadKeyRangeThroughputExceeded", IARN))),
             "IndexReadKeyRangeThroughputExceeded Thr029/ByStatus",
             ["Thr029|ByStatus|open|1|1"],
             ERR + "ThrottlingException: IndexReadKeyRangeThroughputExceeded"
             " on table 'Thr029' index 'ByStatus' (a hot partition key): "
             "Rate exceeded (after 2 retries)"),
        Case("ThrottlingException: IndexWriteProvisionedThroughputExceeded",
             "PutItem",
             "INSERT INTO t(PK, SK, status, v) VALUES ('P#3', 'a', 'new', 9);"
             "\nSELECT v FROM t WHERE PK = 'P#3' AND SK = 'a';", "9",
             body("ThrottlingException", "Rate exceeded",
                  reasons("throttlingReasons",
                          ("IndexWriteProvisionedThroughputExceeded", IARN))),
             "IndexWriteProvisionedThroughputExceeded Thr029/ByStatus",
             ["Thr029||P#3|1|0"],
             ERR + "ThrottlingException: "
             "IndexWriteProvisionedThroughputExceeded on table 'Thr029' "
             "index 'ByStatus' (over its provisioned capacity): Rate "
             "exceeded (after 2 retries)"),
        Case("ThrottlingException: IndexWriteKeyRangeThroughputExceeded, "
             "two reasons",
             "PutItem",
             "INSERT INTO t(PK, SK, status, v) VALUES ('P#3', 'a', 'new', 9);"
             "\nSELECT v FROM t WHERE PK = 'P#3' AND SK = 'a';", "9",
             body("ThrottlingException", "Rate exceeded",
                  reasons("throttlingReasons",
                          ("TableWriteProvisionedThroughputExceeded", ARN),
                          ("IndexWriteKeyRangeThroughputExceeded", IARN))),
             "TableWriteProvisionedThroughputExceeded Thr029; "
             "IndexWriteKeyRangeThroughputExceeded Thr029/ByStatus",
             ["Thr029||P#3|1|0", "Thr029|ByStatus|new|0|1"],
             ERR + "ThrottlingException: "
             "TableWriteProvisionedThroughputExceeded on table 'Thr029' "
             "(over its provisioned capacity); "
             "IndexWriteKeyRangeThroughputExceeded on table 'Thr029' index "
             "'ByStatus' (a hot partition key): Rate exceeded "
             "(after 2 retries)"),
        Case("ThrottlingException: TableWriteKeyRangeThroughputExceeded",
             "UpdateItem",
             "UPDATE t SET v = 7 WHERE PK = 'P#2' AND SK = 'a';\n"
             "SELECT v FROM t WHERE PK = 'P#2' AND SK = 'a';", "7",
             body("ThrottlingException", "Rate exceeded",
                  reasons("throttlingReasons",
                          ("TableWriteKeyRangeThroughputExceeded", ARN))),
             "TableWriteKeyRangeThroughputExceeded Thr029",
             ["Thr029||P#2|1|1"],
             ERR + "ThrottlingException: "
             "TableWriteKeyRangeThroughputExceeded on table 'Thr029' (a hot "
             "partition key): Rate exceeded (after 2 retries)"),
    ]


def setup(client):
    fixtures.create_table(client, TABLE, "PK", "SK",
                          gsis=[("ByStatus", "status", "SK", "ALL")])
    fixtures.put_items(client, TABLE, [
        {"PK": "P#1", "SK": "a", "status": "open", "v": 1},
        {"PK": "P#1", "SK": "b", "status": "done", "v": 2},
        {"PK": "P#2", "SK": "a", "status": "open", "v": 3},
        {"PK": "P#2", "SK": "b", "status": "done", "v": 4},
    ])


def reset_rows(client):
    client.delete_item(TableName=TABLE,
                       Key={"PK": {"S": "P#3"}, "SK": {"S": "a"}})
    client.put_item(TableName=TABLE, Item=fixtures.item_to_ddb(
        {"PK": "P#2", "SK": "a", "status": "open", "v": 3}))


def control(port, **cfg):
    req = urllib.request.Request("http://127.0.0.1:%d/__control" % port,
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    urllib.request.urlopen(req, timeout=30).read()


MARK = "--8<--"


def run(case, port, retries):
    """The statement in a fresh sqlite3 through the proxy: (its output,
    dynamodb_log's throttled requests, dynamodb_hot's throttled keys)."""
    ext = os.environ.get("DDB_EXT", os.path.join(ROOT, "build/dynamodb"))
    script = """.bail off
.headers off
.mode list
.load {ext}
CREATE VIRTUAL TABLE t USING dynamodb(table={table}, endpoint='http://127.0.0.1:{port}', timeout=10, max_retries={retries}, item_ttl=0, query_ttl=0, segments=1, columns='v N');
{sql}
SELECT '{mark}';
SELECT operation || '|' || retries || '|' || throttle FROM dynamodb_log WHERE throttle IS NOT NULL;
SELECT '{mark}';
SELECT table_name, ifnull(index_name, ''), partition_key, throttled, key_range FROM dynamodb_hot WHERE throttled > 0 OR key_range > 0 ORDER BY 1, 2, 3;
""".format(ext=ext, table=TABLE, port=port, retries=retries,
           sql=case.sql, mark=MARK)
    env = dict(os.environ)
    preload.sqlite3_env(env)
    p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                       input=script, capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=300)
    parts = (p.stdout + "\n").split(MARK + "\n")
    while len(parts) < 3:
        parts.append("")
    out = (parts[0] + p.stderr).strip()
    return out, parts[1].strip(), parts[2].strip()


def main():
    client = fixtures.connect()
    setup(client)
    proxy = subprocess.Popen([sys.executable,
                              os.path.join(ROOT, "tests/faults/proxy.py"),
                              "--upstream",
                              os.environ["AWS_ENDPOINT_URL_DYNAMODB"]],
                             stdout=subprocess.PIPE, text=True)
    try:
        port = int(proxy.stdout.readline())
        for c in cases():
            reset_rows(client)
            control(port, fault="throttle", mode="first", ops=[c.op],
                    throttle_body=c.ans)
            out, log, hot = run(c, port, 3)
            TAP.ok(out == c.out, "%s on %s: retried, then the answer" %
                   (c.name, c.op), "got:\n%s\nwant:\n%s" % (out, c.out))
            want_log = "%s|1|%s" % (c.op, c.log)
            TAP.ok(log == want_log, "%s on %s: dynamodb_log" % (c.name, c.op),
                   "got:\n%s\nwant:\n%s" % (log, want_log))
            want_hot = "\n".join(c.hot)
            TAP.ok(hot == want_hot, "%s on %s: dynamodb_hot" % (c.name, c.op),
                   "got:\n%s\nwant:\n%s" % (hot, want_hot))
            reset_rows(client)
            control(port, fault="throttle", mode="always", ops=[c.op],
                    throttle_body=c.ans)
            out, log, hot = run(c, port, 2)
            errs = [l for l in out.splitlines() if "error" in l]
            TAP.ok(errs == [c.error],
                   "%s on %s: retries run out, one line naming it" %
                   (c.name, c.op), "got:\n%s\nwant:\n%s" % (out, c.error))
    finally:
        proxy.kill()
        proxy.wait()
        fixtures.drop_table(client, TABLE)
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
