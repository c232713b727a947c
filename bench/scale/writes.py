#!/usr/bin/env python3
"""The bulk-writes benchmark, side by side; prints the report.

    python3 bench/scale/writes.py ROOT URL TABLE WORKDIR

URL is DynamoDB Local's endpoint (its own, started by writes_run.sh with a
2 GiB heap), TABLE an empty table (PK S, SK S).  Called by
bench/scale/writes_run.sh (make bench-writes).

Workloads, each on items of ~250 bytes (PK, SK, n, a pad of 200 bytes,
brand), every client on partitions of its own (a tag per run, client and
repetition):

  insert_stmt   10,000 rows in 100 partitions as one statement outside a
                transaction: INSERT INTO t ... SELECT (a recursive CTE) /
                boto3's batch_writer / the JS SDK's BatchWriteItem loop
  insert_txn    the same INSERT between BEGIN and COMMIT (the peers: the
                same loop; one peer run serves both rows)
  update        a 1,000-item partition: UPDATE t SET item = json_set(item,
                '$.brand', 'v2') WHERE PK = ? outside a transaction /
                Query + update_item in 8 threads (boto3) or 8 at a time (JS)
  delete        a 1,000-item partition: DELETE FROM t WHERE PK = ? /
                Query of the keys + batch_writer (boto3) or the
                BatchWriteItem loop (JS)

Each measurement is its own process, one after another, first through
bench/scale/proxy.py (BENCH_DELAY_MS, 20, added to every request) and then
direct, the two runs and the clients interleaved: repetition r runs the
clients in the order rotated by r, and each repetition does the 20 ms run
then the direct one (the extension's two INSERTs alternate which goes
first).  The extension in the sqlite3 shell (.timer on: its
user+sys is getrusage of the shell, all threads), the peers timed
in-process (writes_peer.py, writes_peer.mjs); the partitions updated and
deleted are loaded by boto3 before, untimed.  After each run boto3 checks
what the workload left (count and checksum: the sum of n, of the pads'
lengths, the items with brand v2) against what it must be.  Medians of
BENCH_WRITE_REPS (3) repetitions; nothing is asserted: this prints, and
the report says which of its goals (README.md beside it) were met.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Bench, machine, rotated  # noqa: E402

CLIENTS = ["ext", "boto3", "JS SDK v3"]
WORKLOADS = [
    ("insert_stmt", "10,000-row INSERT, one statement"),
    ("insert_txn", "10,000-row INSERT in BEGIN ... COMMIT"),
    ("update", "1,000-row UPDATE of a partition"),
    ("delete", "1,000-row DELETE of a partition"),
]
N_INSERT, N_PART = 10000, 1000
# what boto3 must find after each workload: [count, sum n, sum len(pad),
# brand v2]
WANT = {
    "insert": [N_INSERT, N_INSERT * (N_INSERT - 1) // 2, 200 * N_INSERT, 0],
    "update": [N_PART, N_PART * (N_PART - 1) // 2, 200 * N_PART, N_PART],
    "delete": [0, 0, 0, 0],
}
# the goals: (workload, against, at most this ratio)
GOALS = [("insert_stmt", "best", 0.5), ("insert_txn", "best", 0.5),
         ("update", "boto3", 0.5), ("delete", "boto3", 0.5)]


def ext_sql(workload, tag):
    """The extension's statements of a workload, the timed ones marked
    with .timer on."""
    ins = ("WITH RECURSIVE s(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM s "
           "WHERE v < %d) INSERT INTO t(PK, SK, item) SELECT 'I#%s#' || "
           "printf('%%03d', v / 100), printf('%%05d', v), json_object('n', v, "
           "'pad', printf('%%.*c', 200, 'x'), 'brand', 'b') FROM s;"
           % (N_INSERT - 1, tag))
    if workload == "insert_stmt":
        return [ins]
    if workload == "insert_txn":
        return ["BEGIN;", ins, "COMMIT;"]
    if workload == "update":
        return ["UPDATE t SET item = json_set(item, '$.brand', 'v2') "
                "WHERE PK = 'U#%s';" % tag]
    return ["DELETE FROM t WHERE PK = 'D#%s';" % tag]


class WriteBench(Bench):
    def tag(self, client, rep):
        return "%s-%s-%d" % (self.run, {"ext": "e", "boto3": "b"}.get(
            client, "j"), rep)

    def helper(self, workload, tag):
        out, _, _, _ = self.timed(["python3", "bench/scale/writes_peer.py",
                                   workload, self.url, self.table, tag])
        return out

    def ext_run(self, workload, rep):
        tag = self.tag("ext", rep) + ("t" if workload == "insert_txn" else "")
        stmts = ext_sql(workload, tag)
        lines = [".load build/dynamodb",
                 "CREATE VIRTUAL TABLE t USING dynamodb(table=%s);"
                 % self.table, ".timer on"] + stmts + [
            ".timer off",
            "SELECT 'CALLS', operation, count(*) FROM dynamodb_log "
            "WHERE operation != 'DescribeTable' GROUP BY 2;"]
        script = os.path.join(self.work, "ext-%d.sql" % (self.n + 1))
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(self.env, AWS_ENDPOINT_URL_DYNAMODB=self.target)
        self.commands.append("sqlite3 :memory: <<'SQL'   # %s\n%s\nSQL" % (
            workload, "\n".join(lines[:3] + ext_sql(workload, "TAG"))))
        out, _, pcpu, rss = self.timed(["sqlite3", ":memory:"],
                                       stdin_path=script, env=env)
        wall = cpu = 0.0
        calls, ops = 0, {}
        for line in out.splitlines():
            m = re.match(r"Run Time: real ([\d.]+) user ([\d.]+) sys ([\d.]+)",
                         line)
            if m:
                wall += float(m.group(1))
                cpu += float(m.group(2)) + float(m.group(3))
            elif line.startswith("CALLS|"):
                _, op, n = line.split("|")
                ops[op] = int(n)
                calls += int(n)
        if "Error" in out or not ops:
            raise RuntimeError("ext %s: %s" % (workload, out[-1500:]))
        rows = N_INSERT if workload.startswith("insert") else N_PART
        self.record("ext", workload, rep, rows, calls, wall, cpu, None, pcpu,
                    rss, {"ops": ops, "tag": tag})

    def peer_run(self, client, workload, rep):
        tag = self.tag(client, rep)
        if client == "JS SDK v3":
            argv = ["node", "bench/scale/writes_peer.mjs", workload,
                    self.target, self.table, tag]
        else:
            argv = ["python3", "bench/scale/writes_peer.py", workload,
                    self.target, self.table, tag]
        self.commands.append(" ".join(argv).replace(self.target, "$TARGET")
                             .replace(tag, "TAG"))
        out, _, pcpu, rss = self.timed(argv)
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                for wk in (["insert_stmt", "insert_txn"]
                           if workload == "insert" else [workload]):
                    self.record(client, wk, rep, r["items"], r["calls"],
                                r["wall"], r["cpu"], None, pcpu, rss,
                                {"tag": tag, "shared": wk == "insert_txn"})

    def checks(self, rep):
        """boto3 reads what each client's workloads of this repetition
        left, for each tag: count and checksums against WANT."""
        for r in self.results:
            if r["rep"] != rep or r["run"] != self.run or "checked" in r:
                continue
            got = json.loads(self.helper("check", r["tag"]))
            kind = ("insert" if r["workload"].startswith("insert")
                    else r["workload"])
            r["checked"] = got[kind] == WANT[kind]
            r["found"] = got[kind]

    def repetition(self, rep):
        for client in rotated(CLIENTS, rep):
            self.helper("load", self.tag(client, rep))
        for client in rotated(CLIENTS, rep):
            if client == "ext":
                # the two INSERTs in turn first: DynamoDB Local's own time
                # for a TransactWriteItems varies with what ran before
                for wk, _ in rotated(WORKLOADS[:2], rep) + WORKLOADS[2:]:
                    self.ext_run(wk, rep)
            else:
                for wk in ("insert", "update", "delete"):
                    self.peer_run(client, wk, rep)
        self.checks(rep)


def med(b, run, client, wk, key):
    xs = [r[key] for r in b.results if r["run"] == run and
          r["client"] == client and r["workload"] == wk]
    return statistics.median(xs) if xs else None


def report(b, mach):
    out = []
    w = out.append
    w("## make bench-writes")
    w("")
    w("%s CPUs (%s), load %s at the start; sqlite3 %s, python %s + boto3 "
      "%s, node %s + @aws-sdk/client-dynamodb %s; the extension at %s. "
      "Medians of %d repetitions; DynamoDB Local with a 2 GiB heap on the "
      "same CPUs." % (mach["nproc"], mach["cpu"], " ".join(mach["load"]),
                      mach["sqlite3"], mach["python"], mach["boto3"],
                      mach["node"], mach["client-dynamodb"],
                      mach["extension"], b.reps))
    w("")
    for run in b.runs:
        w("| %s | extension | boto3 | JS SDK v3 | ratio (ext / best peer) |"
          " ext calls |" % ("20 ms a request" if run == "20ms" else "direct"))
        w("|---|---:|---:|---:|---:|---|")
        for wk, name in WORKLOADS:
            e = med(b, run, "ext", wk, "wall")
            p = [med(b, run, c, wk, "wall") for c in CLIENTS[1:]]
            best = min(x for x in p if x is not None) if any(p) else None
            ops = [r["ops"] for r in b.results if r["run"] == run and
                   r["client"] == "ext" and r["workload"] == wk]
            w("| %s | %s | %s | %s | %s | %s |" % (
                name, fmt(e), fmt(p[0]), fmt(p[1]),
                "%.2f×" % (e / best) if e and best else "?",
                ", ".join("%s %d" % kv for kv in sorted(ops[0].items()))
                if ops else ""))
        w("")
    w("Client CPU (user+sys) per written row, 20 ms run, µs:")
    w("")
    w("| workload | extension | boto3 | JS SDK v3 | ext / boto3 |")
    w("|---|---:|---:|---:|---:|")
    for wk, name in WORKLOADS:
        vals = []
        for c in CLIENTS:
            cp, rows = med(b, "20ms", c, wk, "cpu"), med(b, "20ms", c, wk,
                                                          "items")
            vals.append(cp / rows * 1e6 if cp is not None and rows else None)
        w("| %s | %s | %s | %s | %s |" % (
            name, fmt(vals[0], 1), fmt(vals[1], 1), fmt(vals[2], 1),
            "1/%.0f" % (vals[1] / vals[0]) if vals[0] and vals[1] else "?"))
    w("")
    bad = [r for r in b.results if not r.get("checked")]
    w("Checked afterwards with boto3 (count, sum of n, sum of the pads' "
      "lengths, items with brand v2, over consistent Queries): %s."
      % ("every workload of every client left what it must" if not bad else
         "%d measurements did NOT: %s" % (len(bad), "; ".join(
             "%s %s %s rep %d found %s" % (r["run"], r["client"],
                                             r["workload"], r["rep"],
                                             r.get("found")) for r in bad))))
    w("")
    w("Goals of the writes (20 ms a request):")
    w("")
    w("| goal | result |")
    w("|---|---|")
    for wk, against, limit in GOALS:
        e = med(b, "20ms", "ext", wk, "wall")
        if against == "best":
            ps = [med(b, "20ms", c, wk, "wall") for c in CLIENTS[1:]]
            p = min(x for x in ps if x is not None)
        else:
            p = med(b, "20ms", against, wk, "wall")
        ratio = e / p if e and p else None
        w("| %s ≤ %.1f× %s | %s: %s× (%s s against %s s) |" % (
            dict(WORKLOADS)[wk], limit,
            "the best peer" if against == "best" else against,
            "**met**" if ratio is not None and ratio <= limit else
            "**not met**", fmt(ratio, 2), fmt(e), fmt(p)))
    worst = None
    for wk, _ in WORKLOADS:
        e, p = med(b, "20ms", "ext", wk, "cpu"), med(b, "20ms", "boto3", wk,
                                                     "cpu")
        if e is not None and p:
            worst = max(worst or 0, e / p)
    w("| client CPU per written row ≤ 1/10 of boto3's | %s: at most 1/%s "
      "(the workload closest to boto3) |" % (
          "**met**" if worst is not None and worst <= 0.1 else "**not met**",
          "%.0f" % (1 / worst) if worst else "?"))
    w("")
    w("### Commands")
    w("")
    w("```")
    for c in dict.fromkeys(b.commands):
        w(c)
    w("```")
    return "\n".join(out) + "\n"


def fmt(x, nd=3):
    return "?" if x is None else ("%.*f" % (nd, x))


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    root, url, table, work = argv[1:5]
    os.chdir(root)
    b = WriteBench(root, url, table, work)
    b.reps = int(os.environ.get("BENCH_WRITE_REPS", "3"))
    b.runs = ["20ms", "0ms"]
    mach = machine()
    proxy = b.start_proxy()
    try:
        for rep in range(1, b.reps + 1):
            for run in b.runs:
                b.run = run
                b.target = proxy if run == "20ms" else url
                b.repetition(rep)
    finally:
        b.stop_proxy()
    text = report(b, mach)
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"machine": mach, "results": b.results}, f, indent=1)
    with open(os.path.join(work, "report.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv)
