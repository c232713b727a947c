#!/usr/bin/env python3
"""A broken or hostile endpoint (tests/suites/28-hostile.sh).  TAP lines.

Starts tests/trust/hostile_proxy.py (tests/faults/proxy.py in front of
AWS_ENDPOINT_URL_DYNAMODB, with the answers of a lying server) and runs the
sqlite3 shell against it on TABLE (made by tests/trust/oracle.py setup: F/
k000..k199, P/p000..p129 of 60 KB each, 330 items):

  * what one answer may cost: a Scan page of 60 MB (1.9 M tiny items, as
    sized by Content-Length, or in chunks), of 1.9 M items in 30 MB, of
    more decoded bytes than a page can hold, on 1 and 4 segments: a
    one-line error naming the operation and the bound, and the shell's
    peak RSS within the README's bound (and printed); a page past 32 MB of
    text within one page's text and 2 MB a segment (chunked: one body of
    unknown length at a time grows past 2 MB)
  * LastEvaluatedKeys that never end: fresh keys for ever on a Scan (1 and
    4 segments) and a Query end with an error in bounded requests; keys of
    another shape, another partition, going back, or outside the key
    condition fail on the first page that has one; a correct server's
    pages (a Query of 8 pages, a Scan whose filter matches nothing) pass
  * server error text: escape sequences, CR, C1 controls, bidi overrides,
    bytes that are no UTF-8 and 100 KB of text reach the terminal escaped
    and cut
  * counts: a negative Count, a Count that is not the number of Items, a
    ScannedCount below Count are errors, never count(*) = 0
  * an item read (GetItem, Query, Scan, BatchGetItem) holding a byte that
    is no UTF-8 is an error, never a row
  * BatchGetItem: an item that was not asked for is an error
  * a clock an hour behind the server's: RequestTimeTooSkewed (with a Date
    header) or InvalidSignatureException "Signature expired" (the time in
    its message): the statement succeeds after one retry, and the next
    ones are right the first time

    hostile_check.py TABLE
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build/dynamodb"))
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
TAP = Tap("hostile: ")
PROXY = None
MB = 1024 * 1024
# README, "Memory of a parallel Scan": a segment reading a page holds at
# most its text (32 MB), its decoded items (96 MB) and a tape of one item
# (40 MB); the shell itself takes about 15 MB
SEGMENT_BOUND_MB = 32 + 96 + 40
BASE_MB = 30
# A page past its text's bound (32 MB) is refused before it is decoded: by
# its Content-Length before it is read, or, chunked, as it grows, one body
# of unknown length at a time past 2 MB (client/http.c's big_body): at
# most one page's text and 2 MB for each other segment.
TEXT_BOUND_MB = 32
SOLO_MB = 2


def hostile(**cfg):
    req = urllib.request.Request(PROXY + "/__hostile",
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    urllib.request.urlopen(req, timeout=30).read()


def hstats():
    return json.loads(urllib.request.urlopen(PROXY + "/__hostile",
                                             timeout=30).read())


def shell(table, opts, sql, timeout=300):
    """The sqlite3 shell on sql against the proxy: (output as bytes, None,
    seconds)."""
    script = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
              "endpoint='%s', progress=off%s);\n%s\n"
              % (EXT, table, PROXY, opts, sql))
    t0 = time.monotonic()
    timeout = min(timeout, float(os.environ.get("HOSTILE_TIMEOUT", timeout)))
    p = subprocess.Popen([SQLITE3, ":memory:"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = p.communicate(script.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        out += b"(killed after %.0f s)" % timeout
    return out, None, time.monotonic() - t0


def shell_rss(table, opts, sql, timeout=300):
    """As shell(), the peak RSS measured with wait4 (MB)."""
    script = (".load %s\nCREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
              "endpoint='%s', progress=off%s);\n%s\n"
              % (EXT, table, PROXY, opts, sql))
    t0 = time.monotonic()
    rd, wr = os.pipe()
    inr, inw = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(inr, 0)
        os.dup2(wr, 1)
        os.dup2(wr, 2)
        os.close(rd)
        os.close(inw)
        os.execvp(SQLITE3, [SQLITE3, ":memory:"])
    os.close(wr)
    os.close(inr)
    os.write(inw, script.encode())
    os.close(inw)
    chunks = []
    while True:
        b = os.read(rd, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(rd)
    _, _, ru = os.wait4(pid, 0)
    return b"".join(chunks), ru.ru_maxrss / 1024.0, time.monotonic() - t0


def text(out):
    return out.decode("utf-8", "replace").strip()


def boto3_item(table, pk, sk):
    """The item (PK, SK) as boto3 reads it from DynamoDB (not through the
    proxy), its values untyped; {} when there is none."""
    r = fixtures.connect().get_item(TableName=table, ConsistentRead=True,
                                    Key={"PK": {"S": pk}, "SK": {"S": sk}})
    return {k: list(v.values())[0] for k, v in r.get("Item", {}).items()}


# --- what one answer may cost --------------------------------------------
def check_pages(table):
    tiny2 = '{"PK":{"S":"a"},"SK":{"S":"b"}}'   # 32 bytes with its comma
    tiny1 = '{"PK":{"S":"a"}}'
    lists = ('{"PK":{"S":"a"},"L":{"L":[' + ",".join(['{"S":""}'] * 10000)
             + ']}}')
    cases = [
        ("a 60 MB page of 1.9 M items (Content-Length)",
         dict(n=1900000, item=tiny2), "larger than 33554432 bytes (32 MB)"),
        ("a 60 MB page of 1.9 M items (chunked)",
         dict(n=1900000, item=tiny2, chunked=True),
         "larger than 33554432 bytes (32 MB)"),
        ("a 30 MB page of 1.9 M items",
         dict(n=1900000, item=tiny1), "more than 524288 items"),
        ("a 32 MB page of lists that decodes past 96 MB",
         dict(n=350, item=lists), "more than 96 MB decoded"),
    ]
    for name, cfg, want in cases:
        for seg in (1, 4):
            hostile(mode="bigpage", ops=["Scan"], **cfg)
            out, rss, took = shell_rss(
                table, ", segments=%d, query_ttl=0, max_retries=2" % seg,
                "SELECT count(*) FROM t;")
            st = hstats()
            hostile(mode="none")
            msg = text(out)
            bound = BASE_MB + seg * SEGMENT_BOUND_MB
            if "32 MB" in want:
                bound = BASE_MB + TEXT_BOUND_MB + seg * SOLO_MB
            # under ASan (SANITIZE=1) RSS is its shadow memory's: not held
            # to the bound
            ok = (want in msg and "Scan" in msg and msg.count("\n") == 0
                  and (rss <= bound or os.environ.get("SANITIZE") == "1"))
            TAP.ok(ok, "%s, segments=%d: one-line error naming Scan and the "
                   "bound, %d Scan requests, peak RSS %.0f MB (bound %d MB)"
                   % (name, seg, st["hostile"], rss, bound), msg)


# --- LastEvaluatedKeys that never end ------------------------------------
def check_keys(table):
    # a correct server first: the rules never stop its reads
    hostile(mode="none")
    out, _, _ = shell(table, ", query_ttl=0, segments=1",
                      "SELECT count(*) FROM t WHERE PK = 'P';\n"
                      "SELECT count(*) FROM t WHERE PK = 'P' ORDER BY SK "
                      "DESC;\nSELECT count(*) FROM (SELECT SK FROM t WHERE "
                      "PK = 'P' AND SK BETWEEN 'p010' AND 'p100');")
    TAP.ok(text(out) == "130\n130\n91",
           "a correct server: a Query of 8 pages, forward, backward and with "
           "BETWEEN, reads every item", text(out))
    out, _, _ = shell(table, ", query_ttl=0, segments=1, columns='v'",
                      "SELECT count(*) FROM t WHERE v = 'nothing';\n"
                      "SELECT count(*) FROM t;")
    TAP.ok(text(out) == "0\n330",
           "a correct server: a Scan whose filter matches nothing (pages of "
           "no item ending on a key) ends with 0 rows", text(out))

    # keys that break a rule on their first page
    for name, key, opts, sql, want, most in [
            ("a key that is not its page's last item's (no filter)", "scan",
             ", segments=1", "SELECT count(item) FROM t;",
             "not the key of its last item", 1),
            ("a key without the sort key", "noSK", ", segments=1",
             "SELECT count(*) FROM t;", "it lacks 'SK'", 1),
            ("a key with one more attribute", "extra", ", segments=1",
             "SELECT count(*) FROM t;", "'v' is no key attribute", 1),
            ("a key whose sort key is N", "typeN", ", segments=1",
             "SELECT count(*) FROM t;", "'SK' is N, the key's is S", 1),
            ("a Query key in another partition", "otherpk", "",
             "SELECT count(*) FROM t WHERE PK = 'F';",
             "in another partition", 1),
            ("a Query key that goes back", "back", "",
             "SELECT count(*) FROM t WHERE PK = 'F';", "goes back", 2),
            ("a Query key outside the key condition", "outside", "",
             "SELECT count(*) FROM t WHERE PK = 'F' AND SK < 'k005';",
             "outside the key condition", 1)]:
        # the first case keeps the page's items (DynamoDB Local's, after
        # each fresh key): its key is not its last item's
        hostile(mode="freshkey", key=key, empty=key != "scan")
        out, _, took = shell(table, ", query_ttl=0, max_retries=1" + opts,
                             sql, timeout=120)
        st = hstats()
        hostile(mode="none")
        msg = text(out)
        TAP.ok(want in msg and "LastEvaluatedKey" in msg
               and st["hostile"] <= most,
               "LastEvaluatedKey: %s is an error on the first page that has "
               "it (%d requests)" % (name, st["hostile"]), msg)

    # fresh keys for ever, of the right shape and order, on pages that read
    # nothing: the table's size (1000 + 2 x ItemCount idle pages, with the
    # ItemCount the server tells: 330 on DynamoDB Local, 0 on dynalite,
    # which never counts)
    for name, key, empty, opts, sql, units in [
            ("a Scan", "scan", True, ", segments=1",
             "SELECT count(*) FROM t;", 1),
            ("a parallel Scan (segments=4)", "scan", True, ", segments=4",
             "SELECT count(*) FROM t;", None),
            ("a Query (each key just past the last)", "forward", True, "",
             "SELECT count(*) FROM t WHERE PK = 'F';", 1)]:
        hostile(mode="freshkey", key=key, empty=empty)
        out, _, took = shell(table, ", query_ttl=0, max_retries=1" + opts,
                             sql, timeout=600)
        st = hstats()
        hostile(mode="none")
        msg = text(out)
        n = st["hostile"]
        if units is None:  # the Scan's TotalSegments: one guard each
            info, _, _ = shell(table, opts, "SELECT dynamodb_info('t');")
            units = json.loads(text(info))["total_segments"]
        m = re.search(r"more than the table's (\d+) items allow", msg)
        items = int(m.group(1)) if m else 10 ** 9
        most = (1000 + 2 * items + 1) * units
        TAP.ok(m is not None and items <= 330 and n <= most,
               "LastEvaluatedKey: %s whose server sends a fresh key for ever "
               "ends with an error after %d requests (bound %d)"
               % (name, n, most), msg)


# --- ListTables (dynamodb_tables) ----------------------------------------
def check_list_tables(table):
    hostile(mode="none")
    out, _, _ = shell(table, "", "SELECT count(*) > 0 FROM dynamodb_tables "
                      "WHERE endpoint = '%s' AND name = '%s';" % (PROXY, table))
    TAP.ok(text(out) == "1", "ListTables: a correct server lists the table",
           text(out))
    sql = "SELECT count(*) FROM dynamodb_tables WHERE endpoint = '%s';" % PROXY
    for name, cfg, want, most in [
            ("a LastEvaluatedTableName that is not the page's last name",
             {}, "is not the last name of its page", 1),
            ("a LastEvaluatedTableName after an empty page",
             {"empty": True}, "is not the last name of its page", 1),
            ("new names for ever, in order", {"fresh": True},
             "more than 100000 tables", 1001)]:
        hostile(mode="tablename", ops=["ListTables"], **cfg)
        out, _, _ = shell(table, ", max_retries=1", sql, timeout=300)
        st = hstats()
        hostile(mode="none")
        msg = text(out)
        TAP.ok(want in msg and "ListTables" in msg and st["hostile"] <= most,
               "ListTables: %s is an error after %d requests (bound %d)"
               % (name, st["hostile"], most), msg)


# --- server error text ---------------------------------------------------
def check_error_text(table):
    hostile(mode="errtext", ops=["Query"], pad=100 * 1024)
    out, _, _ = shell(table, ", query_ttl=0",
                      "SELECT count(*) FROM t WHERE PK = 'F';")
    hostile(mode="none")
    bad = [b for b in (b"\x1b", b"\r", b"\x07", b"\xc2\x9b", b"\xff",
                       "\u202e".encode()) if b in out]
    ctl = [c for c in out if c < 0x20 and c != 0x0a]
    line = text(out)
    ok = (not bad and not ctl and "ValidationException" in line
          and "\\x1b[2J" in line and "\\u202e" in line and "\\xff" in line
          and line.endswith("...") and len(out) < 600
          and out.count(b"\n") <= 1)
    TAP.ok(ok, "error text: escape sequences, CR, BEL, C1, bidi, bytes that "
           "are no UTF-8 and 100 KB reach the terminal escaped and cut "
           "(%d bytes)" % len(out), repr(out[:400]))


# --- counts ----------------------------------------------------------------
def check_counts(table):
    for name, field, value, sql, want in [
            ("a negative Count (Select=COUNT)", "Count", -5,
             "SELECT count(*) FROM t WHERE PK = 'F';",
             "Count -5 is not a count of one page"),
            ("a Count that is not the number of Items", "Count", 3,
             "SELECT count(SK) FROM t WHERE PK = 'F';",
             "Count 3 but"),
            ("a ScannedCount below Count", "ScannedCount", 1,
             "SELECT count(*) FROM t WHERE PK = 'F';",
             "ScannedCount 1 is below Count"),
            ("a Count past any page's (Select=COUNT)", "Count", 10 ** 9,
             "SELECT count(*) FROM t WHERE PK = 'F';",
             "is not a count of one page")]:
        hostile(mode="badcount", ops=["Query"], field=field, value=value)
        out, _, _ = shell(table, ", query_ttl=0", sql)
        hostile(mode="none")
        msg = text(out)
        TAP.ok(want in msg and "Query" in msg and not re.match(r"^\d+$", msg),
               "counts: %s is an error, not a count" % name, msg)


def check_utf8(table):
    for op, sql in [("GetItem", "SELECT item FROM t WHERE PK = 'F' AND "
                     "SK = 'k001';"),
                    ("Query", "SELECT item FROM t WHERE PK = 'F';"),
                    ("Scan", "SELECT count(item) FROM t;"),
                    ("BatchGetItem", "SELECT item FROM t WHERE PK = 'F' AND "
                     "SK IN ('k001', 'k002');")]:
        hostile(mode="badutf8", ops=[op])
        out, _, _ = shell(table, ", item_ttl=0, query_ttl=0, max_retries=1, "
                          "segments=1", sql)
        hostile(mode="none")
        msg = text(out)
        TAP.ok(msg.startswith("Runtime error") and op in msg
               and '"PK"' not in msg and not re.match(r"^\d+$", msg),
               "UTF-8: a %s answer holding a byte that is no UTF-8 (FF) is "
               "an error, no row" % op, msg)
    out, _, _ = shell(table, ", item_ttl=0, query_ttl=0", "SELECT count(*) "
                      "FROM t WHERE PK = 'F';")
    TAP.ok(text(out) == "200", "UTF-8: the same Query from a correct server "
           "reads its 200 items", text(out))
    # a write's answer: UPDATE's image after (ALL_NEW) goes to the cache
    shell(table, "", "INSERT OR REPLACE INTO t(PK, SK, item) VALUES "
          "('U', 'u1', '{\"v\":\"a\"}');")
    hostile(mode="badutf8", ops=["UpdateItem"])
    out, _, _ = shell(table, ", max_retries=1",
                      "UPDATE t SET item = json_set(item, '$.v', 'b') WHERE "
                      "PK = 'U' AND SK = 'u1';\nSELECT item FROM t WHERE "
                      "PK = 'U' AND SK = 'u1';")
    hostile(mode="none")
    # the answer retried as a damaged one; the retry (its condition no
    # longer holds) finds the item already as asked: the UPDATE is done,
    # and says so, as boto3 finds; the image with FF was never cached
    got = boto3_item(table, "U", "u1")
    TAP.ok(b"\xff" not in out and '"v":"b"' in text(out) and
           got.get("v") == "b",
           "UTF-8: an UpdateItem answer holding FF is retried, its image never "
           "cached; the UPDATE reported is the one made", [repr(out), got])
    # every answer bad (a REPLACE's old image, ALL_OLD, each time): the
    # retries run out, and the error says the write may have been made,
    # which it was
    hostile(mode="badutf8", ops=["PutItem"])
    out, _, _ = shell(table, ", max_retries=2",
                      "INSERT OR REPLACE INTO t(PK, SK, item) VALUES "
                      "('U', 'u1', '{\"v\":\"c\"}');")
    hostile(mode="none")
    got = boto3_item(table, "U", "u1")
    TAP.ok(b"\xff" not in out and "PutItem" in text(out) and
           "may have been applied" in text(out) and
           "nothing written" not in text(out) and got.get("v") == "c",
           "UTF-8: a PutItem answered with FF every time fails saying the "
           "write may have been applied, as it was", [repr(out), got])


def check_batch(table):
    for how, want in [("add", "more items than the 3 keys asked"),
                      ("replace", "a key it was not asked for"),
                      ("twice", "asked for once, twice")]:
        hostile(mode="batchextra", ops=["BatchGetItem"], how=how)
        out, _, _ = shell(table, ", item_ttl=0",
                          "SELECT count(*) FROM t WHERE PK = 'F' AND SK IN "
                          "('k001', 'k002', 'k003');")
        hostile(mode="none")
        msg = text(out)
        TAP.ok(want in msg and "BatchGetItem" in msg,
               "BatchGetItem: an answer with %s is an error"
               % {"add": "an item more than the keys asked",
                  "replace": "an item that was not asked for",
                  "twice": "one key twice"}[how], msg)


def check_batch_split(table):
    hostile(mode="batchbig", ops=["BatchGetItem"], most=1)
    out, _, _ = shell(table, ", item_ttl=0",
                      "SELECT group_concat(SK) FROM (SELECT SK FROM t WHERE "
                      "PK = 'F' AND SK IN ('k001', 'k002', 'k003', 'k004', "
                      "'k005') ORDER BY SK);")
    st = hstats()
    hostile(mode="none")
    # 5 keys (refused), 2 (refused), then one at a time
    TAP.ok(text(out) == "k001,k002,k003,k004,k005" and st["refused"] == 2
           and st["hostile"] == 7,
           "BatchGetItem: an answer past 64 MB asks for the keys again, half "
           "as many a call, down to one: every item (%d calls, %d refused)"
           % (st["hostile"], st["refused"]), text(out))


# --- a clock out of step ---------------------------------------------------
def check_skew(table):
    for error in ("RequestTimeTooSkewed", "InvalidSignatureException"):
        hostile(mode="skew", ops=["Query", "GetItem", "DescribeTable", "Scan",
                                  "BatchGetItem", "PutItem"],
                skew=3600, error=error)
        out, _, _ = shell(table, ", query_ttl=0, item_ttl=0",
                          "SELECT count(*) FROM t WHERE PK = 'F';\n"
                          "SELECT count(*) FROM t WHERE PK = 'F' AND SK = "
                          "'k007';\nSELECT count(*) FROM t WHERE PK = 'F';")
        st = hstats()
        hostile(mode="none")
        TAP.ok(text(out) == "200\n1\n200" and st["refused"] == 1,
               "clock an hour behind (%s): the first request is signed again "
               "with the server's time and succeeds; the next %d go right "
               "first time (%d refused)"
               % (error, st["requests"] - 2, st["refused"]), text(out))


# --- names a server tells ---------------------------------------------------
# What ListTables, DescribeTable and DescribeTimeToLive
# name reaches the terminal through dynamodb_tables, dynamodb_attributes,
# dynamodb_info, dynamodb_refresh, dynamodb_log, dynamodb_calls and .schema
# escaped as error text is; names of other scripts (é, 日本) as they are
RAW = [b"\x1b", b"\x07", "\u202e".encode(), "\u202c".encode()]


def check_names(table):
    evil_table = table + "\x1b[2J\x07\u202eevil"
    evil_pk = "P\x1b]0;owned\x07K\u202e"
    evil_ttl = "ttl\x1b[31m\u202c"
    evil_gsi = "g\x1b[5m\x07"
    fine_sk = "SK\u00e9\u65e5\u672c"   # SKé日本: shown as it is
    shown_pk = "P\\x1b]0;owned\\x07K\\u202e"  # P\x1b]0;owned\x07K\u202e
    hostile(mode="rename", ops=["ListTables", "DescribeTable",
                                "DescribeTimeToLive", "Scan", "Query",
                                "GetItem", "BatchGetItem"],
            names={table: evil_table, "PK": evil_pk, "SK": fine_sk},
            ttl=evil_ttl, gsi=evil_gsi)
    sql = ("SELECT name, partition_key, sort_key, ttl_attribute, indexes "
           "FROM dynamodb_tables WHERE endpoint = '%s' AND name LIKE "
           "'%s%%';\n"
           "SELECT name FROM dynamodb_attributes('t', 3);\n"
           "SELECT dynamodb_info('t');\n"
           ".schema t\n"
           "SELECT group_concat(name) FROM pragma_table_info('t');\n"
           "SELECT count(*) FROM t WHERE \"%s\" = 'F';\n"
           "EXPLAIN QUERY PLAN SELECT * FROM t WHERE \"%s\" = 'F';\n"
           "EXPLAIN QUERY PLAN SELECT * FROM t WHERE \"%s\" = 'k';\n"
           "SELECT DISTINCT table_name FROM dynamodb_log;\n"
           "SELECT dynamodb_refresh('t');\n"
           "CREATE VIRTUAL TABLE d USING dynamodb(table=%s, endpoint='%s', "
           "scan=deny);\nSELECT count(*) FROM d;\n"
           % (PROXY, table, shown_pk, fine_sk, shown_pk, table, PROXY))
    out, _, _ = shell(table, ", query_ttl=0", sql)
    hostile(mode="none")
    bad = [b for b in RAW if b in out]
    line = text(out)
    want = [table + "\\x1b[2J\\x07\\u202eevil",   # dynamodb_tables, log
            shown_pk, fine_sk,                        # attributes, .schema
            "ttl\\x1b[31m\\u202c",                    # ttl_attribute
            "g\\\\x1b[5m\\\\x07",                     # indexes (JSON)
            table + "\\\\x1b[2J",                      # dynamodb_info (JSON)
            "\n200\n",                                  # a Query by the shown name
            "Query (\"%s\" = ?)" % shown_pk,              # the plans
            "Query \"g\\x1b[5m\\x07\" (\"SK\u00e9\u65e5\u672c\" = ?)",
            "index (g\\x1b[5m\\x07)",                   # dynamodb_refresh
            "SK\u00e9\u65e5\u672c (g\\x1b[5m\\x07)"]         # an error
    missing = [w for w in want if w not in line]
    TAP.ok(not bad and not missing,
           "names: a table, key, index and TTL attribute named with ESC, BEL "
           "and bidi controls reach the terminal escaped through "
           "dynamodb_tables, dynamodb_attributes, dynamodb_info, .schema, "
           "dynamodb_log, dynamodb_refresh, plans and errors; é 日本 as they "
           "are; the column answers by its shown name",
           ["raw: %r" % bad, "missing: %r" % missing] +
           [repr(l) for l in out.splitlines()])


def main():
    global PROXY
    table = sys.argv[1]
    upstream = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    proxy = subprocess.Popen(
        ["python3", os.path.join(ROOT, "tests/trust/hostile_proxy.py"),
         "--upstream", upstream], stdout=subprocess.PIPE, text=True)
    try:
        PROXY = "http://127.0.0.1:%s" % proxy.stdout.readline().strip()
        only = os.environ.get("HOSTILE_ONLY")
        for f in (check_pages, check_keys, check_list_tables, check_error_text, check_counts,
                  check_utf8, check_batch, check_batch_split, check_skew, check_names):
            if not only or only in f.__name__:
                f(table)
    finally:
        proxy.kill()
        proxy.wait()
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
