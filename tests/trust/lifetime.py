#!/usr/bin/python3
"""The cache and counters outlive the last connection (tests/suites/
27-cache-trust.sh), from Python's sqlite3 module (Debian's /usr/bin/python3,
which can load extensions): connect, load, read (fills the cache), close
(SQLite dlclose()s the extension with its last connection), connect again,
load, read: a cache hit, the counters kept.  Prints TAP lines.

Environment: AWS_ENDPOINT_URL_DYNAMODB (the test server), DDB_EXT
(extension, default build/dynamodb).  The table is made by
tests/harness/fixtures.py, run with the `python3` on PATH (which has boto3).
"""
import os
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from tap import Tap  # noqa: E402

EXT = os.environ.get("DDB_EXT", os.path.join(ROOT, "build", "dynamodb"))
TABLE = "Life27"
GET = ("SELECT json_extract(item, '$.name') FROM t "
       "WHERE PK = 'CUSTOMER#alice' AND SK = 'PROFILE'")

TAP = Tap("lifetime: ")


def session():
    """A new connection with the extension loaded and table t."""
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(EXT)
    db.execute("CREATE VIRTUAL TABLE t USING dynamodb(table=%s)" % TABLE)
    return db


def stats(db):
    return dict(db.execute("SELECT name, value FROM dynamodb_stats"))


def main():
    subprocess.run(["python3", os.path.join(ROOT, "tests", "harness", "fixtures.py"), "lesson",
                    TABLE], check=True, cwd=ROOT)
    db = session()
    first = db.execute(GET).fetchall()
    before = stats(db)
    db.close()

    db = session()  # the extension was unloaded with the last connection
    second = db.execute(GET).fetchall()
    after = stats(db)
    db.close()
    TAP.ok(first == [("Alice",)] and second == first, "the item reads the same",
           (first, second))
    TAP.ok(after.get("item_hits", 0) == before.get("item_hits", 0) + 1
           and after.get("requests_GetItem") == before.get("requests_GetItem"),
           "after close and connect again, the read is a cache hit "
           "(no GetItem)", (before, after))
    lookups = lambda st: st.get("item_hits", 0) + st.get("item_misses", 0)
    TAP.ok(before.get("requests", 0) >= 1 and after.get("requests") == before["requests"]
           and lookups(after) == lookups(before) + 1,
           "the counters are kept across the reconnect", (before, after))

    # many connect/close cycles: still one cache, no growth of hits lost
    for _ in range(20):
        db = session()
        db.execute(GET).fetchall()
        db.close()
    db = session()
    last = stats(db)
    db.close()
    TAP.ok(last.get("item_hits", 0) == after.get("item_hits", 0) + 20
           and last.get("requests_GetItem") == after.get("requests_GetItem"),
           "20 more reconnects, 20 more hits, no GetItem", (after, last))
    return TAP.done()


if __name__ == "__main__":
    sys.exit(main())
