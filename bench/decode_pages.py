#!/usr/bin/env python3
"""Write Scan pages as DynamoDB sends them, for bench/decode_instr.sh.

    python3 bench/decode_pages.py OUTDIR [PAGES] [ITEMS]

PAGES (4) files OUTDIR/page-N.json of ITEMS (1000) items each: the answer
body of a Scan of bench/scale's table, `{"Items":[...],"Count":..,
"ScannedCount":..,"LastEvaluatedKey":{..},"ConsumedCapacity":{..}}` in
DynamoDB's compact spelling, the items those of bench/scale/load.py
(make_item, seed 6: about 250 bytes as DynamoDB counts them, S, N, M, SS,
BOOL).  Deterministic: the same bytes on every run and machine, so no
server is needed.  Prints the number of items and bytes written.
"""
import importlib.util
import json
import os
import random
import sys


def load_module():
    """bench/scale/load.py as a module (its make_item)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "scale_load", os.path.join(here, "scale", "load.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv):
    if not argv or len(argv) > 3:
        sys.stderr.write(__doc__)
        return 2
    out = argv[0]
    pages = int(argv[1]) if len(argv) > 1 else 4
    per = int(argv[2]) if len(argv) > 2 else 1000
    mod = load_module()
    rng = random.Random(6)
    os.makedirs(out, exist_ok=True)
    n = total = 0
    for p in range(pages):
        items = []
        for _ in range(per):
            items.append(mod.make_item(rng, "CUST#%05d" % (n // 10),
                                       "ORDER#%04d" % (n % 10), "order", n))
            n += 1
        page = {"Items": items, "Count": per, "ScannedCount": per}
        if p + 1 < pages:
            last = items[-1]
            page["LastEvaluatedKey"] = {"PK": last["PK"], "SK": last["SK"]}
        page["ConsumedCapacity"] = {"TableName": "Bench",
                                    "CapacityUnits": per * 0.5 / 4}
        body = json.dumps(page, separators=(",", ":"), ensure_ascii=False)
        with open(os.path.join(out, "page-%d.json" % p), "w",
                  encoding="utf-8") as f:
            f.write(body)
        total += len(body.encode())
    print("%d items, %d bytes" % (n, total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
