#!/usr/bin/python3
"""pandas on the e-commerce example: read_sql, and json_normalize on item.

    /usr/bin/python3 examples/python/pandas_report.py [TABLE]  (default Store)

Needs pandas for that python (Debian: apt-get install python3-pandas).
Run from the repository's root against DynamoDB Local with the example
loaded, e.g. inside `make shell`:
`.shell /usr/bin/python3 examples/python/pandas_report.py`.
"""
import json
import os
import sqlite3
import sys

import pandas as pd

EXT = os.environ.get("DYNAMODB_EXT", "build/dynamodb")
TABLE = sys.argv[1] if len(sys.argv) > 1 else "Store"

conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(EXT)
conn.enable_load_extension(False)
conn.execute("CREATE VIRTUAL TABLE shop USING dynamodb(table=%s)" % TABLE)
pd.set_option("display.width", 100)

# 1. read_sql: SQL does the work, pandas gets the result (one Query of
#    GSI2: Type is its partition key).
orders = pd.read_sql(
    "SELECT PK AS customer, json_extract(item, '$.status') AS status,"
    "       json_extract(item, '$.total') AS total"
    "  FROM shop WHERE Type = 'ORDER'", conn)
print(orders.groupby("status")["total"].agg(["count", "sum"]))

# 2. json_normalize: the whole item, one column per attribute (nested
#    maps become a.b columns); an attribute an item lacks is NaN.
items = [json.loads(s) for (s,) in conn.execute(
    "SELECT item FROM shop WHERE Type = 'REVIEW'")]
reviews = pd.json_normalize(items)
print(reviews[["username", "product", "rating"]]
      .sort_values(["product", "username"]).to_string(index=False))
print("mean rating by product:")
print(reviews.groupby("product")["rating"].mean().round(2).to_string())
conn.close()
