#!/usr/bin/env bash
# Writes at batch speed: a COMMIT's (and a statement's) calls several at a
# time, and what a failure part way says of every write, checked write by
# write with boto3; interrupts; the progress line and the hint of 1,000
# single-row statements in a row, under a terminal.  TAP lines; see
# tests/txn/batch_writes.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
PY=/usr/bin/python3
if ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - batch writes: # SKIP $PY cannot load SQLite extensions"
  echo "1..1"
  exit 0
fi
if ! command -v script >/dev/null 2>&1; then
  echo "ok 1 - batch writes: # SKIP no script(1) for a terminal"
  echo "1..1"
  exit 0
fi
# with SANITIZE=1 the extension is built with ASan: preload its runtime
# into python3 and sqlite3, as tests/suites/50-python.sh does
. tests/harness/sanitize.sh
san_export
exec "$PY" tests/txn/batch_writes.py "$@"
