#!/usr/bin/python3
"""A report from Python: orders by status, from the e-commerce example.

    /usr/bin/python3 examples/python/report.py [TABLE]      (default Store)

Run it from the repository's root against DynamoDB Local with the example
loaded, e.g. inside `make shell`:

    sqlite> .shell /usr/bin/python3 examples/python/report.py

(`.shell` hands the command the shell's environment: the endpoint, the
dummy credentials and the region that make shell set.)  The extension is
build/dynamodb, or the path in DYNAMODB_EXT.  Needs a Python whose sqlite3
module can load extensions: Debian's /usr/bin/python3 can; many others
(pyenv's, python.org's macOS builds) are compiled without it
(docs/python.md says how to check).
"""
import os
import sqlite3
import sys

EXT = os.environ.get("DYNAMODB_EXT", "build/dynamodb")
TABLE = sys.argv[1] if len(sys.argv) > 1 else "Store"

conn = sqlite3.connect(":memory:")
if not hasattr(conn, "enable_load_extension"):
    sys.exit("this python's sqlite3 cannot load extensions: use /usr/bin/python3")
conn.enable_load_extension(True)
conn.load_extension(EXT)
conn.enable_load_extension(False)       # only this one extension
conn.execute("CREATE VIRTUAL TABLE shop USING dynamodb(table=%s)" % TABLE)
conn.execute("SELECT dynamodb_calls()")  # forget the DescribeTable

# Type = 'ORDER' is GSI2's partition key: one Query of the index, not a
# Scan of the table.  Parameters (?) work as in any sqlite3 query.
rows = conn.execute("""
    SELECT json_extract(item, '$.status') AS status, count(*) AS orders,
           sum(json_extract(item, '$.total')) AS total
      FROM shop WHERE Type = ? GROUP BY 1 ORDER BY 1""", ("ORDER",))
print("%-10s %6s %8s" % ("status", "orders", "total"))
for status, orders, total in rows:
    print("%-10s %6d %8.2f" % (status, orders, total))
print("DynamoDB calls:", conn.execute("SELECT dynamodb_calls()").fetchone()[0])
conn.close()
