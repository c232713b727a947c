#!/usr/bin/env bash
# A COMMIT cut into several TransactWriteItems never splits a key move, and
# its error says which writes were applied when it fails part way: the
# fault proxy fails the second call for ever (throttled, 503, kill -9 and
# SIGINT of the sqlite3 shell), boto3 checks where the item is.  TAP lines;
# see tests/txn/split_commit.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
PY=/usr/bin/python3
if ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - split commit: # SKIP $PY cannot load SQLite extensions"
  echo "1..1"
  exit 0
fi
# with SANITIZE=1 the extension is built with ASan: preload its runtime
# into python3 and sqlite3 (tests/harness/sanitize.sh)
. tests/harness/sanitize.sh
san_export
exec "$PY" tests/txn/split_commit.py "$@"
