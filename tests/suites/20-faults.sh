#!/usr/bin/env bash
# Fault-injection suite: throttling, 500, 503, connection resets, truncated
# bodies, bad x-amz-crc32 and delays beyond the timeout, injected by
# tests/faults/proxy.py between the extension and DynamoDB Local, on
# GetItem, a multi-page Query and Scan, BatchGetItem (UnprocessedKeys),
# PutItem, UpdateItem, DeleteItem, BatchWriteItem (UnprocessedItems) and
# TransactWriteItems.  TAP lines, then the fault x operation table; see
# tests/faults/faults.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
exec python3 tests/faults/faults.py "$@"
