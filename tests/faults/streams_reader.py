#!/usr/bin/env python3
"""The reading process of suites 61 and 62: Python's sqlite3 with the
extension loaded, run by a python3 that can load extensions (Debian's
/usr/bin/python3; boto3 is not needed here).  It reads one JSON command a
line on stdin and answers one JSON line on stdout:

    {"sql": "SELECT ..."}        {"rows": [[...], ...]} or {"error": "..."}
    {"sqls": ["...", ...]}       the same for each, in a list "all"
    {"threads": 1}               {"threads": N}: entries of /proc/self/task
    {"fork": "SELECT ..."}       fork(); the child counts its threads, runs
                                 the SQL on the inherited connection, and
                                 exits; {"child": {"threads": N, "rows" or
                                 "error": ...}}
    {"quit": 1}                  exits

    streams_reader.py EXTENSION
"""
import json
import os
import sqlite3
import sys


def run(db, sql):
    try:
        return {"rows": [list(r) for r in db.execute(sql).fetchall()]}
    except sqlite3.Error as e:
        return {"error": str(e)}


def threads():
    return len(os.listdir("/proc/self/task"))


def main():
    db = sqlite3.connect(":memory:", isolation_level=None,
                         check_same_thread=False)
    db.enable_load_extension(True)
    db.load_extension(sys.argv[1])
    for line in sys.stdin:
        cmd = json.loads(line)
        if "quit" in cmd:
            break
        if "sql" in cmd:
            out = run(db, cmd["sql"])
        elif "sqls" in cmd:
            out = {"all": [run(db, s) for s in cmd["sqls"]]}
        elif "threads" in cmd:
            out = {"threads": threads()}
        elif "fork" in cmd:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                res = {"threads": threads()}
                res.update(run(db, cmd["fork"]))
                res["threads_after"] = threads()
                os.write(w, json.dumps(res).encode())
                os._exit(0)
            os.close(w)
            data = b""
            while True:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                data += chunk
            os.close(r)
            os.waitpid(pid, 0)
            out = {"child": json.loads(data or b"{}")}
        else:
            out = {"error": "unknown command"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
