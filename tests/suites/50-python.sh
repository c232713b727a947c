#!/usr/bin/env bash
# Writes keep their meaning from Python: Debian's /usr/bin/python3 with its
# sqlite3 module's default isolation level (every DML in a transaction),
# boto3 as the oracle, and writes whose first answer is lost (fault proxy).
# TAP lines; see tests/txn/python_txn.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
PY=/usr/bin/python3
if ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - python: # SKIP $PY cannot load SQLite extensions"
  echo "1..1"
  exit 0
fi
# With SANITIZE=1 (make test SANITIZE=1) build/libddb.a and the extension
# are built with ASan and UBSan: the C program is linked with them too, and
# python3, which is not, gets the ASan runtime preloaded, as mk/sanitize.mk
# does for sqlite3 (leak checking off: the interpreter's own allocations):
# tests/harness/sanitize.sh.
. tests/harness/sanitize.sh
san_export
# the C API's part: tests/txn/api_retry.c against the library's sources
mkdir -p .test-tmp/txn
API_RETRY="$ROOT/.test-tmp/txn/api_retry"
build_driver "$API_RETRY" tests/txn/api_retry.c
export API_RETRY
exec "$PY" tests/txn/python_txn.py "$@"
