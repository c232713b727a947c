#!/usr/bin/env python3
"""cpu_table.py -- the CPU goals of `make bench` as one table.

    bench/cpu_table.py --load-start "A B C" OUT [OUT ...] [--scale results.json]

Reads the RESULT lines that bench/decode_instr.sh, bench/instr.sh and
bench/request_instr.sh print last (one a workload:

    RESULT <name> ours=<N> floor=<N> ratio=<R> unit=<unit> goal=<G>

ours and floor measured in the same run, the ratio ours / floor), and
prints them as a Markdown table beside the goal, with the load average at
the start (given) and now.  With --scale, the client CPU an item of
bench-scale's newest run (its results.json, 20 ms a request) for the
extension, boto3 and the JS SDK is printed under it: the peers beside us.
Only prints; exits 1 when no RESULT line was found (a bench that failed),
0 otherwise, whether or not the goals are met.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"^RESULT (\S+) ours=([\d.]+) floor=([\d.]+) "
                  r"ratio=([\d.]+) unit=(\S+) goal=([\d.]+)\s*$")
# bench-scale's workloads shown beside the peers, and their titles
SCALE = [("scan_json", "full Scan, every item's JSON"),
         ("query_json", "Query of 10,000 items, JSON"),
         ("get_cold", "2,000 GetItems, cold"),
         ("get_warm", "the 2,000 again, warm")]


def results(paths):
    """The RESULT lines of the files at paths, in order, as dicts."""
    out = []
    for p in paths:
        with open(p, errors="replace") as f:
            for line in f:
                m = LINE.match(line.strip())
                if m:
                    out.append({"name": m.group(1),
                                "ours": float(m.group(2)),
                                "floor": float(m.group(3)),
                                "ratio": float(m.group(4)),
                                "unit": m.group(5),
                                "goal": float(m.group(6))})
    return out


def scale_rows(path):
    """{(client, workload): median CPU seconds an item} of the 20 ms run,
    and the whole file."""
    with open(path) as f:
        data = json.load(f)
    per = {}
    for r in data.get("results", []):
        if r.get("run") != "20ms" or not r.get("items"):
            continue
        per.setdefault((r["client"], r["workload"]), []).append(
            r["cpu"] / r["items"])
    return {k: statistics.median(v) for k, v in per.items()}, data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load-start", default="?")
    ap.add_argument("--scale")
    ap.add_argument("outs", nargs="+")
    a = ap.parse_args()
    rows = results(a.outs)
    head = subprocess.run(["git", "log", "-1", "--format=%h"],
                          capture_output=True, text=True).stdout.strip()
    with open("/proc/loadavg") as f:
        load_end = " ".join(f.read().split()[:3])
    print("## CPU against the floor (at %s; %d CPUs; load average %s at the "
          "start, %s at the end)" % (head or "?", os.cpu_count(),
                                     a.load_start, load_end))
    print()
    print("| workload | unit | ours | floor (segments: 1) | ratio | goal | |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        print("| %s | %s | %.0f | %.0f | %.2f× | ≤ %.2f× | %s |" %
              (r["name"], r["unit"], r["ours"], r["floor"], r["ratio"],
               r["goal"], "met" if r["ratio"] <= r["goal"] else "NOT met"))
    if a.scale and os.path.exists(a.scale):
        med, data = scale_rows(a.scale)
        clients = ["ext", "boto3", "JS SDK v3"]
        print()
        print("Beside the peers (bench-scale at %s, 20 ms a request, load "
              "average %s at its start): client CPU (user+sys) a item, µs" %
              (data.get("machine", {}).get("extension", "?"),
               " ".join(data.get("machine", {}).get("load", ["?"]))))
        print()
        print("| workload | extension | boto3 | JS SDK v3 |")
        print("|---|" + "---:|" * len(clients))
        for wk, title in SCALE:
            cells = ["%.2f" % (1e6 * med[(c, wk)]) if (c, wk) in med else "-"
                     for c in clients]
            print("| %s | %s |" % (title, " | ".join(cells)))
    elif a.scale:
        print()
        print("(no bench-scale results at %s: run make bench-scale for the "
              "peers)" % a.scale)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
