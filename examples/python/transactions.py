#!/usr/bin/python3
"""When Python's writes reach DynamoDB: the DB-API's transactions.

    /usr/bin/python3 examples/python/transactions.py [TABLE]   (default Store)

Python's sqlite3 module, at its default isolation level (isolation_level
"", Python 3.11 and 3.12's default), opens a transaction itself before
every INSERT, UPDATE, DELETE or REPLACE: `BEGIN` is sent for you, and
nothing is committed until conn.commit() (or the end of a `with conn:`
block).  The extension buffers a transaction's writes and sends them at
COMMIT, so with Python:

  1. conn.execute("INSERT ...") sends nothing; conn.commit() sends it;
  2. reads on the same connection see the pending write before commit();
  3. an INSERT of a key that exists fails at commit(), not at execute();
  4. conn.rollback() (or closing without commit()) writes nothing (an
     UPDATE or DELETE reads its rows from DynamoDB itself, a consistent
     GetItem here, never from the cache, so that its write is computed
     from what DynamoDB holds);
  5. isolation_level=None is autocommit: each statement is sent at once.

Each step prints the DynamoDB calls it made (dynamodb_calls(), which
counts for the whole process) and then what DynamoDB holds, read by a
second connection with consistent_read=true (no cache).  Run from the repository's
root against DynamoDB Local with the e-commerce example loaded, e.g.
inside `make shell`: `.shell /usr/bin/python3 examples/python/transactions.py`.
It leaves the table as it found it.
"""
import os
import sqlite3
import sys

EXT = os.environ.get("DYNAMODB_EXT", "build/dynamodb")
TABLE = sys.argv[1] if len(sys.argv) > 1 else "Store"
KEY = ("CATEGORY#books", "PRODUCT#ulysses")


def connect(options="", **kwargs):
    conn = sqlite3.connect(":memory:", **kwargs)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    conn.execute("CREATE VIRTUAL TABLE shop USING dynamodb(table=%s%s)"
                 % (TABLE, options))
    return conn


def in_dynamodb():
    """The product as DynamoDB has it now (a consistent read)."""
    row = check.execute("SELECT json_extract(item, '$.price') FROM shop "
                        "WHERE PK = ? AND SK = ?", KEY).fetchone()
    return "price %s" % row[0] if row else "no item"


def show(what):
    """What the step sent (the calls since the last show()), then what
    DynamoDB holds."""
    sent = check.execute("SELECT dynamodb_calls()").fetchone()[0]
    now = in_dynamodb()
    check.execute("SELECT dynamodb_calls()")  # forget in_dynamodb()'s read
    print("   %-26s sent: %-14s DynamoDB: %s" % (what, sent, now))


conn = connect()                                   # isolation_level ""
check = connect(", consistent_read=true", isolation_level=None)
show("the connections made")

print("1. INSERT, then commit()")
conn.execute("INSERT INTO shop(PK, SK, Type, item) VALUES(?, ?, 'PRODUCT', ?)",
             KEY + ('{"price": 12.5}',))
print("   in_transaction:", conn.in_transaction)
show("execute(INSERT)")

print("2. the same connection reads its pending write")
print("   price on conn:", conn.execute(
    "SELECT json_extract(item, '$.price') FROM shop WHERE PK = ? AND SK = ?",
    KEY).fetchone()[0])
show("SELECT on conn")
conn.commit()
show("commit()")

print("3. an INSERT of a key that exists fails at commit()")
conn.execute("INSERT INTO shop(PK, SK, item) VALUES(?, ?, '{}')", KEY)
print("   execute(INSERT): no error yet")
try:
    conn.commit()
except sqlite3.Error as e:
    print("   commit():", type(e).__name__ + ":", e)
show("the failed commit()")

print("4. UPDATE, then rollback()")
conn.execute("UPDATE shop SET item = json_set(item, '$.price', 99) "
             "WHERE PK = ? AND SK = ?", KEY)
conn.rollback()
show("UPDATE, rollback()")

print("5. isolation_level=None: each statement at once")
auto = connect(isolation_level=None)
auto.execute("DELETE FROM shop WHERE PK = ? AND SK = ?", KEY)
print("   in_transaction:", auto.in_transaction)
show("execute(DELETE)")
for c in (conn, auto, check):
    c.close()
