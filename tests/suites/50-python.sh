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
# does for sqlite3 (leak checking off: the interpreter's own allocations).
SAN_FLAGS=()
if [ "${SANITIZE:-}" = 1 ]; then
  SAN_FLAGS=(-fsanitize=address,undefined)
  LD_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so)${LD_PRELOAD:+ $LD_PRELOAD}"
  ASAN_OPTIONS="detect_leaks=0:handle_segv=0"
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  export LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS
fi
# the C API's part: tests/txn/api_retry.c against the library's sources
mkdir -p .test-tmp/txn
API_RETRY="$ROOT/.test-tmp/txn/api_retry"
rm -f "$API_RETRY"
make -s --no-print-directory build/libddb.a >&2 &&
  ${CC:-cc} -Wall -Wextra "${SAN_FLAGS[@]}" -Iapi -o "$API_RETRY" \
    tests/txn/api_retry.c api/client.c api/item.c api/read.c api/write.c \
    build/libddb.a $(make -s --no-print-directory libs) >&2
export API_RETRY
exec "$PY" tests/txn/python_txn.py "$@"
