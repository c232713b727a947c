import sqlite3, os, threading, faulthandler
faulthandler.enable()
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension("/work/wt/i29-tests/build/dynamodb")
t = threading.Timer(1.0, conn.interrupt); t.start()
try:
    conn.execute("CREATE VIRTUAL TABLE t USING dynamodb(table=X, endpoint='http://127.0.0.1:1', profile=r)")
except Exception as e: print("err", e)
print("done")
