#!/usr/bin/env python3
"""Suite 62's driver (tests/suites/62-streams-faults.sh): a coherence=streams
reader through tests/faults/streams_proxy.py (port in argv[1]) in front of
DynamoDB Local, while boto3 writes straight to DynamoDB Local.  TAP output.

  - ExpiredIteratorException: reopened AFTER_SEQUENCE_NUMBER the last
    record, nothing cleared, the next change seen;
  - LimitExceededException (3 in a row): backed off, the change seen;
    throttled for ever: the lag grows, a table with max_staleness=1 reads
    from DynamoDB while one without reads its cache, and both go back to
    the cache once the reader has caught up;
  - TrimmedDataAccessException: the table's cache cleared, fallback-ttl,
    anchored again, following, the change seen;
  - a shard that ends: its child followed from its start, the change seen;
  - the stream disabled: fallback-ttl naming why, in dynamodb_stats and
    dynamodb_last(); enabled again (a new LatestStreamArn): following;
  - no statement failed meanwhile: a reader's errors are never a
    statement's.
"""
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import streams_check as sc  # noqa: E402
from streams_check import TAP, put, value_sql, wait_value  # noqa: E402

PORT = sys.argv[1]
PROXY = "http://127.0.0.1:%s" % PORT
TABLE = "StrFault062"


def arm(fault, count=1):
    req = urllib.request.Request(
        PROXY + "/__streams", method="POST",
        data=json.dumps({"fault": fault, "count": count}).encode())
    urllib.request.urlopen(req).read()


def streams_state():
    return json.load(urllib.request.urlopen(PROXY + "/__streams"))


def proxy_requests(op):
    s = json.load(urllib.request.urlopen(PROXY + "/__stats"))
    return s["requests"].get(op, 0)


def wait_for(pred, timeout=sc.BOUND * 3):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.05)
    return False


def injected(fault, n=1):
    return wait_for(lambda: streams_state()["injected"].get(fault, 0) >= n)


def seen(c, r, pk, v):
    sql = value_sql("t", pk)
    r.rows(sql)
    r.rows(sql)
    put(c, TABLE, pk, v)
    return wait_value(r, sql, v) is not None


def main():
    c = sc.fixtures.connect()
    sc.make_table(c, TABLE, "KEYS_ONLY")
    os.environ["DYNAMODB_STREAMS_RECHECK"] = "0.5"
    r = sc.Reader(endpoint=PROXY)
    r.rows("CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
           "coherence=streams, columns='v N')" % TABLE)
    r.rows("CREATE VIRTUAL TABLE m USING dynamodb(table=%s, "
           "coherence=streams, columns='v N', max_staleness=1)" % TABLE)
    TAP.ok(r.wait_following(TABLE), "faults: the reader follows through the proxy")
    TAP.ok(seen(c, r, "p0", 100), "faults: a change seen through the proxy")

    # an expired iterator: reopened after the last record
    its = proxy_requests("GetShardIterator")
    arm("expired")
    TAP.ok(injected("expired") and seen(c, r, "p1", 101),
           "expired iterator: the next change seen")
    st = r.stats(TABLE)
    TAP.ok(st.get("state") == "following" and st.get("clears") == 0 and
           proxy_requests("GetShardIterator") == its + 1,
           "expired iterator: reopened (one GetShardIterator), nothing cleared",
           json.dumps(st))

    # throttled three times: backed off
    arm("limit", 3)
    TAP.ok(injected("limit", 3) and seen(c, r, "p2", 102),
           "LimitExceededException x3: backed off, the change seen")

    # throttled for ever: max_staleness=1 sends reads to DynamoDB
    sql_t, sql_m = value_sql("t", "p3"), value_sql("m", "p3")
    r.rows(sql_t)
    limited = streams_state()["injected"].get("limit", 0)
    arm("limit", -1)
    # The reader asks one GetRecords at a time: once one is refused, a
    # GetRecords that passed before the fault was armed has been applied
    # (under load it can take over a second, moving the position forward
    # after the lag was already read above 1.5 s).
    throttled = injected("limit", limited + 1)
    lagging = throttled and wait_for(
        lambda: (r.stats(TABLE).get("lag_s") or 0) > 1.5)
    st = r.stats(TABLE)
    r.rows(sql_m)
    last_m = r.last()
    r.rows(sql_t)
    last_t = r.last()
    TAP.ok(lagging and last_m.get("requests", {}).get("GetItem") == 1 and
           last_t.get("cache_hits") == 1,
           "throttled for ever: max_staleness=1 reads DynamoDB, the other the "
           "cache", ["throttled %s lagging %s" % (throttled, lagging),
                     json.dumps(st), json.dumps(last_m), json.dumps(last_t)])
    arm("none")
    # the lag moves between polls (up to a poll's wait and its request):
    # read again while it is under the bound, a few times under load
    for _ in range(10):
        caught = wait_for(lambda: (r.stats(TABLE).get("lag_s") or 9) < 0.5)
        r.rows(sql_m)
        r.rows(sql_m)
        last_m = r.last()
        if not caught or last_m.get("cache_hits") == 1:
            break
    TAP.ok(caught and last_m.get("cache_hits") == 1,
           "caught up: max_staleness=1 reads the cache again", json.dumps(last_m))

    # trimmed: cleared, fallback, anchored again
    sql = value_sql("t", "p4")
    r.rows(sql)
    clears = r.stats(TABLE).get("clears", 0)
    arm("trimmed")
    TAP.ok(injected("trimmed") and
           wait_for(lambda: r.stats(TABLE).get("state") == "following" and
                    r.stats(TABLE).get("clears", 0) == clears + 1),
           "TrimmedDataAccessException: cleared once, following again",
           json.dumps(r.stats(TABLE)))
    r.rows(sql)
    TAP.ok(r.last().get("cache_misses") == 1,
           "TrimmedDataAccessException: the table's entries are gone")
    TAP.ok(seen(c, r, "p4", 104), "TrimmedDataAccessException: the next change "
           "seen")

    # a shard ends: its child is followed
    arm("shardend")
    TAP.ok(injected("shardend") and
           wait_for(lambda: streams_state()["child_iterators"] >= 1) and
           seen(c, r, "p5", 105),
           "a shard ends: its child followed, the change seen",
           json.dumps(streams_state()))

    # the stream disabled, then enabled again (a new stream)
    c.update_table(TableName=TABLE,
                   StreamSpecification={"StreamEnabled": False})
    fell = wait_for(lambda: r.stats(TABLE).get("state", "").startswith(
        "fallback-ttl"))
    st = r.stats(TABLE)
    r.rows(value_sql("t", "p5"))  # a statement now: dynamodb_last()'s
    last = r.last()
    streams = last.get("streams") or [{}]
    TAP.ok(fell and "disabled" in st.get("state", "") and
           streams[0].get("state") == "fallback-ttl" and
           streams[0].get("lag_s") is None,
           "stream disabled: fallback-ttl, saying why",
           [json.dumps(st), json.dumps(last)])
    r.rows(value_sql("m", "p5"))
    r.rows(value_sql("m", "p5"))  # a second read: cached, were it allowed
    last_m = r.last()
    TAP.ok(last_m.get("requests", {}).get("GetItem") == 1 and
           not last_m.get("cache_hits"),
           "stream disabled: max_staleness=1 reads DynamoDB while no reader "
           "vouches for the cache", json.dumps(last_m))
    c.update_table(TableName=TABLE,
                   StreamSpecification={"StreamEnabled": True,
                                        "StreamViewType": "KEYS_ONLY"})
    TAP.ok(r.wait_following(TABLE, 30) and seen(c, r, "p6", 106),
           "stream enabled again: following the new stream, the change seen",
           json.dumps(r.stats(TABLE)))
    errs = r.rows("SELECT value FROM dynamodb_stats WHERE name = "
                  "'stream.%s.errors'" % TABLE)
    print("# reader errors counted: %s" % errs)
    r.close()
    sc.fixtures.drop_table(c, TABLE)
    TAP.done()
    return 0  # suite 62 reads a non-zero status as the driver's crash


if __name__ == "__main__":
    sys.exit(main())
