#!/usr/bin/env bash
# A COMMIT that writes through several virtual tables: one TransactWriteItems
# for those of one endpoint, region and credentials (nothing written when
# one write fails), a split COMMIT's error naming each write's table, and
# the writes through another endpoint: what went is said.  Debian's
# python3 sqlite3 is the client, the fault proxy fails calls, boto3 checks.
# TAP lines; see tests/txn/multi_commit.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
PY=/usr/bin/python3
if ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - multi-table commit: # SKIP $PY cannot load SQLite extensions"
  echo "1..1"
  exit 0
fi
# with SANITIZE=1 the extension is built with ASan: preload its runtime
# into python3, as tests/suites/50-python.sh does
. tests/harness/sanitize.sh
san_export
exec "$PY" tests/txn/multi_commit.py "$@"
