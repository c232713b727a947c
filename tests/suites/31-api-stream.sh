#!/usr/bin/env bash
# libdyndb's parallel reads on cache/'s machinery (tests/api/api_stream.c):
# a parallel Scan through cache/stream.c (every item once, page_size the
# Limit of every request, at most 2 x segments pages held), dyn_batch_get
# through cache/fanout.c (found[i] answers keys[i]).  TAP lines.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
mkdir -p .test-tmp/api
# With SANITIZE=1 build/libddb.a is built with ASan and UBSan: the driver
# is linked with them too (tests/harness/sanitize.sh).
. tests/harness/sanitize.sh
BIN="$ROOT/.test-tmp/api/api_stream.$$"
TABLE="ApiStream_$$"
N=250
cleanup() {
  python3 tests/harness/fixtures.py drop "$TABLE" >/dev/null 2>&1
  rm -f "$BIN"
}
trap cleanup EXIT
if ! build_driver "$BIN" tests/api/api_stream.c; then
  echo "not ok 1 - api stream: build tests/api/api_stream.c"
  echo "1..1"
  exit 1
fi
if ! python3 tests/harness/fixtures.py bulk "$TABLE" "$N" 100 >&2; then
  echo "not ok 1 - api stream: fixtures.py bulk $TABLE $N"
  echo "1..1"
  exit 1
fi
"$BIN" "$AWS_ENDPOINT_URL_DYNAMODB" "$TABLE" "$N"
