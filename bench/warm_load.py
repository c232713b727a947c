#!/usr/bin/env python3
"""Load the warm-lookup benchmark's tables (bench/warm_instr.sh calls it).

    python3 bench/warm_load.py N SHAPE...

(Re)creates, for each SHAPE (a number of attributes: 5, 12, 40), the table
Warm<SHAPE> (PK S, SK S) with N items PK = K#00000.., SK = S.  Every item
has name (S), total (N) and pad (S, 100 bytes), the attributes the three
json_extract of the benchmark read; the others (SHAPE - 5 of them) are
strings, numbers, a boolean and now and then a small list or map: about
170, 300 and 790 bytes of JSON an item of 5, 12 and 40 attributes.  Needs AWS_ENDPOINT_URL_DYNAMODB (tests/harness/fixtures.py).
"""
import os
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "harness"))
import fixtures  # noqa: E402


def item(i, shape):
    """Item i of SHAPE attributes."""
    it = {"PK": "K#%05d" % i, "SK": "S", "name": "customer %d" % i,
          "total": Decimal(i % 1000), "pad": "p" * 100}
    for a in range(shape - 5):
        k = "a%02d" % a
        r = a % 6
        if r == 0:
            it[k] = "value %d of %d" % (a, i)
        elif r == 1:
            it[k] = Decimal(i * 7 + a)
        elif r == 2:
            it[k] = Decimal("%d.%02d" % (i % 500, a))
        elif r == 3:
            it[k] = (i + a) % 2 == 0
        elif r == 4:
            it[k] = ["x%d" % a, Decimal(a)]
        else:
            it[k] = {"city": "c%d" % (i % 97), "zip": Decimal(10000 + a)}
    return it


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    n = int(argv[0])
    client = fixtures.connect()
    for shape in (int(s) for s in argv[1:]):
        table = "Warm%d" % shape
        fixtures.create_table(client, table, "PK", "SK")
        fixtures.put_items(client, table, [item(i, shape) for i in range(n)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
