#!/usr/bin/env python3
"""2,000 key lookups at 20 ms a call: the extension's join (one
GetItem per outer row), its keys = ? form (BatchGetItem of the whole list),
and boto3's batch_get_item of 100 keys with 4 calls in flight.

    AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:PORT \\
        python3 bench/scale/keys_bench.py [DELAY_MS] [N]

Loads N (default 2,000) items of about 250 bytes into table BenchKeys of
that DynamoDB Local (once), starts bench/scale/proxy.py in front of it with
DELAY_MS (default 20) per request, then times each client, cold (a fresh
process, so no item cache), through the proxy.  Wall time of the statement
alone for the extension (the shell's .timer), of the calls alone for boto3
(the client made and the table described before the clock starts, as
bench.py does).  Prints one line per client and the ratios.
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import fixtures  # noqa: E402

TABLE = "BenchKeys"


def load(c, n):
    if fixtures.table_exists(c, TABLE) and \
            fixtures.count_items(c, TABLE) == n:
        return
    fixtures.drop_table(c, TABLE)
    fixtures.create_table(c, TABLE, "PK", "SK")
    items = [{"PK": "CUSTOMER#%05d" % (i // 10), "SK": "ORDER#%05d" % i,
              "total": i, "status": "SHIPPED", "note": "x" * 180}
             for i in range(n)]
    fixtures.put_items(c, TABLE, items)


def ext(url, n, form):
    keys = ("SELECT json_group_array(json_array(pk, sk)) FROM k")
    stmt = {
        "join": "SELECT count(*), sum(length(t.item)) FROM k CROSS JOIN t "
                "ON t.PK = k.pk AND t.SK = k.sk;",
        "keys": "SELECT count(*), sum(length(item)) FROM t "
                "WHERE keys = (%s);" % keys,
    }[form]
    script = "\n".join([
        ".load build/dynamodb",
        "CREATE VIRTUAL TABLE t USING dynamodb(table=%s, endpoint='%s');"
        % (TABLE, url),
        "CREATE TEMP TABLE k(pk, sk);",
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
        "WHERE i < %d) INSERT INTO k SELECT printf('CUSTOMER#%%05d', i / 10),"
        " printf('ORDER#%%05d', i) FROM n;" % (n - 1),
        ".timer on", stmt, ".timer off", "SELECT dynamodb_calls();", ""])
    p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch",
                        ":memory:"], input=script.encode(), cwd=ROOT,
                       capture_output=True, timeout=600)
    out = p.stdout.decode()
    m = re.search(r"Run Time: real ([0-9.]+)", out)
    if p.returncode or not m:
        raise SystemExit("sqlite3 failed: %s %s" % (out, p.stderr.decode()))
    lines = [x for x in out.splitlines() if not x.startswith("Run Time")]
    calls = lines[-1].split(", ")
    return float(m.group(1)), lines[0], "%d (%s, then %s)" % (
        len(calls), calls[0], calls[-1])


def boto_batch(url, n):
    c = fixtures.connect(url)
    c.describe_table(TableName=TABLE)
    keys = [{"PK": {"S": "CUSTOMER#%05d" % (i // 10)},
             "SK": {"S": "ORDER#%05d" % i}} for i in range(n)]
    chunks = [keys[i:i + 100] for i in range(0, n, 100)]

    def one(chunk):
        got, req = [], {TABLE: {"Keys": chunk}}
        while req:
            r = c.batch_get_item(RequestItems=req)
            got += r["Responses"].get(TABLE, [])
            req = r.get("UnprocessedKeys") or None
        return got

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        items = [it for part in ex.map(one, chunks) for it in part]
    return time.monotonic() - t0, len(items)


def main():
    delay = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    base = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    load(fixtures.connect(base), n)
    with tempfile.TemporaryDirectory() as d:
        portfile = os.path.join(d, "port")
        upstream = base.rsplit(":", 1)[1]
        proxy = subprocess.Popen([sys.executable, os.path.join(
            ROOT, "bench/scale/proxy.py"), upstream, str(delay), portfile,
            "900"])
        try:
            for _ in range(100):
                if os.path.exists(portfile) and open(portfile).read().strip():
                    break
                time.sleep(0.1)
            url = "http://127.0.0.1:%s" % open(portfile).read().strip()
            tk, rk, ck = ext(url, n, "keys")
            tb, nb = boto_batch(url, n)
            tj, rj, cj = ext(url, n, "join")
        finally:
            proxy.terminate()
            proxy.wait()
    print("delay %d ms, %d keys" % (delay, n))
    print("extension, join (GetItem per row): %.2f s  rows|bytes %s  calls %s"
          % (tj, rj, cj))
    print("extension, keys = ?:               %.2f s  rows|bytes %s  calls %s"
          % (tk, rk, ck))
    print("boto3 batch_get_item, 4 in flight: %.2f s  items %d" % (tb, nb))
    print("join / keys = %.1fx; keys / boto3 batch = %.2fx" % (tj / tk,
                                                            tk / tb))


if __name__ == "__main__":
    main()
