#!/usr/bin/env python3
"""Summarise callgrind_annotate output as markdown tables.

    python3 bench/scale/top.py N DIR W...

For each W (w2, w4, w5): DIR/W.txt and DIR/W.inclusive.txt, the output of
callgrind_annotate --inclusive=no and =yes.

Self cost: the N most expensive functions, entries of one function merged
(callgrind lists a function as `???:name` when instrumentation started in
the middle of it, and recursion levels as name'2).  Inclusive: the N most
expensive functions of build/dynamodb.so.
"""

import os
import re
import sys

LINE = re.compile(r"^\s*([\d,]+) \(\s*([\d.]+)%\)\s+(.*)$")
ROOT = os.getcwd() + "/"
# library functions whose inclusive cost tells where the time goes
LIB_ENTRIES = ["curl_easy_perform", "curl_mvsnprintf", "curl_mvaprintf",
               "SHA256_Update", "SHA256_Final", "HMAC", "cJSON_ParseWithLength",
               "cJSON_Delete"]
ITEMS = {"w2": 100000, "w4": 2000, "w5": 2000}
TITLE = {"w2": "workload 2, full Scan rendering every item's JSON "
               "(`SELECT count(*), sum(length(item)) FROM t`, 100,000 items)",
         "w4": "workload 4, 2,000 GetItems, cold cache (the join from a "
               "temp table of keys; 2,000 HTTP calls)",
         "w5": "workload 5, 2,000 GetItems from the warm cache (the join "
               "from a temp table of keys, second run)"}


def parse(path, inclusive=False):
    total, rows = 0, {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            ir, rest = int(m.group(1).replace(",", "")), m.group(3)
            if "PROGRAM TOTALS" in rest:
                total = ir
                continue
            obj = ""
            mo = re.match(r"^(.*?) \[(.*)\]$", rest)
            if mo:
                rest, obj = mo.group(1), mo.group(2)
            file, _, fn = rest.rpartition(":")
            if inclusive and re.search(r"'\d+$", fn):
                continue  # inside the outer level's inclusive cost
            fn = re.sub(r"'\d+$", "", fn)
            if file.startswith("./"):
                file = file.split("/")[-1]
            if fn.startswith("<counts for"):
                continue
            r = rows.setdefault(fn, {"ir": 0, "file": "???", "obj": ""})
            # self: the entries of one function add up (lines of other
            # files inlined into it); inclusive: they overlap, keep the most
            r["ir"] = max(r["ir"], ir) if inclusive else r["ir"] + ir
            if file and file != "???" and r["file"] == "???":
                r["file"] = file.replace(ROOT, "")
            if obj:
                r["obj"] = obj.rsplit("/", 1)[-1]
    return total, rows


def where(fn, r):
    if r["file"] == "???" and r["obj"].startswith("libsqlite3"):
        if fn.startswith("0x"):
            return "libsqlite3 (no symbols) %s" % fn
        return "libsqlite3:%s" % fn
    return "%s:%s" % (r["file"], fn)


def main(argv):
    n, d = int(argv[1]), argv[2]
    for w in argv[3:]:
        total, rows = parse(os.path.join(d, w + ".txt"))
        print("### Profile of %s" % TITLE[w])
        print()
        print("callgrind, instructions of the statement only: %s Ir in all, "
              "%.0f Ir per item." % (format(total, ","),
                                     total / ITEMS[w]))
        print()
        print("| # | self % | self Ir | file:function | object |")
        print("|---:|---:|---:|---|---|")
        ranked = sorted(rows.items(), key=lambda kv: -kv[1]["ir"])[:n]
        for i, (fn, r) in enumerate(ranked, 1):
            print("| %d | %.1f | %s | %s | %s |" % (
                i, 100.0 * r["ir"] / max(total, 1), format(r["ir"], ","),
                where(fn, r), r["obj"] or "?"))
        print()
        _, irows = parse(os.path.join(d, w + ".inclusive.txt"),
                         inclusive=True)
        mine = [(fn, r) for fn, r in irows.items()
                if r["obj"].startswith("dynamodb")]
        mine.sort(key=lambda kv: -kv[1]["ir"])
        libs = [(fn, irows[fn]) for fn in LIB_ENTRIES if fn in irows
                and irows[fn]["ir"] >= total / 200]
        if libs:
            print("Inclusive cost of library entry points: " + "; ".join(
                "%s %.1f%%" % (fn, 100.0 * r["ir"] / max(total, 1))
                for fn, r in libs))
            print()
        print("Inclusive cost of the extension's functions (top %d): " % n
              + "; ".join("%s %.1f%%" % (where(fn, r),
                                         100.0 * r["ir"] / max(total, 1))
                          for fn, r in mine[:n]))
        print()


if __name__ == "__main__":
    main(sys.argv)
