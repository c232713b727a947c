#!/usr/bin/env python3
"""make bench-streams (bench/streams_lag.sh): how soon an outside write is
seen by a coherence=streams reader, under a steady write load.

A KEYS_ONLY table; a boto3 thread writes RATE items a second to keys the
reader does not read (the load); the reader process (tests/faults/
streams_reader.py, the extension in Python's sqlite3) keeps key 'hot'
cached; N times, boto3 writes a new value of 'hot' and the reader polls
its cached read every 5 ms until the value shows.  Prints the lag's
distribution (p50, p90, p99, max) and the stream requests the reader
sent.  Only prints.  Environment: STREAMS_N (default 100), STREAMS_RATE
(default 50 writes a second).
"""
import os
import random
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "faults"))
import streams_check as sc  # noqa: E402

N = int(os.environ.get("STREAMS_N", "100"))
RATE = float(os.environ.get("STREAMS_RATE", "50"))
TABLE = "BenchStreams"


def load(c, stop, count):
    i = 0
    while not stop.is_set():
        t0 = time.monotonic()
        sc.put(c, TABLE, "load%d" % (i % 1000), i)
        i += 1
        count[0] = i
        dt = 1.0 / RATE - (time.monotonic() - t0)
        if dt > 0:
            time.sleep(dt)


def main():
    c = sc.fixtures.connect()
    sc.make_table(c, TABLE, "KEYS_ONLY", 1)
    r = sc.Reader()
    r.rows("CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
           "coherence=streams, columns='v N')" % TABLE)
    if not r.wait_following(TABLE):
        print("    the reader did not start following: %s" % r.stats(TABLE))
        return 1
    stop, count = threading.Event(), [0]
    th = threading.Thread(target=load, args=(sc.fixtures.connect(), stop,
                                             count))
    if RATE > 0:
        th.start()
    time.sleep(1)
    sql = sc.value_sql("t", "hot")
    lat = []
    t0 = time.monotonic()
    try:
        for i in range(N):
            r.rows(sql)
            r.rows(sql)  # cached
            # at a random phase of the reader's polls (right after a change
            # is seen is right after a poll: the lag would be a full interval)
            time.sleep(random.uniform(0, 0.5))
            sc.put(c, TABLE, "hot", i)
            t = time.monotonic()
            while True:
                got = r.rows(sql)
                if got and got[0][0] == i:
                    lat.append(time.monotonic() - t)
                    break
                if time.monotonic() - t > 30:
                    break
                time.sleep(0.005)
    finally:
        stop.set()
        if RATE > 0:
            th.join()
    el = time.monotonic() - t0
    st = r.stats(TABLE)
    polls = r.one("SELECT count(*) FROM dynamodb_log WHERE operation = "
                  "'GetRecords'")
    r.close()
    sc.fixtures.drop_table(c, TABLE)
    print("  STREAMS_RATE=%g:" % RATE)
    print("    %d outside writes under a load of %.0f writes/s (%.0f done "
          "in %.0f s)" % (N, RATE, count[0] / el, el))
    if lat:
        print("    seen after: p50 %.3f s, p90 %.3f s, p99 %.3f s, max %.3f s; "
              "%d of %d within 1 s" %
              (sc.pct(lat, 50), sc.pct(lat, 90), sc.pct(lat, 99), max(lat),
               sum(1 for x in lat if x <= 1), N))
    print("    reader: %s records, %s GetRecords (%.1f a second)" %
          (st.get("records"), polls, (polls or 0) / el))
    return 0


if __name__ == "__main__":
    sys.exit(main())
