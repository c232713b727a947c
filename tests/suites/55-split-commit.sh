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
# into python3 and sqlite3, as tests/suites/50-python.sh does
if [ "${SANITIZE:-}" = 1 ]; then
  LD_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so)${LD_PRELOAD:+ $LD_PRELOAD}"
  ASAN_OPTIONS="detect_leaks=0:handle_segv=0"
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  export LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS
fi
exec "$PY" tests/txn/split_commit.py "$@"
