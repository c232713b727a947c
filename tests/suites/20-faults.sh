#!/usr/bin/env bash
# Fault-injection suite: throttling, 500, 503, connection resets, truncated
# bodies, bad x-amz-crc32 and delays beyond the timeout, injected by
# tests/faults/proxy.py between the extension and DynamoDB Local, on
# GetItem, a multi-page Query and Scan, BatchGetItem (UnprocessedKeys),
# PutItem, UpdateItem, DeleteItem, BatchWriteItem (UnprocessedItems) and
# TransactWriteItems.  TAP lines, then the fault x operation table; see
# tests/faults/faults.py.  Then max_rcu from a statement's first second, as
# the proxy records what the server says each answer consumed
# (tests/faults/rate_check.py).  One TAP stream.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
mkdir -p .test-tmp
OUT=.test-tmp/faults20.$$
rc=0
python3 tests/faults/faults.py "$@" >"$OUT.1" || rc=1
python3 tests/faults/rate_check.py >"$OUT.2" 2>&1 || rc=1
cat "$OUT.1" "$OUT.2" | awk '
  /^1\.\./ { next }
  /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n) }
  { print }
  END { print "1.." n }'
rm -f "$OUT.1" "$OUT.2"
exit $rc
