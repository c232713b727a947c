#!/usr/bin/env python3
"""Load the benchmark's table into DynamoDB (Local): bench/run.sh calls it.

    python3 bench/load.py TABLE N

(Re)creates TABLE (PK S, SK S) with N items PK = K#00000.., SK = S, a name,
a number and ~100 bytes of padding (~160 bytes of JSON each).  Needs
AWS_ENDPOINT_URL_DYNAMODB, like tests/harness/fixtures.py, whose helpers it uses.
"""
import os
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "harness"))
import fixtures  # noqa: E402


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    table, n = argv[0], int(argv[1])
    client = fixtures.connect()
    fixtures.create_table(client, table, "PK", "SK")
    items = [{"PK": "K#%05d" % i, "SK": "S", "name": "customer %d" % i,
              "total": Decimal(i % 1000), "pad": "p" * 100}
             for i in range(n)]
    fixtures.put_items(client, table, items)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
